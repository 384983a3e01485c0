//! What a retried call fails with: the last attempt's own error, or one of Resilience4j's
//! Retry exceptions.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::throwable::Throwable;

/// The results of a call were exhausted with `failAfterMaxAttempts` on: Resilience4j's
/// `MaxRetriesExceededException`.
///
/// `Display` prints Resilience4j's message: `Retry 'backendA' has exhausted all attempts (3)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Retry '{name}' has exhausted all attempts ({max_attempts})")]
pub struct MaxRetriesExceeded {
    pub(crate) name: Arc<str>,
    pub(crate) max_attempts: u32,
}

impl MaxRetriesExceeded {
    /// The retry's name (`getCausingRetryName()`).
    pub fn causing_retry_name(&self) -> &str {
        &self.name
    }
    /// The retry's `maxAttempts`.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }
    /// Resilience4j's simple class name, `MaxRetriesExceededException`.
    pub const JAVA_CLASS: &'static str = "MaxRetriesExceededException";
}

/// Resilience4j's internal `MaxRetriesExceeded` marker: the `ERROR` event of a call whose
/// results ran out reports it as the last throwable when there is no retried error to
/// report (or always, with `failAfterMaxAttempts`). Never returned to a caller.
pub(crate) fn results_exhausted_marker() -> Throwable {
    Throwable::new(
        "MaxRetriesExceeded",
        "max retries is reached out for the result predicate check",
    )
}

/// Exact-Resilience4j mode only: an exception Resilience4j's retry loop throws over its own
/// wait interval.
///
/// - `IllegalArgumentException: Illegal argument interval: 0 millis is less than 1`: an
///   exponential backoff with a cap whose initial interval is below 1 ms, which Resilience4j
///   checks only when it computes the first wait (the builder rejects it outside exact mode);
/// - `IllegalStateException: Unexpected exception during retry wait interval`: a negative
///   interval after a retried result (Resilience4j's sleep rejects it; outside exact mode a
///   negative interval simply ends the call).
///
/// `Display` prints the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WaitIntervalError {
    pub(crate) exception: &'static str,
    pub(crate) message: String,
}

impl WaitIntervalError {
    pub(crate) fn illegal_interval(message: String) -> Self {
        WaitIntervalError {
            exception: "IllegalArgumentException",
            message,
        }
    }
    pub(crate) fn wait_failed() -> Self {
        WaitIntervalError {
            exception: "IllegalStateException",
            message: "Unexpected exception during retry wait interval".to_string(),
        }
    }
    /// Resilience4j's simple class name: `IllegalArgumentException` or
    /// `IllegalStateException`.
    pub fn exception(&self) -> &'static str {
        self.exception
    }
    /// Resilience4j's message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// The error of a retried call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetryError<E> {
    /// The error of the last attempt, unchanged: a retried error once the attempts ran out,
    /// or an error that is not retried (Resilience4j rethrows both as they are).
    Inner(E),
    /// The results ran out with `failAfterMaxAttempts` on.
    MaxRetriesExceeded(MaxRetriesExceeded),
    /// Exact-Resilience4j mode only; see [`WaitIntervalError`].
    WaitInterval(WaitIntervalError),
}

impl<E> RetryError<E> {
    /// The call's own error, or `None` for the retry's own errors.
    pub fn into_inner(self) -> Option<E> {
        match self {
            RetryError::Inner(e) => Some(e),
            _ => None,
        }
    }
    /// The call's own error, by reference.
    pub fn inner(&self) -> Option<&E> {
        match self {
            RetryError::Inner(e) => Some(e),
            _ => None,
        }
    }
    /// Whether the results ran out with `failAfterMaxAttempts` on.
    pub fn is_max_retries_exceeded(&self) -> bool {
        matches!(self, RetryError::MaxRetriesExceeded(_))
    }
    /// Converts into the caller's error type, for an `E` that can represent the retry's
    /// own errors.
    pub fn flatten(self) -> E
    where
        E: From<MaxRetriesExceeded> + From<WaitIntervalError>,
    {
        match self {
            RetryError::Inner(e) => e,
            RetryError::MaxRetriesExceeded(m) => E::from(m),
            RetryError::WaitInterval(w) => E::from(w),
        }
    }

    /// The error as `&dyn Any`, for the exception predicate and the interval function.
    pub(crate) fn as_any(&self) -> &dyn Any
    where
        E: Any,
    {
        match self {
            RetryError::Inner(e) => e,
            RetryError::MaxRetriesExceeded(m) => m,
            RetryError::WaitInterval(w) => w,
        }
    }

    /// How an event reports this error.
    pub(crate) fn throwable(&self) -> Throwable
    where
        E: fmt::Display,
    {
        match self {
            RetryError::Inner(e) => Throwable::of(e),
            RetryError::MaxRetriesExceeded(m) => {
                Throwable::new(MaxRetriesExceeded::JAVA_CLASS, m.to_string())
            }
            RetryError::WaitInterval(w) => Throwable::new(w.exception, w.message.clone()),
        }
    }
}

impl<E: fmt::Display> fmt::Display for RetryError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryError::Inner(e) => e.fmt(f),
            RetryError::MaxRetriesExceeded(m) => m.fmt(f),
            RetryError::WaitInterval(w) => w.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for RetryError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RetryError::Inner(e) => Some(e),
            RetryError::MaxRetriesExceeded(m) => Some(m),
            RetryError::WaitInterval(w) => Some(w),
        }
    }
}

impl<E> From<MaxRetriesExceeded> for RetryError<E> {
    fn from(m: MaxRetriesExceeded) -> Self {
        RetryError::MaxRetriesExceeded(m)
    }
}
