//! Time-limiter events (Resilience4j's `TimeLimiterOnSuccessEvent`,
//! `TimeLimiterOnTimeoutEvent`, `TimeLimiterOnErrorEvent`).

use std::fmt;
use std::sync::Arc;

use crate::publisher::ModuleEvent;
use crate::throwable::Throwable;

/// Resilience4j's `TimeLimiterEvent.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeLimiterEventType {
    /// `SUCCESS`: the call returned `Ok` in time.
    Success,
    /// `TIMEOUT`: the call took too long (or failed with an inner [`Timeout`](super::Timeout)).
    Timeout,
    /// `ERROR`: the call returned another error in time.
    Error,
}

impl TimeLimiterEventType {
    /// Resilience4j's name, e.g. `TIMEOUT`.
    pub const fn name(self) -> &'static str {
        match self {
            TimeLimiterEventType::Success => "SUCCESS",
            TimeLimiterEventType::Timeout => "TIMEOUT",
            TimeLimiterEventType::Error => "ERROR",
        }
    }
}

impl fmt::Display for TimeLimiterEventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One event of one time limiter.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeLimiterEvent {
    /// The time limiter's name (`getTimeLimiterName()`).
    pub time_limiter_name: Arc<str>,
    /// What happened.
    pub event_type: TimeLimiterEventType,
    /// `ERROR` only: the call's error (`getThrowable()`).
    pub throwable: Option<Throwable>,
    /// When, in nanoseconds since the Unix epoch, read from the time limiter's clock.
    pub creation_time_nanos: u64,
}

impl TimeLimiterEvent {
    /// The event's type.
    pub fn event_type(&self) -> TimeLimiterEventType {
        self.event_type
    }
}

impl ModuleEvent for TimeLimiterEvent {
    fn instance_name(&self) -> &str {
        &self.time_limiter_name
    }
    fn type_name(&self) -> &'static str {
        self.event_type.name()
    }
}

impl fmt::Display for TimeLimiterEvent {
    /// Resilience4j's `toString()` wording, without the timestamp.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = &self.time_limiter_name;
        match self.event_type {
            TimeLimiterEventType::Success => {
                write!(f, "TimeLimiter '{n}' recorded a successful call.")
            }
            TimeLimiterEventType::Timeout => {
                write!(f, "TimeLimiter '{n}' recorded a timeout exception.")
            }
            TimeLimiterEventType::Error => write!(
                f,
                "TimeLimiter '{n}' recorded an error: '{}'",
                self.throwable.as_ref().map_or("null", |t| t.message())
            ),
        }
    }
}
