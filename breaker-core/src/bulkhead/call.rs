//! [`BulkheadCall`]: the future of [`Bulkhead::call`], written by hand.
//!
//! As an `async fn`, the call moved the caller's future into its state and copied the
//! permit's future around it; on a call whose permit is free at once and whose future is
//! ready (the common case) those copies cost more than the semaphore itself (measured in
//! `breaker-bench --bench ratios`, row "async Bulkhead::call vs Bulkhead::call_sync").
//! Here the permit is taken with one compare-and-swap at the first poll, and the caller's
//! future is made and polled in its final place; only a call that finds the bulkhead full
//! builds the waiting [`Acquire`] future.

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
        #[pin]
        acquire: Option<Acquire<'a>>,
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
            acquire: None,
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
        let bulkhead = *this.bulkhead;
        if this.running.is_none() {
            if this.permit.is_none() {
                if this.acquire.is_none() {
                    match bulkhead.try_acquire_now() {
                        Some(permit) => *this.permit = Some(permit),
                        None => this.acquire.set(Some(bulkhead.acquire_permission())),
                    }
                }
                if let Some(acquire) = this.acquire.as_mut().as_pin_mut() {
                    let acquired = ready!(acquire.poll(cx));
                    this.acquire.set(None);
                    match acquired {
                        Ok(permit) => *this.permit = Some(permit),
                        Err(full) => {
                            *this.input = None;
                            return Poll::Ready(Err(BulkheadError::Full(full)));
                        }
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
