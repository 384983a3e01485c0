//! `CircuitBreakerConfig`: every Resilience4j circuit-breaker setting, its default and its
//! validation.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::classify::{predicate, AnyPredicate, ErrorCatalog, Outcome};
use crate::clock::{Clock, SystemClock};
use crate::error::ConfigError;
use crate::instance::InstanceSettings;
use crate::interval::IntervalFunction;
use crate::java::java_float;
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
    fn to_duration(self) -> Duration {
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
    /// A builder starting from Resilience4j's defaults (`CircuitBreakerConfig.custom()`).
    pub fn builder() -> CircuitBreakerConfigBuilder {
        CircuitBreakerConfigBuilder::from_config(&CircuitBreakerConfig::default())
    }

    /// A builder starting from this config (`CircuitBreakerConfig.from(base)`). Setting an
    /// exception list on it replaces the base's list (Resilience4j's Spring layer behaviour;
    /// plain `from(base)` in Java ORs it with the base predicate instead).
    pub fn to_builder(&self) -> CircuitBreakerConfigBuilder {
        CircuitBreakerConfigBuilder::from_config(self)
    }

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
    /// late calls. See [`CircuitBreakerConfigBuilder::exact_resilience4j`].
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

/// Builds a validated [`CircuitBreakerConfig`] (Resilience4j's `CircuitBreakerConfig.Builder`).
///
/// Setters take values as Resilience4j's do (`i32` counts, percent as `f32`, durations that
/// may be negative); [`build`](Self::build) checks them all and returns a [`ConfigError`]
/// naming the setting, the value and the allowed range, with Resilience4j's message.
#[derive(Clone)]
pub struct CircuitBreakerConfigBuilder {
    failure_rate_threshold: f32,
    slow_call_rate_threshold: f32,
    slow_call_duration_threshold: SignedDuration,
    permitted_number_of_calls_in_half_open_state: i64,
    max_wait_duration_in_half_open_state: SignedDuration,
    transition_to_state_after_wait_duration: State,
    sliding_window_type: SlidingWindowType,
    sliding_window_size: i64,
    minimum_number_of_calls: i64,
    wait_duration_in_open_state: Option<SignedDuration>,
    wait_interval_function: IntervalFunction,
    wait_function_set_count: u32,
    automatic_transition_from_open_to_half_open_enabled: bool,
    initial_state: State,
    record_exceptions: Vec<String>,
    ignore_exceptions: Vec<String>,
    record_exceptions_configured: bool,
    ignore_exceptions_configured: bool,
    record_exception: Option<AnyPredicate>,
    ignore_exception: Option<AnyPredicate>,
    record_result: Option<AnyPredicate>,
    error_catalog: ErrorCatalog,
    clock: Arc<dyn Clock>,
    exact_resilience4j: bool,
    instance: InstanceSettings,
}

impl CircuitBreakerConfigBuilder {
    fn from_config(c: &CircuitBreakerConfig) -> Self {
        CircuitBreakerConfigBuilder {
            failure_rate_threshold: c.failure_rate_threshold,
            slow_call_rate_threshold: c.slow_call_rate_threshold,
            slow_call_duration_threshold: c.slow_call_duration_threshold.into(),
            permitted_number_of_calls_in_half_open_state: c
                .permitted_number_of_calls_in_half_open_state
                as i64,
            max_wait_duration_in_half_open_state: c.max_wait_duration_in_half_open_state.into(),
            transition_to_state_after_wait_duration: c.transition_to_state_after_wait_duration,
            sliding_window_type: c.sliding_window_type,
            sliding_window_size: c.sliding_window_size as i64,
            minimum_number_of_calls: c.minimum_number_of_calls as i64,
            wait_duration_in_open_state: None,
            wait_interval_function: c.wait_interval_function_in_open_state.clone(),
            wait_function_set_count: 0,
            automatic_transition_from_open_to_half_open_enabled: c
                .automatic_transition_from_open_to_half_open_enabled,
            initial_state: c.initial_state,
            record_exceptions: c.record_exceptions.clone(),
            ignore_exceptions: c.ignore_exceptions.clone(),
            record_exceptions_configured: c.record_exceptions_configured,
            ignore_exceptions_configured: c.ignore_exceptions_configured,
            record_exception: c.record_exception.clone(),
            ignore_exception: c.ignore_exception.clone(),
            record_result: c.record_result.clone(),
            error_catalog: c.error_catalog.clone(),
            clock: c.clock.clone(),
            exact_resilience4j: c.exact_resilience4j,
            instance: c.instance.clone(),
        }
    }

    /// `failureRateThreshold` in percent; allowed `(0, 100]`; default 50.
    pub fn failure_rate_threshold(mut self, percent: f32) -> Self {
        self.failure_rate_threshold = percent;
        self
    }
    /// `slowCallRateThreshold` in percent; allowed `(0, 100]`; default 100.
    pub fn slow_call_rate_threshold(mut self, percent: f32) -> Self {
        self.slow_call_rate_threshold = percent;
        self
    }
    /// `slowCallDurationThreshold`; allowed >= 1 ns; default 60 s.
    pub fn slow_call_duration_threshold(mut self, d: impl Into<SignedDuration>) -> Self {
        self.slow_call_duration_threshold = d.into();
        self
    }
    /// `permittedNumberOfCallsInHalfOpenState`; allowed >= 1; default 10.
    pub fn permitted_number_of_calls_in_half_open_state(mut self, calls: i64) -> Self {
        self.permitted_number_of_calls_in_half_open_state = calls;
        self
    }
    /// `maxWaitDurationInHalfOpenState`; allowed >= 0 ms, 0 = no limit (default).
    pub fn max_wait_duration_in_half_open_state(mut self, d: impl Into<SignedDuration>) -> Self {
        self.max_wait_duration_in_half_open_state = d.into();
        self
    }
    /// `transitionToStateAfterWaitDuration`; allowed OPEN or CLOSED; default OPEN.
    pub fn transition_to_state_after_wait_duration(mut self, state: State) -> Self {
        self.transition_to_state_after_wait_duration = state;
        self
    }
    /// `slidingWindowType`; default COUNT_BASED.
    pub fn sliding_window_type(mut self, t: SlidingWindowType) -> Self {
        self.sliding_window_type = t;
        self
    }
    /// `slidingWindowSize` in calls (COUNT_BASED) or seconds (TIME_BASED); allowed >= 1;
    /// default 100.
    pub fn sliding_window_size(mut self, size: i64) -> Self {
        self.sliding_window_size = size;
        self
    }
    /// `minimumNumberOfCalls`; allowed >= 1; default 100. Stored as given; the COUNT_BASED
    /// window clamps it to its size when evaluating.
    pub fn minimum_number_of_calls(mut self, calls: i64) -> Self {
        self.minimum_number_of_calls = calls;
        self
    }
    /// Resilience4j's `slidingWindow(size, minimumNumberOfCalls, type)`: sets all three, and
    /// for COUNT_BASED stores `min(minimumNumberOfCalls, size)`.
    pub fn sliding_window(
        mut self,
        size: i64,
        minimum_number_of_calls: i64,
        t: SlidingWindowType,
    ) -> Self {
        self.sliding_window_size = size;
        self.sliding_window_type = t;
        self.minimum_number_of_calls = if t == SlidingWindowType::CountBased && size >= 1 {
            minimum_number_of_calls.min(size)
        } else {
            minimum_number_of_calls
        };
        self
    }
    /// `waitDurationInOpenState`: a constant OPEN wait, truncated to whole ms; allowed >= 1 ms;
    /// default 60 s. Setting it together with (or twice, or with)
    /// [`wait_interval_function_in_open_state`](Self::wait_interval_function_in_open_state)
    /// makes `build` fail, as in Resilience4j.
    pub fn wait_duration_in_open_state(mut self, d: impl Into<SignedDuration>) -> Self {
        let d = d.into();
        self.wait_duration_in_open_state = Some(d);
        self.wait_interval_function = IntervalFunction::Constant {
            interval_millis: d.as_millis_floor().max(0) as u64,
        };
        self.wait_function_set_count += 1;
        self
    }
    /// `waitIntervalFunctionInOpenState`: the OPEN wait per attempt (exponential, randomized).
    pub fn wait_interval_function_in_open_state(mut self, f: IntervalFunction) -> Self {
        self.wait_duration_in_open_state = None;
        self.wait_interval_function = f;
        self.wait_function_set_count += 1;
        self
    }
    /// `automaticTransitionFromOpenToHalfOpenEnabled`; default false.
    pub fn automatic_transition_from_open_to_half_open_enabled(mut self, enabled: bool) -> Self {
        self.automatic_transition_from_open_to_half_open_enabled = enabled;
        self
    }
    /// `initialState`; any of the six states; default CLOSED.
    pub fn initial_state(mut self, state: State) -> Self {
        self.initial_state = state;
        self
    }
    /// `recordExceptions`: error names (bound through [`error_catalog`](Self::error_catalog))
    /// recorded as failures. Replaces the list and any `record_exception` predicate inherited
    /// from a base config, as Resilience4j's Spring layer does.
    pub fn record_exceptions<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.record_exceptions = names.into_iter().map(Into::into).collect();
        self.record_exceptions_configured = true;
        self.record_exception = None;
        self
    }
    /// `ignoreExceptions`: error names that are neither failures nor successes. Replaces the
    /// list and any inherited `ignore_exception` predicate.
    pub fn ignore_exceptions<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.ignore_exceptions = names.into_iter().map(Into::into).collect();
        self.ignore_exceptions_configured = true;
        self.ignore_exception = None;
        self
    }
    /// `recordException(Predicate)`: errors of type `E` accepted by `f` are failures (ORed
    /// with `recordExceptions`).
    pub fn record_exception<E: Any>(
        mut self,
        f: impl Fn(&E) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.record_exception = Some(predicate(f));
        self
    }
    /// `ignoreException(Predicate)`: errors of type `E` accepted by `f` are ignored (ORed with
    /// `ignoreExceptions`).
    pub fn ignore_exception<E: Any>(
        mut self,
        f: impl Fn(&E) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.ignore_exception = Some(predicate(f));
        self
    }
    /// `recordResult(Predicate)`: successful results of type `T` accepted by `f` are recorded
    /// as failures; the caller still receives the result.
    pub fn record_result<T: Any>(mut self, f: impl Fn(&T) -> bool + Send + Sync + 'static) -> Self {
        self.record_result = Some(predicate(f));
        self
    }
    /// The catalog that binds `recordExceptions` / `ignoreExceptions` names to errors.
    pub fn error_catalog(mut self, catalog: ErrorCatalog) -> Self {
        self.error_catalog = catalog;
        self
    }
    /// The clock (Resilience4j's `clock` and `currentTimestampFunction`).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
    /// Exact Resilience4j mode (default `false`): restores Resilience4j's rule for calls that
    /// outlive the state that admitted them, the one circuit-breaker fix that has a switch
    /// (the others, `reset()` cancelling timers and a fresh window for OPEN entered from
    /// FORCED_OPEN or DISABLED, are what the conformance vectors record too).
    ///
    /// By default a call admitted in one state episode (while CLOSED, or by an earlier
    /// HALF_OPEN state) that finishes while a later HALF_OPEN state runs its trial calls is
    /// published (`SUCCESS`, `ERROR`, `IGNORED_ERROR`) but neither counts as a trial result
    /// nor frees a trial permission; nor does its `release()`. Only the trial calls that
    /// HALF_OPEN state admitted decide it, and no more than
    /// `permittedNumberOfCallsInHalfOpenState` of them are ever in flight.
    ///
    /// With `true`, HALF_OPEN applies Resilience4j's rule: every outcome is recorded in its
    /// window and can close or reopen the breaker, and every ignored error or release adds a
    /// trial permission, whichever state admitted the call. CLOSED, OPEN and METRICS_ONLY
    /// record late outcomes in their current window in both modes, as Resilience4j does.
    pub fn exact_resilience4j(mut self, exact: bool) -> Self {
        self.exact_resilience4j = exact;
        self
    }
    /// The settings beside the state machine (event buffer size, health indicator, ...);
    /// default [`InstanceSettings::default`]. `event_consumer_buffer_size` must be at least 1.
    pub fn instance_settings(mut self, settings: InstanceSettings) -> Self {
        self.instance = settings;
        self
    }

    /// Validates every setting as Resilience4j's builder does.
    ///
    /// # Errors
    /// A [`ConfigError`] for the first setting out of range, in Resilience4j's property order,
    /// with Resilience4j's exception message.
    pub fn build(self) -> Result<CircuitBreakerConfig, ConfigError> {
        let fr = self.failure_rate_threshold;
        if !(fr > 0.0 && fr <= 100.0) {
            return Err(ConfigError::new(
                "failureRateThreshold",
                java_float(fr),
                "greater than 0 and at most 100 (percent)",
                format!(
                    "failureRateThreshold must be greater than 0 and lower than 100, but was {}",
                    java_float(fr)
                ),
            ));
        }
        let sr = self.slow_call_rate_threshold;
        if !(sr > 0.0 && sr <= 100.0) {
            return Err(ConfigError::new(
                "slowCallRateThreshold",
                java_float(sr),
                "greater than 0 and at most 100 (percent)",
                format!(
                    "slowCallRateThreshold must be greater than 0 and not greater than 100, but was {}",
                    java_float(sr)
                ),
            ));
        }
        if self.slow_call_duration_threshold.as_nanos() < 1 {
            return Err(ConfigError::new(
                "slowCallDurationThreshold",
                format!("{}ns", self.slow_call_duration_threshold.as_nanos()),
                "at least 1 ns",
                "slowCallDurationThreshold must be at least 1[ns]".to_string(),
            ));
        }
        if self.permitted_number_of_calls_in_half_open_state < 1 {
            return Err(ConfigError::new(
                "permittedNumberOfCallsInHalfOpenState",
                self.permitted_number_of_calls_in_half_open_state
                    .to_string(),
                "at least 1",
                "permittedNumberOfCallsInHalfOpenState must be greater than 0".to_string(),
            ));
        }
        if self.max_wait_duration_in_half_open_state.as_millis_floor() < 0 {
            return Err(ConfigError::new(
                "maxWaitDurationInHalfOpenState",
                format!(
                    "{}ms",
                    self.max_wait_duration_in_half_open_state.as_millis_floor()
                ),
                "at least 0 ms (0 = no limit)",
                "maxWaitDurationInHalfOpenState must be greater than or equal to 0[ms]".to_string(),
            ));
        }
        if !matches!(
            self.transition_to_state_after_wait_duration,
            State::Open | State::Closed
        ) {
            return Err(ConfigError::new(
                "transitionToStateAfterWaitDuration",
                self.transition_to_state_after_wait_duration
                    .name()
                    .to_string(),
                "OPEN or CLOSED",
                "transitionToStateAfterWaitDuration must be either OPEN or CLOSED".to_string(),
            ));
        }
        if self.sliding_window_size < 1 {
            return Err(ConfigError::new(
                "slidingWindowSize",
                self.sliding_window_size.to_string(),
                "at least 1",
                "slidingWindowSize must be greater than 0".to_string(),
            ));
        }
        if self.minimum_number_of_calls < 1 {
            return Err(ConfigError::new(
                "minimumNumberOfCalls",
                self.minimum_number_of_calls.to_string(),
                "at least 1",
                "minimumNumberOfCalls must be greater than 0".to_string(),
            ));
        }
        if let Some(w) = self.wait_duration_in_open_state {
            if w.as_millis_floor() < 1 {
                return Err(ConfigError::new(
                    "waitDurationInOpenState",
                    format!("{}ms", w.as_millis_floor()),
                    "at least 1 ms",
                    "waitDurationInOpenState must be at least 1[ms]".to_string(),
                ));
            }
        }
        if let Err(message) = self.wait_interval_function.validate() {
            return Err(ConfigError::new(
                "waitIntervalFunctionInOpenState",
                format!("{:?}", self.wait_interval_function),
                "intervals >= 1 ms, multiplier >= 1.0, randomization factor in [0, 1]",
                message,
            ));
        }
        if self.wait_function_set_count > 1 {
            return Err(ConfigError::new(
                "waitIntervalFunctionInOpenState",
                format!("set {} times", self.wait_function_set_count),
                "one of waitDurationInOpenState or waitIntervalFunctionInOpenState, once",
                "The waitIntervalFunction was configured multiple times which could result in an undesired state. Please verify that waitIntervalFunctionInOpenState and waitDurationInOpenState are not used together.".to_string(),
            ));
        }
        let too_big = |v: i64| v > u32::MAX as i64;
        for (name, v) in [
            ("slidingWindowSize", self.sliding_window_size),
            ("minimumNumberOfCalls", self.minimum_number_of_calls),
            (
                "permittedNumberOfCallsInHalfOpenState",
                self.permitted_number_of_calls_in_half_open_state,
            ),
        ] {
            if too_big(v) || (name == "slidingWindowSize" && v > i32::MAX as i64) {
                return Err(ConfigError::new(
                    name,
                    v.to_string(),
                    "at most 2147483647",
                    format!("{name} must be at most 2147483647, but was {v}"),
                ));
            }
        }
        if self.instance.event_consumer_buffer_size < 1 {
            return Err(ConfigError::new(
                "eventConsumerBufferSize",
                self.instance.event_consumer_buffer_size.to_string(),
                "at least 1",
                "eventConsumerBufferSize must be greater than or equal to 1.".to_string(),
            ));
        }
        Ok(CircuitBreakerConfig {
            failure_rate_threshold: fr,
            slow_call_rate_threshold: sr,
            slow_call_duration_threshold: self.slow_call_duration_threshold.to_duration(),
            permitted_number_of_calls_in_half_open_state: self
                .permitted_number_of_calls_in_half_open_state
                as u32,
            max_wait_duration_in_half_open_state: self
                .max_wait_duration_in_half_open_state
                .to_duration(),
            transition_to_state_after_wait_duration: self.transition_to_state_after_wait_duration,
            sliding_window_type: self.sliding_window_type,
            sliding_window_size: self.sliding_window_size as u32,
            minimum_number_of_calls: self.minimum_number_of_calls as u32,
            wait_interval_function_in_open_state: self.wait_interval_function,
            automatic_transition_from_open_to_half_open_enabled: self
                .automatic_transition_from_open_to_half_open_enabled,
            initial_state: self.initial_state,
            record_exceptions: self.record_exceptions,
            ignore_exceptions: self.ignore_exceptions,
            record_exceptions_configured: self.record_exceptions_configured,
            ignore_exceptions_configured: self.ignore_exceptions_configured,
            record_exception: self.record_exception,
            ignore_exception: self.ignore_exception,
            record_result: self.record_result,
            error_catalog: self.error_catalog,
            clock: self.clock,
            exact_resilience4j: self.exact_resilience4j,
            instance: self.instance,
        })
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
mod tests {
    use super::*;

    #[test]
    fn defaults_are_resilience4j_defaults() {
        let c = CircuitBreakerConfig::default();
        assert_eq!(c.failure_rate_threshold(), 50.0);
        assert_eq!(c.slow_call_rate_threshold(), 100.0);
        assert_eq!(c.slow_call_duration_threshold(), Duration::from_secs(60));
        assert_eq!(c.permitted_number_of_calls_in_half_open_state(), 10);
        assert_eq!(c.max_wait_duration_in_half_open_state(), Duration::ZERO);
        assert_eq!(c.transition_to_state_after_wait_duration(), State::Open);
        assert_eq!(c.sliding_window_type(), SlidingWindowType::CountBased);
        assert_eq!(c.sliding_window_size(), 100);
        assert_eq!(c.minimum_number_of_calls(), 100);
        assert_eq!(c.wait_duration_in_open_state(), Duration::from_secs(60));
        assert!(!c.automatic_transition_from_open_to_half_open_enabled());
        assert_eq!(c.initial_state(), State::Closed);
    }

    #[test]
    fn wait_configured_twice_is_rejected() {
        let err = CircuitBreakerConfig::builder()
            .wait_duration_in_open_state(Duration::from_secs(1))
            .wait_duration_in_open_state(Duration::from_secs(2))
            .build()
            .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("The waitIntervalFunction was configured multiple times"));
    }

    #[test]
    fn sliding_window_clamps_minimum_for_count_based_only() {
        let c = CircuitBreakerConfig::builder()
            .sliding_window(5, 10, SlidingWindowType::CountBased)
            .build()
            .unwrap();
        assert_eq!(c.minimum_number_of_calls(), 5);
        let t = CircuitBreakerConfig::builder()
            .sliding_window(5, 10, SlidingWindowType::TimeBased)
            .build()
            .unwrap();
        assert_eq!(t.minimum_number_of_calls(), 10);
    }

    #[test]
    fn record_exceptions_limit_failures_and_ignore_wins() {
        #[derive(Debug)]
        enum E {
            Io,
            Parse,
            Ignored,
        }
        let catalog = ErrorCatalog::new()
            .register("java.io.IOException", |e: &E| {
                matches!(e, E::Io | E::Ignored)
            })
            .register("IgnoredException", |e: &E| matches!(e, E::Ignored));
        let c = CircuitBreakerConfig::builder()
            .error_catalog(catalog)
            .record_exceptions(["java.io.IOException"])
            .ignore_exceptions(["IgnoredException"])
            .build()
            .unwrap();
        assert_eq!(c.classify_error(&E::Io), Outcome::Failure);
        assert_eq!(c.classify_error(&E::Parse), Outcome::Success);
        assert_eq!(c.classify_error(&E::Ignored), Outcome::Ignored);
        assert_eq!(
            CircuitBreakerConfig::default().classify_error(&E::Parse),
            Outcome::Failure
        );
    }
}
