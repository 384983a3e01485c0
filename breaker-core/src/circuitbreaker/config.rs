//! `CircuitBreakerConfig`: every Resilience4j circuit-breaker setting, its default and its
//! validation.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::classify::{AnyPredicate, ErrorCatalog, Outcome};
use crate::clock::{Clock, SystemClock};
use crate::instance::InstanceSettings;
use crate::interval::IntervalFunction;
use crate::state::State;

/// The kind of sliding window that aggregates outcomes in CLOSED and METRICS_ONLY
/// (Resilience4j's `slidingWindowType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SlidingWindowType {
    /// The last `slidingWindowSize` calls.
    #[default]
    CountBased,
    /// The calls that completed in the last `slidingWindowSize` whole epoch seconds.
    TimeBased,
}

impl SlidingWindowType {
    /// `COUNT_BASED` or `TIME_BASED`.
    pub const fn name(self) -> &'static str {
        match self {
            SlidingWindowType::CountBased => "COUNT_BASED",
            SlidingWindowType::TimeBased => "TIME_BASED",
        }
    }
}

impl fmt::Display for SlidingWindowType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SlidingWindowType {
    type Err = String;
    /// Parses `COUNT_BASED` / `TIME_BASED` leniently (case and `-`/`_` ignored), as Spring does.
    fn from_str(s: &str) -> Result<Self, String> {
        let folded: String = s
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match folded.as_str() {
            "countbased" => Ok(SlidingWindowType::CountBased),
            "timebased" => Ok(SlidingWindowType::TimeBased),
            _ => Err(format!(
                "'{s}' is not a sliding window type; expected COUNT_BASED or TIME_BASED"
            )),
        }
    }
}

/// A duration that may be negative, so that a builder fed from a config file can reject a
/// negative value with Resilience4j's message instead of failing to represent it.
///
/// Build it from a [`Duration`] or with [`SignedDuration::from_millis`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SignedDuration {
    nanos: i128,
}

impl SignedDuration {
    /// `millis` milliseconds (negative allowed).
    pub const fn from_millis(millis: i64) -> Self {
        SignedDuration {
            nanos: millis as i128 * 1_000_000,
        }
    }
    /// `nanos` nanoseconds (negative allowed).
    pub const fn from_nanos(nanos: i128) -> Self {
        SignedDuration { nanos }
    }
    /// Whole milliseconds, rounded towards negative infinity (Java's `Duration.toMillis()`).
    pub fn as_millis_floor(self) -> i128 {
        self.nanos.div_euclid(1_000_000)
    }
    /// Nanoseconds.
    pub fn as_nanos(self) -> i128 {
        self.nanos
    }
    pub(crate) fn to_duration(self) -> Duration {
        let n = self.nanos.clamp(0, u64::MAX as i128) as u64;
        Duration::from_nanos(n)
    }
}

impl From<Duration> for SignedDuration {
    fn from(d: Duration) -> Self {
        SignedDuration {
            nanos: d.as_nanos().min(i128::MAX as u128) as i128,
        }
    }
}

/// The configuration of one circuit breaker: Resilience4j's `CircuitBreakerConfig`.
///
/// Immutable and cheap to clone. Build one with [`CircuitBreakerConfig::builder`] or start
/// from [`CircuitBreakerConfig::default`] (Resilience4j's `ofDefaults()`).
#[derive(Clone)]
pub struct CircuitBreakerConfig {
    pub(crate) failure_rate_threshold: f32,
    pub(crate) slow_call_rate_threshold: f32,
    pub(crate) slow_call_duration_threshold: Duration,
    pub(crate) permitted_number_of_calls_in_half_open_state: u32,
    pub(crate) max_wait_duration_in_half_open_state: Duration,
    pub(crate) transition_to_state_after_wait_duration: State,
    pub(crate) sliding_window_type: SlidingWindowType,
    pub(crate) sliding_window_size: u32,
    pub(crate) minimum_number_of_calls: u32,
    pub(crate) wait_interval_function_in_open_state: IntervalFunction,
    pub(crate) automatic_transition_from_open_to_half_open_enabled: bool,
    pub(crate) initial_state: State,
    pub(crate) record_exceptions: Vec<String>,
    pub(crate) ignore_exceptions: Vec<String>,
    /// `recordExceptions` / `ignoreExceptions` were given (an empty list counts).
    pub(crate) record_exceptions_configured: bool,
    pub(crate) ignore_exceptions_configured: bool,
    pub(crate) record_exception: Option<AnyPredicate>,
    pub(crate) ignore_exception: Option<AnyPredicate>,
    pub(crate) record_result: Option<AnyPredicate>,
    pub(crate) error_catalog: ErrorCatalog,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) exact_resilience4j: bool,
    pub(crate) instance: InstanceSettings,
}

