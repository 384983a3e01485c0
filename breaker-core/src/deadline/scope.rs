//! The scope a call tree runs in: one thread-local slot holding the [`Frame`] of the future
//! being polled (its deadline, and the retry whose attempt it is), set by [`Scoped`] around
//! every poll of the future it wraps and restored afterwards. Nothing here depends on a
//! runtime: any executor that polls the future carries its scope.
//!
//! A task spawned from inside a scope does not inherit it (it is polled by the executor,
//! outside the [`Scoped`] wrapper); wrap the spawned future in
//! [`with_deadline_at`](super::with_deadline_at) with [`current`](super::current) to carry it.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::Deadline;

/// The retry whose attempt a future is (for nested-retry detection).
#[derive(Debug, Clone)]
pub(crate) struct RetryMark {
    /// The retries from the outermost in, joined by ` > `.
    pub(crate) chain: Arc<str>,
    /// The worst-case number of calls the chain makes: the product of their `maxAttempts`.
    pub(crate) worst_case_calls: u64,
    /// An enclosing retry (or this one) asked that only the outermost retry retries.
    pub(crate) outermost_only: bool,
}

/// What a future being polled sees of the scope around it.
#[derive(Debug, Default)]
pub(crate) struct Frame {
    pub(crate) deadline: Option<Deadline>,
    pub(crate) retry: Option<RetryMark>,
}

thread_local! {
    static CURRENT: Cell<Option<Arc<Frame>>> = const { Cell::new(None) };
}

/// Runs `f` with the frame of the future being polled on this thread, if any.
#[inline]
pub(crate) fn with_frame<R>(f: impl FnOnce(Option<&Frame>) -> R) -> R {
    CURRENT.with(|slot| {
        let frame = slot.take();
        let r = f(frame.as_deref());
        slot.set(frame);
        r
    })
}

/// Whether any scope (deadline or retry attempt) is around the future being polled.
#[inline]
pub(crate) fn active() -> bool {
    with_frame(|f| f.is_some())
}

/// The frame around the future being polled, shared.
pub(crate) fn current_frame() -> Option<Arc<Frame>> {
    CURRENT.with(|slot| {
        let frame = slot.take();
        let copy = frame.clone();
        slot.set(frame);
        copy
    })
}

/// Puts the previous frame back when a poll ends, also when it unwinds.
struct Restore<'a> {
    slot: &'a mut Option<Arc<Frame>>,
    previous: Option<Arc<Frame>>,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        let previous = self.previous.take();
        *self.slot = CURRENT.with(|c| c.replace(previous));
    }
}

pin_project! {
    /// A future polled inside a [`Frame`]; with no frame, polled as it is.
    #[must_use = "futures do nothing unless polled"]
    pub struct Scoped<F> {
        frame: Option<Arc<Frame>>,
        #[pin]
        inner: F,
    }
}

impl<F> Scoped<F> {
    pub(crate) fn new(frame: Option<Arc<Frame>>, inner: F) -> Self {
        Scoped { frame, inner }
    }
}

impl<F: Future> Future for Scoped<F> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        if this.frame.is_none() {
            return this.inner.poll(cx);
        }
        // Moves this future's frame into the slot for the poll (no reference count
        // changes), and back afterwards.
        let mine = this.frame.take();
        let previous = CURRENT.with(|c| c.replace(mine));
        let _restore = Restore {
            slot: this.frame,
            previous,
        };
        this.inner.poll(cx)
    }
}

impl<F> std::fmt::Debug for Scoped<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scoped")
            .field("frame", &self.frame)
            .finish_non_exhaustive()
    }
}
