//! [`BulkheadCall`]: the future of [`Bulkhead::call`], written by hand.
//!
//! As an `async fn`, the call moved the caller's future into its state and copied the
//! permit's future around it; on a call whose permit is free at once and whose future is
//! ready (the common case) those copies cost more than the semaphore itself (measured in
//! `breaker-bench --bench ratios`, row "async Bulkhead::call vs Bulkhead::call_sync").
//! Here the permit is taken at the first poll, and the caller's future is made and polled in
//! its final place; only a call that has to wait for a permit keeps its [`Acquire`] future
//! (boxed).

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use pin_project_lite::pin_project;

use super::error::BulkheadError;
use super::permit::BulkheadPermit;
use super::semaphore_bulkhead::{Acquire, Bulkhead};

pin_project! {
    /// The future of [`Bulkhead::call`]: takes a permit (waiting up to `maxWaitDuration`),
    /// runs the call, and returns the permit when the call ends or the future is dropped.
    #[must_use = "futures do nothing unless polled"]
    pub struct BulkheadCall<'a, F>
    where
        F: IntoFuture,
    {
        // Dropped first: a call dropped mid-way ends before its permit is returned.
        #[pin]
        running: Option<F::IntoFuture>,
        permit: Option<BulkheadPermit<'a>>,
        // Only a call that has to wait for a permit keeps its `Acquire` (with its timer), boxed,
        // so that the common call's future stays small (it is moved at least once).
        waiting: Option<Box<Acquire<'a>>>,
        input: Option<F>,
        bulkhead: &'a Bulkhead,
    }
}

impl<'a, F: IntoFuture> BulkheadCall<'a, F> {
    #[inline]
    pub(crate) fn new(bulkhead: &'a Bulkhead, input: F) -> Self {
        BulkheadCall {
            running: None,
            permit: None,
            waiting: None,
            input: Some(input),
            bulkhead,
        }
    }
}

impl<'a, F, T, E> Future for BulkheadCall<'a, F>
where
    F: IntoFuture<Output = Result<T, E>>,
{
    type Output = Result<T, BulkheadError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if this.running.is_none() {
            assert!(this.input.is_some(), "a bulkhead call was polled after it completed");
            if this.permit.is_none() {
                // `Acquire` is `Unpin`: polled here first, boxed only if it has to wait.
                let acquired = match this.waiting.as_mut() {
                    Some(waiting) => ready!(Pin::new(&mut **waiting).poll(cx)),
                    None => {
                        let bulkhead = *this.bulkhead;
                        let mut acquire = bulkhead.acquire_permission();
                        match Pin::new(&mut acquire).poll(cx) {
                            Poll::Ready(acquired) => acquired,
                            Poll::Pending => {
                                *this.waiting = Some(Box::new(acquire));
                                return Poll::Pending;
                            }
                        }
                    }
                };
                *this.waiting = None;
                match acquired {
                    Ok(permit) => *this.permit = Some(permit),
                    Err(full) => {
                        *this.input = None;
                        return Poll::Ready(Err(BulkheadError::Full(full)));
                    }
                }
            }
            let input = this
                .input
                .take()
                .expect("a bulkhead call was polled after it completed");
            this.running.set(Some(input.into_future()));
        }
        let running = this.running.as_mut().as_pin_mut().expect("set above");
        let result = ready!(running.poll(cx));
        this.running.set(None);
        if let Some(permit) = this.permit.take() {
            permit.on_complete();
        }
        Poll::Ready(result.map_err(BulkheadError::Inner))
    }
}