/// Resilience4j's defaults.
pub mod defaults {
    /// `DEFAULT_FAILURE_RATE_THRESHOLD`: 50 %.
    pub const FAILURE_RATE_THRESHOLD: f32 = 50.0;
    /// `DEFAULT_SLOW_CALL_RATE_THRESHOLD`: 100 %.
    pub const SLOW_CALL_RATE_THRESHOLD: f32 = 100.0;
    /// `DEFAULT_SLOW_CALL_DURATION_THRESHOLD`: 60 s, in ms.
    pub const SLOW_CALL_DURATION_THRESHOLD_MILLIS: u64 = 60_000;
    /// `DEFAULT_PERMITTED_CALLS_IN_HALF_OPEN_STATE`: 10 calls.
    pub const PERMITTED_NUMBER_OF_CALLS_IN_HALF_OPEN_STATE: u32 = 10;
    /// `DEFAULT_SLIDING_WINDOW_SIZE`: 100 calls.
    pub const SLIDING_WINDOW_SIZE: u32 = 100;
    /// `DEFAULT_MINIMUM_NUMBER_OF_CALLS`: 100 calls.
    pub const MINIMUM_NUMBER_OF_CALLS: u32 = 100;
    /// `DEFAULT_WAIT_DURATION_IN_OPEN_STATE`: 60 s, in ms.
    pub const WAIT_DURATION_IN_OPEN_STATE_MILLIS: u64 = 60_000;
    /// `DEFAULT_WAIT_DURATION_IN_HALF_OPEN_STATE`: 0 ms, no limit.
    pub const MAX_WAIT_DURATION_IN_HALF_OPEN_STATE_MILLIS: u64 = 0;
}

impl Default for CircuitBreakerConfig {
    /// Resilience4j's `CircuitBreakerConfig.ofDefaults()`: 50 %, 100 %, 60 s, 10, 0, OPEN,
    /// COUNT_BASED, 100, 100, 60 s, no automatic transition, CLOSED, every error recorded.
    fn default() -> Self {
        CircuitBreakerConfig {
            failure_rate_threshold: defaults::FAILURE_RATE_THRESHOLD,
            slow_call_rate_threshold: defaults::SLOW_CALL_RATE_THRESHOLD,
            slow_call_duration_threshold: Duration::from_millis(
                defaults::SLOW_CALL_DURATION_THRESHOLD_MILLIS,
            ),
            permitted_number_of_calls_in_half_open_state:
                defaults::PERMITTED_NUMBER_OF_CALLS_IN_HALF_OPEN_STATE,
            max_wait_duration_in_half_open_state: Duration::ZERO,
            transition_to_state_after_wait_duration: State::Open,
            sliding_window_type: SlidingWindowType::CountBased,
            sliding_window_size: defaults::SLIDING_WINDOW_SIZE,
            minimum_number_of_calls: defaults::MINIMUM_NUMBER_OF_CALLS,
            wait_interval_function_in_open_state: IntervalFunction::Constant {
                interval_millis: defaults::WAIT_DURATION_IN_OPEN_STATE_MILLIS,
            },
            automatic_transition_from_open_to_half_open_enabled: false,
            initial_state: State::Closed,
            record_exceptions: Vec::new(),
            ignore_exceptions: Vec::new(),
            record_exceptions_configured: false,
            ignore_exceptions_configured: false,
            record_exception: None,
            ignore_exception: None,
            record_result: None,
            error_catalog: ErrorCatalog::new(),
            clock: SystemClock::shared(),
            exact_resilience4j: false,
            instance: InstanceSettings::default(),
        }
    }
}

