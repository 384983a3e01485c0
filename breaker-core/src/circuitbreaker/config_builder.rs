//! `CircuitBreakerConfigBuilder`: Resilience4j's `CircuitBreakerConfig.Builder`, every setter and
//! the validation of [`build`](CircuitBreakerConfigBuilder::build).

use std::any::Any;
use std::sync::Arc;

use crate::classify::{predicate, AnyPredicate, ErrorCatalog};
use crate::clock::Clock;
use crate::config::{CircuitBreakerConfig, SignedDuration, SlidingWindowType};
use crate::error::ConfigError;
use crate::instance::InstanceSettings;
use crate::interval::IntervalFunction;
use crate::java::java_float;
use crate::state::State;

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
