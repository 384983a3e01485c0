//! Rate-limiter events (Resilience4j's `RateLimiterEvent` types).

use std::fmt;

use crate::publisher::ModuleEvent;

/// Resilience4j's `RateLimiterEvent.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateLimiterEventType {
    /// `SUCCESSFUL_ACQUIRE`: permits granted (now, or reserved and waited for).
    SuccessfulAcquire,
    /// `FAILED_ACQUIRE`: permits refused (or a waiting caller gave up).
    FailedAcquire,
    /// `DRAINED`: `drainPermissions()` ran.
    Drained,
}

impl RateLimiterEventType {
    /// Resilience4j's name, e.g. `SUCCESSFUL_ACQUIRE`.
    pub const fn name(self) -> &'static str {
        match self {
            RateLimiterEventType::SuccessfulAcquire => "SUCCESSFUL_ACQUIRE",
            RateLimiterEventType::FailedAcquire => "FAILED_ACQUIRE",
            RateLimiterEventType::Drained => "DRAINED",
        }
    }
}

impl fmt::Display for RateLimiterEventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One event of one rate limiter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimiterEvent {
    /// The limiter's name (`getRateLimiterName()`).
    pub rate_limiter_name: std::sync::Arc<str>,
    /// What happened (`getEventType()`).
    pub event_type: RateLimiterEventType,
    /// `getNumberOfPermits()`: the permits asked for (acquire events). For `DRAINED`, the
    /// permissions drained; in exact Resilience4j mode `min(stored permissions, 0)`, as
    /// Resilience4j reports it.
    pub number_of_permits: i64,
    /// When, in nanoseconds since the Unix epoch, by the limiter's clock
    /// (`getCreationTime()`).
    pub creation_time_nanos: u64,
}

impl fmt::Display for RateLimiterEvent {
    /// Resilience4j's `toString()`, without the creation time.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RateLimiterEvent{{type={}, rateLimiterName='{}'}}",
            self.event_type, self.rate_limiter_name
        )
    }
}

impl ModuleEvent for RateLimiterEvent {
    fn instance_name(&self) -> &str {
        &self.rate_limiter_name
    }
    fn type_name(&self) -> &'static str {
        self.event_type.name()
    }
}