impl CircuitBreakerConfig {
    /// `failureRateThreshold`, percent in `(0, 100]`: the breaker opens when the failure rate
    /// is at or above it.
    pub fn failure_rate_threshold(&self) -> f32 {
        self.failure_rate_threshold
    }
    /// `slowCallRateThreshold`, percent in `(0, 100]`: the breaker opens when the share of
    /// slow calls is at or above it.
    pub fn slow_call_rate_threshold(&self) -> f32 {
        self.slow_call_rate_threshold
    }
    /// `slowCallDurationThreshold`: a call lasting strictly longer is slow.
    pub fn slow_call_duration_threshold(&self) -> Duration {
        self.slow_call_duration_threshold
    }
    /// `permittedNumberOfCallsInHalfOpenState`: trial calls admitted in HALF_OPEN (>= 1).
    pub fn permitted_number_of_calls_in_half_open_state(&self) -> u32 {
        self.permitted_number_of_calls_in_half_open_state
    }
    /// `maxWaitDurationInHalfOpenState`: after this long in HALF_OPEN the breaker moves to
    /// [`Self::transition_to_state_after_wait_duration`]; zero (the default) means no limit.
    pub fn max_wait_duration_in_half_open_state(&self) -> Duration {
        self.max_wait_duration_in_half_open_state
    }
    /// `transitionToStateAfterWaitDuration`: OPEN (default) or CLOSED.
    pub fn transition_to_state_after_wait_duration(&self) -> State {
        self.transition_to_state_after_wait_duration
    }
    /// `slidingWindowType`.
    pub fn sliding_window_type(&self) -> SlidingWindowType {
        self.sliding_window_type
    }
    /// `slidingWindowSize`: calls (COUNT_BASED) or seconds (TIME_BASED), >= 1.
    pub fn sliding_window_size(&self) -> u32 {
        self.sliding_window_size
    }
    /// `minimumNumberOfCalls` as configured (>= 1). A COUNT_BASED window uses
    /// `min(minimumNumberOfCalls, slidingWindowSize)`; a TIME_BASED one uses it unchanged.
    pub fn minimum_number_of_calls(&self) -> u32 {
        self.minimum_number_of_calls
    }
    /// `waitIntervalFunctionInOpenState` (set by `waitDurationInOpenState` for a constant wait).
    pub fn wait_interval_function_in_open_state(&self) -> &IntervalFunction {
        &self.wait_interval_function_in_open_state
    }
    /// The wait of the first OPEN state, in ms (`waitDurationInOpenState` for a constant wait).
    pub fn wait_duration_in_open_state(&self) -> Duration {
        Duration::from_millis(self.wait_interval_function_in_open_state.wait_millis(1))
    }
    /// `automaticTransitionFromOpenToHalfOpenEnabled`.
    pub fn automatic_transition_from_open_to_half_open_enabled(&self) -> bool {
        self.automatic_transition_from_open_to_half_open_enabled
    }
    /// `initialState`: the state a new breaker starts in (default CLOSED).
    pub fn initial_state(&self) -> State {
        self.initial_state
    }
    /// `recordExceptions`: names of errors recorded as failures. When non-empty, errors that
    /// match none of them (nor `recordException`) count as successes.
    pub fn record_exceptions(&self) -> &[String] {
        &self.record_exceptions
    }
    /// `ignoreExceptions`: names of errors that are neither failures nor successes.
    pub fn ignore_exceptions(&self) -> &[String] {
        &self.ignore_exceptions
    }
    /// Whether `recordExceptions` was given, an empty list included (`breaker check` shows
    /// `null` when it was not, `[]` for an empty one).
    pub fn record_exceptions_configured(&self) -> bool {
        self.record_exceptions_configured
    }
    /// Whether `ignoreExceptions` was given, an empty list included.
    pub fn ignore_exceptions_configured(&self) -> bool {
        self.ignore_exceptions_configured
    }
    /// The settings beside the state machine: event buffer size, health indicator, and the
    /// Java-only settings a Spring file may carry.
    pub fn instance_settings(&self) -> &InstanceSettings {
        &self.instance
    }
    /// The catalog that binds exception names to application errors.
    pub fn error_catalog(&self) -> &ErrorCatalog {
        &self.error_catalog
    }
    /// The clock of the OPEN deadline, time-based window and call durations.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }
    /// Exact Resilience4j mode (default `false`): HALF_OPEN follows Resilience4j's rule for
    /// late calls. See [`CircuitBreakerConfigBuilder::exact_resilience4j`](crate::CircuitBreakerConfigBuilder::exact_resilience4j).
    pub fn exact_resilience4j(&self) -> bool {
        self.exact_resilience4j
    }

