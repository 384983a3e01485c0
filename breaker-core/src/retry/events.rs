//! Retry events (Resilience4j's `RetryOnRetryEvent`, `RetryOnErrorEvent`,
//! `RetryOnSuccessEvent`, `RetryOnIgnoredErrorEvent`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::java::java_duration_millis;
use crate::publisher::ModuleEvent;
use crate::throwable::Throwable;

/// Resilience4j's `RetryEvent.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetryEventType {
    /// `RETRY`: an attempt failed and another one follows after the wait.
    Retry,
    /// `ERROR`: the call gave up: the attempts ran out, or (Resilience4j's sync loop, and in
    /// exact mode) a negative interval stopped it.
    Error,
    /// `SUCCESS`: the call succeeded after at least one retry. A success at the first
    /// attempt publishes nothing.
    Success,
    /// `IGNORED_ERROR`: an error that is not retried ended the call.
    IgnoredError,
    /// `DEADLINE_EXCEEDED` (breaker's own, not Resilience4j's): the call stopped retrying
    /// because the next wait and attempt would not finish before the deadline in scope
    /// (see [`deadline`](crate::deadline)); it fails with the last attempt's error.
    DeadlineExceeded,
    /// `BUDGET_EXHAUSTED` (breaker's own): the retry budget had no retry left
    /// ([`RetryBudgetConfig`](crate::retry::RetryBudgetConfig)); the call fails with the
    /// last attempt's error.
    BudgetExhausted,
}

impl RetryEventType {
    /// Resilience4j's name, e.g. `IGNORED_ERROR`.
    pub const fn name(self) -> &'static str {
        match self {
            RetryEventType::Retry => "RETRY",
            RetryEventType::Error => "ERROR",
            RetryEventType::Success => "SUCCESS",
            RetryEventType::IgnoredError => "IGNORED_ERROR",
            RetryEventType::DeadlineExceeded => "DEADLINE_EXCEEDED",
            RetryEventType::BudgetExhausted => "BUDGET_EXHAUSTED",
        }
    }
}

impl fmt::Display for RetryEventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One event of one retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryEvent {
    /// The retry's name (`getName()`).
    pub retry_name: Arc<str>,
    /// What happened.
    pub event_type: RetryEventType,
    /// `getNumberOfRetryAttempts()`: the failed attempts of the call so far (1 in the
    /// `RETRY` before the second call); always 0 for `IGNORED_ERROR`.
    pub number_of_retry_attempts: u32,
    /// `getLastThrowable()`: the error of the attempt (`RETRY`, `ERROR`, `IGNORED_ERROR`),
    /// the last retried error (`SUCCESS`, `ERROR` after results ran out), Resilience4j's
    /// `MaxRetriesExceeded` marker when the results ran out with nothing else to report, or
    /// `None` (a retry caused by a result).
    pub last_throwable: Option<Throwable>,
    /// `RETRY` only: the wait before the next attempt (`getWaitInterval()`), whole ms.
    pub wait_interval: Option<Duration>,
    /// When, in nanoseconds since the Unix epoch, read from the retry's clock.
    pub creation_time_nanos: u64,
}

impl RetryEvent {
    /// The event's type.
    pub fn event_type(&self) -> RetryEventType {
        self.event_type
    }
}

impl ModuleEvent for RetryEvent {
    fn instance_name(&self) -> &str {
        &self.retry_name
    }
    fn type_name(&self) -> &'static str {
        self.event_type.name()
    }
}

struct Last<'a>(&'a Option<Throwable>);

impl fmt::Display for Last<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(t) => write!(f, "{}", t.message()),
            None => f.write_str("null"),
        }
    }
}

impl fmt::Display for RetryEvent {
    /// Resilience4j's `toString()` wording, without the timestamp.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = &self.retry_name;
        let attempts = self.number_of_retry_attempts;
        let last = Last(&self.last_throwable);
        match self.event_type {
            RetryEventType::Retry => write!(
                f,
                "Retry '{n}', waiting {} until attempt '{attempts}'. Last attempt failed with exception '{last}'.",
                java_duration_millis(
                    self.wait_interval.unwrap_or_default().as_millis() as i64
                ),
            ),
            RetryEventType::Error => write!(
                f,
                "Retry '{n}' recorded a failed retry attempt. Number of retry attempts: '{attempts}'. Giving up. Last exception was: '{last}'."
            ),
            RetryEventType::Success => write!(
                f,
                "Retry '{n}' recorded a successful retry attempt. Number of retry attempts: '{attempts}', Last exception was: '{last}'."
            ),
            RetryEventType::IgnoredError => write!(
                f,
                "Retry '{n}' recorded an error which has been ignored: '{last}'."
            ),
            RetryEventType::DeadlineExceeded => write!(
                f,
                "Retry '{n}' stopped before the deadline. Number of retry attempts: '{attempts}'. Last exception was: '{last}'."
            ),
            RetryEventType::BudgetExhausted => write!(
                f,
                "Retry '{n}' skipped a retry: its retry budget is spent. Number of retry attempts: '{attempts}'. Last exception was: '{last}'."
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_print_resilience4j_wording() {
        let e = RetryEvent {
            retry_name: "test".into(),
            event_type: RetryEventType::Retry,
            number_of_retry_attempts: 2,
            last_throwable: Some(Throwable::new("IOException", "Bla")),
            wait_interval: Some(Duration::from_millis(1234)),
            creation_time_nanos: 0,
        };
        assert_eq!(
            e.to_string(),
            "Retry 'test', waiting PT1.234S until attempt '2'. Last attempt failed with exception 'Bla'."
        );
        let ignored = RetryEvent {
            event_type: RetryEventType::IgnoredError,
            number_of_retry_attempts: 0,
            last_throwable: None,
            wait_interval: None,
            ..e
        };
        assert_eq!(
            ignored.to_string(),
            "Retry 'test' recorded an error which has been ignored: 'null'."
        );
    }
}
