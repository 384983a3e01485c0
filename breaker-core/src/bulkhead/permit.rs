//! [`BulkheadPermit`]: one admitted call's permit, returned exactly once.

use super::semaphore_bulkhead::Bulkhead;

/// The permit of one call admitted by a [`Bulkhead`]. Returned exactly once: by
/// [`on_complete`](Self::on_complete) (the call finished: `CALL_FINISHED`), by
/// [`release`](Self::release) (acquired but never run: no event), or when dropped, which
/// counts as finished, whether the call succeeded, failed, panicked or was cancelled (as
/// Resilience4j's decorators complete in `finally`).
#[must_use = "hold the permit while the call runs; dropping it ends the call"]
#[derive(Debug)]
pub struct BulkheadPermit<'a> {
    bulkhead: &'a Bulkhead,
    done: bool,
}

impl<'a> BulkheadPermit<'a> {
    #[inline]
    pub(crate) fn new(bulkhead: &'a Bulkhead) -> Self {
        BulkheadPermit {
            bulkhead,
            done: false,
        }
    }

    /// The call finished (Resilience4j's `onComplete()`): returns the permit, publishes
    /// `CALL_FINISHED`.
    #[inline]
    pub fn on_complete(mut self) {
        self.done = true;
        self.bulkhead.release_one(true);
    }

    /// The call never ran (Resilience4j's `releasePermission()`): returns the permit without
    /// an event.
    #[inline]
    pub fn release(mut self) {
        self.done = true;
        self.bulkhead.release_one(false);
    }

    /// Detaches the permit: it stays taken until [`Bulkhead::on_complete`] or
    /// [`Bulkhead::release_permission`] is called (Resilience4j's manual permission API).
    pub fn forget(mut self) {
        self.done = true;
    }
}

impl Drop for BulkheadPermit<'_> {
    #[inline]
    fn drop(&mut self) {
        if !self.done {
            self.bulkhead.release_one(true);
        }
    }
}
