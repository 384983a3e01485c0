//! [`SharedConcurrency`]: the hook through which a store outside the process (the
//! `breaker-redis` crate, issue #29) caps the calls in flight of a semaphore
//! [`Bulkhead`] across every process sharing it.
//!
//! A bulkhead without a store (the default) pays one "is a store attached" load per
//! admitted call and never calls into this module. With a store, a call the bulkhead
//! admits locally is confirmed by the store ([`SharedConcurrency::acquire`]); a refusal
//! hands the local permit back and rejects the call with `BulkheadFullException` at once
//! (it does not wait `maxWaitDuration` for a permit of another process). Every permit
//! returned is reported ([`SharedConcurrency::release`]).

use std::sync::Arc;

use super::semaphore_bulkhead::Bulkhead;

/// A store capping the calls in flight of a [`Bulkhead`] for every process sharing it.
///
/// Implementations must answer within their own stated bound and must answer something:
/// when the store cannot be asked they decide on a local share of the limit themselves.
pub trait SharedConcurrency: Send + Sync + 'static {
    /// Whether one more call of `bulkhead` (whose `maxConcurrentCalls` is the fleet-wide
    /// limit) may run. `true` holds a permit until [`release`](Self::release).
    fn acquire(&self, bulkhead: &Bulkhead) -> bool;

    /// A call confirmed by [`acquire`](Self::acquire) ended. Never waits.
    fn release(&self, bulkhead: &Bulkhead);
}

impl Bulkhead {
    /// Lets `store` cap this bulkhead's calls across processes from now on (see
    /// [`SharedConcurrency`]). A bulkhead has at most one store for its whole life; attach
    /// it before the first call.
    ///
    /// # Errors
    /// `Err(store)` back when a store is already attached.
    pub fn attach_shared_concurrency(
        &self,
        store: Arc<dyn SharedConcurrency>,
    ) -> Result<(), Arc<dyn SharedConcurrency>> {
        self.fleet_cell().set(store)
    }

    /// Whether a store caps this bulkhead's calls across processes.
    pub fn has_shared_concurrency(&self) -> bool {
        self.fleet_cell().get().is_some()
    }
}
