//! Errors returned by the core.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::state::State;

/// A setting out of its allowed range, found by
/// [`CircuitBreakerConfigBuilder::build`](crate::CircuitBreakerConfigBuilder::build).
///
/// `Display` prints Resilience4j's `IllegalArgumentException` message verbatim
/// (e.g. `failureRateThreshold must be greater than 0 and lower than 100, but was 0.0`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    setting: &'static str,
    value: String,
    allowed: &'static str,
    message: String,
    exception: &'static str,
}

impl ConfigError {
    pub(crate) fn new(
        setting: &'static str,
        value: String,
        allowed: &'static str,
        message: String,
    ) -> Self {
        ConfigError {
            setting,
            value,
            allowed,
            message,
            exception: "IllegalArgumentException",
        }
    }
    /// The same error, reported by Resilience4j as `exception` (a simple class name such as
    /// `NullPointerException`) instead of `IllegalArgumentException`.
    pub(crate) fn with_exception(mut self, exception: &'static str) -> Self {
        self.exception = exception;
        self
    }
    /// Rejects a count above Java's `int` range (`2147483647`), which a Resilience4j setter
    /// cannot even be given: `<setting> must be at most 2147483647, but was <value>`.
    pub(crate) fn check_java_int(
        setting: &'static str,
        value: i64,
        allowed: &'static str,
    ) -> Result<(), ConfigError> {
        if value > i64::from(i32::MAX) {
            return Err(ConfigError::new(
                setting,
                value.to_string(),
                allowed,
                format!("{setting} must be at most 2147483647, but was {value}"),
            ));
        }
        Ok(())
    }
    /// The Resilience4j property name, e.g. `failureRateThreshold`.
    pub fn setting(&self) -> &'static str {
        self.setting
    }
    /// The rejected value as text (durations with their unit).
    pub fn value(&self) -> &str {
        &self.value
    }
    /// What is allowed, e.g. `greater than 0 and at most 100 (percent)`.
    pub fn allowed(&self) -> &'static str {
        self.allowed
    }
    /// Resilience4j's message.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// The simple name of the exception Resilience4j throws: `IllegalArgumentException` for
    /// most settings, `NullPointerException` for a missing (`null`) value.
    pub fn exception(&self) -> &'static str {
        self.exception
    }
}

/// A call was rejected: Resilience4j's `CallNotPermittedException`.
///
/// `Display` prints Resilience4j's message: `CircuitBreaker 'name' is OPEN and does not
/// permit further calls`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallNotPermitted {
    /// The breaker's name, copied by value when short (see [`crate::names::Name`]): a
    /// rejection touches no reference count, and holds no memory once dropped.
    pub(crate) name: crate::names::Name,
    pub(crate) state: State,
    /// When the rejecting state may admit a call (epoch ns): the OPEN deadline or the
    /// HALF_OPEN timer; 0 when unknown. Kept raw so a rejection does no arithmetic.
    pub(crate) until: u64,
    /// When the call was rejected (epoch ns).
    pub(crate) at: u64,
}

impl CallNotPermitted {
    /// The name of the breaker that rejected the call
    /// (`getCausingCircuitBreakerName()`).
    pub fn circuit_breaker_name(&self) -> &str {
        self.name.as_str()
    }
    /// The state that rejected the call: OPEN, HALF_OPEN (no trial permit left) or
    /// FORCED_OPEN.
    pub fn state(&self) -> State {
        self.state
    }
    /// How long until the breaker admits a trial call, for a `Retry-After` header: the rest
    /// of the OPEN wait (rounded up to whole ms, plus the 1 ms the strict deadline needs), the
    /// rest of `maxWaitDurationInHalfOpenState` in HALF_OPEN when set; `None` when unknown
    /// (HALF_OPEN without a limit waits for trial calls to finish; FORCED_OPEN waits for a
    /// manual transition).
    pub fn retry_after(&self) -> Option<Duration> {
        const NANOS_PER_MILLI: u64 = 1_000_000;
        match self.state {
            State::Open => {
                let wait_ms = self.until.saturating_sub(self.at).div_ceil(NANOS_PER_MILLI) + 1;
                Some(Duration::from_millis(wait_ms))
            }
            State::HalfOpen if self.until != 0 => {
                Some(Duration::from_nanos(self.until.saturating_sub(self.at)))
            }
            _ => None,
        }
    }
}

impl fmt::Display for CallNotPermitted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CircuitBreaker '{}' is {} and does not permit further calls",
            self.name, self.state
        )
    }
}

impl std::error::Error for CallNotPermitted {}

/// A manual transition that Resilience4j's transition table forbids
/// (`IllegalStateTransitionException`): CLOSED -> HALF_OPEN, METRICS_ONLY -> OPEN and
/// METRICS_ONLY -> HALF_OPEN. The breaker is left unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CircuitBreaker '{name}' tried an illegal state transition from {from} to {to}")]
pub struct IllegalStateTransition {
    /// The breaker's name.
    pub name: Arc<str>,
    /// The state it was in.
    pub from: State,
    /// The state it was asked to move to.
    pub to: State,
}

/// The error of a protected call: either the breaker rejected it, or the call itself failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError<E> {
    /// The breaker did not permit the call; the protected code did not run.
    NotPermitted(CallNotPermitted),
    /// The protected code ran and returned this error.
    Inner(E),
}

impl<E> CallError<E> {
    /// The call's own error, or `None` when the call was not permitted.
    pub fn into_inner(self) -> Option<E> {
        match self {
            CallError::Inner(e) => Some(e),
            CallError::NotPermitted(_) => None,
        }
    }
    /// Whether the breaker rejected the call.
    pub fn is_not_permitted(&self) -> bool {
        matches!(self, CallError::NotPermitted(_))
    }
    /// Converts into the caller's error type, for an `E` that can represent a rejection.
    pub fn flatten(self) -> E
    where
        E: From<CallNotPermitted>,
    {
        match self {
            CallError::Inner(e) => e,
            CallError::NotPermitted(n) => E::from(n),
        }
    }
}

impl<E: fmt::Display> fmt::Display for CallError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::NotPermitted(n) => n.fmt(f),
            CallError::Inner(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for CallError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallError::NotPermitted(n) => Some(n),
            CallError::Inner(e) => Some(e),
        }
    }
}

impl<E> From<CallNotPermitted> for CallError<E> {
    fn from(n: CallNotPermitted) -> Self {
        CallError::NotPermitted(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rejection is built on every rejected call: the name's four words, `until`, `at` and
    /// the state byte (padded to a word), seven words in all, none of them a reference count.
    #[test]
    fn a_rejection_is_seven_words() {
        assert_eq!(std::mem::size_of::<CallNotPermitted>(), 7 * 8);
        assert_eq!(
            std::mem::size_of::<Result<crate::Permit<'static>, CallNotPermitted>>(),
            7 * 8,
            "the result's tag fits in the rejection's spare bytes"
        );
    }
}
