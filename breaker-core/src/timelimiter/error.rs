//! What a time-limited call fails with.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The call did not finish within `timeoutDuration`: Resilience4j's
/// `java.util.concurrent.TimeoutException`.
///
/// `Display` prints Resilience4j's message: `TimeLimiter 'backendA' recorded a timeout
/// exception.`
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("TimeLimiter '{name}' recorded a timeout exception.")]
pub struct Timeout {
    pub(crate) name: Arc<str>,
    pub(crate) timeout: Duration,
}

impl Timeout {
    /// The name of the time limiter that gave up.
    pub fn time_limiter_name(&self) -> &str {
        &self.name
    }
    /// The `timeoutDuration` that ran out.
    pub fn timeout_duration(&self) -> Duration {
        self.timeout
    }
    /// Resilience4j's simple class name, `TimeoutException`.
    pub const JAVA_CLASS: &'static str = "TimeoutException";
}

/// The error of a time-limited call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeLimiterError<E> {
    /// The call took longer than `timeoutDuration`.
    Timeout(Timeout),
    /// The call finished in time with this error.
    Inner(E),
}

impl<E> TimeLimiterError<E> {
    /// The call's own error, or `None` for a timeout.
    pub fn into_inner(self) -> Option<E> {
        match self {
            TimeLimiterError::Inner(e) => Some(e),
            TimeLimiterError::Timeout(_) => None,
        }
    }
    /// Whether the call timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, TimeLimiterError::Timeout(_))
    }
    /// Converts into the caller's error type, for an `E` that can represent a timeout.
    pub fn flatten(self) -> E
    where
        E: From<Timeout>,
    {
        match self {
            TimeLimiterError::Inner(e) => e,
            TimeLimiterError::Timeout(t) => E::from(t),
        }
    }
}

impl<E: fmt::Display> fmt::Display for TimeLimiterError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeLimiterError::Timeout(t) => t.fmt(f),
            TimeLimiterError::Inner(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for TimeLimiterError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TimeLimiterError::Timeout(t) => Some(t),
            TimeLimiterError::Inner(e) => Some(e),
        }
    }
}

impl<E> From<Timeout> for TimeLimiterError<E> {
    fn from(t: Timeout) -> Self {
        TimeLimiterError::Timeout(t)
    }
}
