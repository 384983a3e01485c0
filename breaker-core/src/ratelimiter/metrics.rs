//! Rate-limiter metrics: Resilience4j's `RateLimiter.Metrics` and
//! `AtomicRateLimiter.AtomicRateLimiterMetrics`.

/// A rate limiter's metrics, computed for the current time without reserving anything
/// (Resilience4j's `getDetailedMetrics()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimiterMetrics {
    /// `getAvailablePermissions()`: permissions left in the current cycle after the refresh;
    /// negative while permits of later cycles are reserved.
    pub available_permissions: i32,
    /// `getNumberOfWaitingThreads()`: calls waiting for a reserved permit right now.
    pub number_of_waiting_threads: u32,
    /// `getNanosToWait()`: how long one more permit would wait now, in ns.
    pub nanos_to_wait: i64,
    /// `getCycle()`: the current cycle, counted from the limiter's creation.
    pub cycle: i64,
}
