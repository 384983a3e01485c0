//! [`RateLimiterCall`]: the future of [`RateLimiter::call`], written by hand.
//!
//! As an `async fn`, the call moved the caller's future into its state and copied the
//! permission's future around it; on a call whose permit is there at once and whose future
//! is ready (the common case) those copies, wide loads of values just written narrow, cost
//! more than the limiter's own compare-and-swap (measured in `breaker-bench --bench ratios`,
//! row "async RateLimiter::call vs RateLimiter::call_sync"). Here the permission's future
//! and the caller's future are each polled in their final place.

use std::any::Any;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use pin_project_lite::pin_project;

use super::error::RateLimiterError;
use super::limiter::{AcquirePermission, RateLimiter};

pin_project! {
    /// The future of [`RateLimiter::call`] and
    /// [`call_with_permits`](RateLimiter::call_with_permits): acquires the permits (waiting
    /// up to `timeoutDuration`), runs the call, then hands its outcome to
    /// `drainPermissionsOnResult`.
    #[must_use = "futures do nothing unless polled"]
    pub struct RateLimiterCall<'a, F>
    where
        F: IntoFuture,
    {
        #[pin]
        running: Option<F::IntoFuture>,
        // `Some` until the permits are acquired (or refused).
        acquire: Option<AcquirePermission<'a>>,
        input: Option<F>,
        limiter: &'a RateLimiter,
    }
}

impl<'a, F: IntoFuture> RateLimiterCall<'a, F> {
    #[inline]
    pub(crate) fn new(limiter: &'a RateLimiter, permits: u32, input: F) -> Self {
        RateLimiterCall {
            running: None,
            acquire: Some(limiter.acquire_permission(permits)),
            input: Some(input),
            limiter,
        }
    }
}

impl<F, T, E> Future for RateLimiterCall<'_, F>
where
    F: IntoFuture<Output = Result<T, E>>,
    T: Any,
    E: Any,
{
    type Output = Result<T, RateLimiterError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let Some(acquire) = this.acquire.as_mut() {
            let acquired = ready!(Pin::new(acquire).poll(cx));
            *this.acquire = None;
            let input = this
                .input
                .take()
                .expect("a rate-limited call was polled after it completed");
            if let Err(refused) = acquired {
                return Poll::Ready(Err(RateLimiterError::NotPermitted(refused)));
            }
            this.running.set(Some(input.into_future()));
        }
        let running = this
            .running
            .as_mut()
            .as_pin_mut()
            .expect("a rate-limited call was polled after it completed");
        let result = ready!(running.poll(cx));
        this.running.set(None);
        match &result {
            Ok(v) => this.limiter.on_result(v),
            Err(e) => this.limiter.on_error(e),
        }
        Poll::Ready(result.map_err(RateLimiterError::Inner))
    }
}
