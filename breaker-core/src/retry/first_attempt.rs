//! The future [`Retry::call`](super::Retry::call) returns: the first attempt polled in place,
//! then, only when that attempt needs a decision, the rest of the call.
//!
//! Written by hand rather than as one `async fn` because the compiler's state machine moved
//! the first attempt's future into its state after building it, and that copy (a wide load
//! of a value just written narrow, which the CPU cannot forward from its store buffer) cost
//! more than the rest of a successful call, measured in `breaker-bench --bench ratios`. Here
//! the attempt's future is built in its final place and polled there.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use pin_project_lite::pin_project;

pin_project! {
    /// A retried call: see [`Retry::call`](super::Retry::call).
    ///
    /// `first_done` decides on the first attempt's outcome: `Ok(output)` ends the call (a
    /// success that needs no decision), `Err(outcome)` hands the outcome and the attempt
    /// factory to `make_rest`, which makes the future that runs the rest of the call. The
    /// first attempt and the rest have a slot each, so that ending the first attempt drops
    /// only its own future.
    pub(crate) struct FirstAttempt<F, Fut, D, M, Rest> {
        // `Some` until the first attempt has ended.
        attempt: Option<F>,
        first_done: D,
        make_rest: Option<M>,
        #[pin]
        first: Option<Fut>,
        #[pin]
        rest: Option<Rest>,
    }
}

impl<F, Fut, D, M, Rest> FirstAttempt<F, Fut, D, M, Rest> {
    pub(crate) fn new(attempt: F, first_done: D, make_rest: M) -> Self {
        FirstAttempt {
            attempt: Some(attempt),
            first_done,
            make_rest: Some(make_rest),
            first: None,
            rest: None,
        }
    }
}

impl<F, Fut, D, M, Rest, O, Out> Future for FirstAttempt<F, Fut, D, M, Rest>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = O>,
    D: FnMut(O) -> Result<Out, O>,
    M: FnOnce(F, O) -> Rest,
    Rest: Future<Output = Out>,
{
    type Output = Out;

    // Inlined into the caller's poll so that a first-attempt success keeps its output in
    // registers.
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Out> {
        let mut this = self.project();
        if let Some(attempt) = this.attempt.as_mut() {
            if this.first.is_none() {
                // Made at the first poll, in its final place: a future is lazy.
                this.first.set(Some(attempt()));
            }
            let first = this.first.as_mut().as_pin_mut().expect("set just above");
            let outcome = ready!(first.poll(cx));
            this.first.set(None);
            match (this.first_done)(outcome) {
                Ok(out) => {
                    *this.attempt = None;
                    return Poll::Ready(out);
                }
                Err(outcome) => {
                    let attempt = this.attempt.take().expect("checked above");
                    let make_rest = this.make_rest.take().expect("taken once");
                    this.rest.set(Some(make_rest(attempt, outcome)));
                }
            }
        }
        this.rest
            .as_pin_mut()
            .expect("a retried call was polled after it completed")
            .poll(cx)
    }
}
