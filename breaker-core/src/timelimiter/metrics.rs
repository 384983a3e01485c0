//! The time-limiter counters: what Resilience4j's Micrometer binder counts from the events
//! (`resilience4j_timelimiter_calls{kind="successful" | "failed" | "timeout"}`); a Java
//! `TimeLimiter` has no metrics object of its own.

use std::sync::atomic::{AtomicU64, Ordering};

use super::events::TimeLimiterEventType;

/// A time limiter's counters, read with
/// [`TimeLimiter::metrics`](crate::timelimiter::TimeLimiter::metrics). They count calls
/// since the time limiter was created and never go down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TimeLimiterMetrics {
    /// Calls that returned `Ok` in time (`kind="successful"`, `SUCCESS` events).
    pub number_of_successful_calls: u64,
    /// Calls that returned an error in time (`kind="failed"`, `ERROR` events).
    pub number_of_failed_calls: u64,
    /// Calls that timed out (`kind="timeout"`, `TIMEOUT` events).
    pub number_of_timeout_calls: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    successful: AtomicU64,
    failed: AtomicU64,
    timeout: AtomicU64,
}

impl Counters {
    #[inline]
    pub(crate) fn count(&self, kind: TimeLimiterEventType) {
        let c = match kind {
            TimeLimiterEventType::Success => &self.successful,
            TimeLimiterEventType::Error => &self.failed,
            TimeLimiterEventType::Timeout => &self.timeout,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> TimeLimiterMetrics {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        TimeLimiterMetrics {
            number_of_successful_calls: r(&self.successful),
            number_of_failed_calls: r(&self.failed),
            number_of_timeout_calls: r(&self.timeout),
        }
    }
}