    /// Classifies an error as Resilience4j's `onError` does: ignored if it matches the ignore
    /// predicate, else a failure if it matches the record predicate (every error when no
    /// record setting is given), else a success.
    pub fn classify_error(&self, error: &dyn Any) -> Outcome {
        let ignored = self.ignore_exception.as_ref().is_some_and(|p| p(error))
            || (!self.ignore_exceptions.is_empty()
                && self
                    .error_catalog
                    .matches_any(&self.ignore_exceptions, error));
        if ignored {
            return Outcome::Ignored;
        }
        let has_record = self.record_exception.is_some() || !self.record_exceptions.is_empty();
        let recorded = !has_record
            || self.record_exception.as_ref().is_some_and(|p| p(error))
            || self
                .error_catalog
                .matches_any(&self.record_exceptions, error);
        if recorded {
            Outcome::Failure
        } else {
            Outcome::Success
        }
    }

    /// Classifies a successful result with `recordResult`: a failure if the predicate
    /// accepts it, else a success.
    pub fn classify_result(&self, result: &dyn Any) -> Outcome {
        match &self.record_result {
            Some(p) if p(result) => Outcome::Failure,
            _ => Outcome::Success,
        }
    }

    /// Whether a `recordResult` predicate is configured.
    pub fn has_record_result(&self) -> bool {
        self.record_result.is_some()
    }
}

impl fmt::Debug for CircuitBreakerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreakerConfig")
            .field("failure_rate_threshold", &self.failure_rate_threshold)
            .field("slow_call_rate_threshold", &self.slow_call_rate_threshold)
            .field(
                "slow_call_duration_threshold",
                &self.slow_call_duration_threshold,
            )
            .field(
                "permitted_number_of_calls_in_half_open_state",
                &self.permitted_number_of_calls_in_half_open_state,
            )
            .field(
                "max_wait_duration_in_half_open_state",
                &self.max_wait_duration_in_half_open_state,
            )
            .field(
                "transition_to_state_after_wait_duration",
                &self.transition_to_state_after_wait_duration,
            )
            .field("sliding_window_type", &self.sliding_window_type)
            .field("sliding_window_size", &self.sliding_window_size)
            .field("minimum_number_of_calls", &self.minimum_number_of_calls)
            .field(
                "wait_interval_function_in_open_state",
                &self.wait_interval_function_in_open_state,
            )
            .field(
                "automatic_transition_from_open_to_half_open_enabled",
                &self.automatic_transition_from_open_to_half_open_enabled,
            )
            .field("initial_state", &self.initial_state)
            .field("record_exceptions", &self.record_exceptions)
            .field("ignore_exceptions", &self.ignore_exceptions)
            .field("record_exception", &self.record_exception.is_some())
            .field("ignore_exception", &self.ignore_exception.is_some())
            .field("record_result", &self.record_result.is_some())
            .field("exact_resilience4j", &self.exact_resilience4j)
            .field("instance_settings", &self.instance)
            .finish_non_exhaustive()
    }
}

/// An exception-name list without repeats, first occurrence kept (Java's `Set`s of
/// classes); also used by the retry config.
pub(crate) fn dedup(mut v: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    v.retain(|s| seen.insert(s.clone()));
    v
}

#[cfg(test)]
mod tests;
