//! The synchronisation primitives of the lock-free code (the circuit breaker's CLOSED path and
//! its window rings, the bulkhead semaphore, the rate-limiter state):
//! `std`'s, or loom's under `--cfg loom` so that the loom models explore every interleaving
//! of the real code.

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{fence, AtomicBool, AtomicU64, AtomicU8, Ordering},
    Arc, Mutex, MutexGuard,
};
#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{fence, AtomicBool, AtomicU64, AtomicU8, Ordering},
    Arc, Mutex, MutexGuard,
};

/// Runs a loom model over every interleaving with up to 3 preemptions (loom's usual bound;
/// unbounded, a three-thread model runs for hours).
#[cfg(all(test, loom))]
pub(crate) fn loom_model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// Locks `m`, ignoring poisoning: every critical section leaves its data consistent before
/// anything that could panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
