//! The resolved model: every Resilience4j circuit-breaker setting of an instance, each with
//! the place its value came from.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::error::ConfigError;
use crate::origin::Origin;

pub use breaker_core::{SlidingWindowType, State};

/// The constant names Spring's lenient enum binding compares against.
pub(crate) const SLIDING_WINDOW_TYPES: [(&str, SlidingWindowType); 2] = [
    ("COUNT_BASED", SlidingWindowType::CountBased),
    ("TIME_BASED", SlidingWindowType::TimeBased),
];

/// The constant names of the six states, for lenient enum binding.
pub(crate) const STATES: [(&str, State); 6] = [
    ("CLOSED", State::Closed),
    ("OPEN", State::Open),
    ("HALF_OPEN", State::HalfOpen),
    ("DISABLED", State::Disabled),
    ("FORCED_OPEN", State::ForcedOpen),
    ("METRICS_ONLY", State::MetricsOnly),
];

/// How the OPEN-state wait grows with each consecutive opening (Resilience4j
/// `waitIntervalFunctionInOpenState`). The initial wait is `waitDurationInOpenState`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WaitInterval {
    /// `IntervalFunction.of(wait)`: always the same wait.
    Constant,
    /// `IntervalFunction.ofExponentialBackoff(wait, multiplier[, max])`
    /// (`enableExponentialBackoff: true`; multiplier defaults to 1.5).
    Exponential {
        /// Factor applied per attempt (> 0).
        multiplier: f64,
        /// Upper bound of the wait (`exponentialMaxWaitDurationInOpenState`), only honoured
        /// when a multiplier was configured too.
        max_wait: Option<Duration>,
    },
    /// `IntervalFunction.ofRandomized(wait, factor)` (`enableRandomizedWait: true`;
    /// factor in [0, 1), default 0.5).
    Randomized {
        /// Randomization factor.
        factor: f64,
    },
}

/// Where a resolved value came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueSource {
    /// Resilience4j's library default.
    Default,
    /// The instance's own block (`instances.<name>`).
    Instance,
    /// A shared block (`configs.<name>`).
    Config(String),
    /// A key directly under a section, e.g. `resilience4j.retry.retryAspectOrder`.
    Section,
}

impl fmt::Display for ValueSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueSource::Default => f.write_str("default"),
            ValueSource::Instance => f.write_str("instance"),
            ValueSource::Config(n) => write!(f, "configs.{n}"),
            ValueSource::Section => f.write_str("file"),
        }
    }
}

/// A resolved value with its source.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting<T> {
    /// The value.
    pub value: T,
    /// Which block set it.
    pub source: ValueSource,
    /// Where it is written, `None` for library defaults.
    pub origin: Option<Origin>,
}

impl<T> Setting<T> {
    pub(crate) fn default(value: T) -> Self {
        Setting {
            value,
            source: ValueSource::Default,
            origin: None,
        }
    }
}

/// Which base an instance was resolved on (Resilience4j's `createCircuitBreakerConfig`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Base {
    /// `baseConfig: <name>`.
    BaseConfig(String),
    /// No `baseConfig`, but a config with the instance's own name exists.
    SameName(String),
    /// No `baseConfig`: `configs.default`.
    DefaultConfig,
    /// Nothing to inherit: library defaults.
    LibraryDefaults,
}

/// The effective configuration of one circuit breaker, every Resilience4j setting with its
/// source. Units: thresholds in percent, durations as `std::time::Duration`.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedInstance {
    /// The instance name (`instances.<name>`), or `default` for the registry default.
    pub name: String,
    /// What it inherits from.
    pub base: Base,
    /// `failureRateThreshold`, percent in [1, 100] from Spring (default 50).
    pub failure_rate_threshold: Setting<f32>,
    /// `slowCallRateThreshold`, percent in [1, 100] (default 100).
    pub slow_call_rate_threshold: Setting<f32>,
    /// `slowCallDurationThreshold`, at least 1 ns (default 60 s).
    pub slow_call_duration_threshold: Setting<Duration>,
    /// `waitDurationInOpenState`, the (initial) OPEN wait, at least 1 ms (default 60 s).
    pub wait_duration_in_open_state: Setting<Duration>,
    /// `waitIntervalFunctionInOpenState`: constant, exponential or randomized; set by the same
    /// block as `waitDurationInOpenState`.
    pub wait_interval_in_open_state: Setting<WaitInterval>,
    /// `maxWaitDurationInHalfOpenState`, 0 = disabled (default 0).
    pub max_wait_duration_in_half_open_state: Setting<Duration>,
    /// `permittedNumberOfCallsInHalfOpenState`, >= 1 (default 10).
    pub permitted_number_of_calls_in_half_open_state: Setting<i32>,
    /// `slidingWindowType` (default COUNT_BASED).
    pub sliding_window_type: Setting<SlidingWindowType>,
    /// `slidingWindowSize`, calls or seconds, >= 1 (default 100).
    pub sliding_window_size: Setting<i32>,
    /// `minimumNumberOfCalls` as configured (not clamped to the window), >= 1 (default 100).
    pub minimum_number_of_calls: Setting<i32>,
    /// `automaticTransitionFromOpenToHalfOpenEnabled` (default false).
    pub automatic_transition_from_open_to_half_open_enabled: Setting<bool>,
    /// `transitionToStateAfterWaitDuration`, OPEN or CLOSED (default OPEN).
    pub transition_to_state_after_wait_duration: Setting<State>,
    /// `initialState` (default CLOSED).
    pub initial_state: Setting<State>,
    /// `writableStackTraceEnabled` (default true).
    pub writable_stack_trace_enabled: Setting<bool>,
    /// `recordExceptions`: class names as written; `None` when not configured, `Some([])`
    /// when configured empty.
    pub record_exceptions: Setting<Option<Vec<String>>>,
    /// `ignoreExceptions`: class names as written; `None` when not configured.
    pub ignore_exceptions: Setting<Option<Vec<String>>>,
    /// `recordFailurePredicate` class name.
    pub record_failure_predicate: Setting<Option<String>>,
    /// `ignoreExceptionPredicate` class name.
    pub ignore_exception_predicate: Setting<Option<String>>,
    /// `recordResultPredicate` class name.
    pub record_result_predicate: Setting<Option<String>>,
    /// `registerHealthIndicator` (false when absent).
    pub register_health_indicator: Setting<bool>,
    /// `allowHealthIndicatorToFail` (false when absent).
    pub allow_health_indicator_to_fail: Setting<bool>,
    /// `eventConsumerBufferSize`, >= 1 (default 100).
    pub event_consumer_buffer_size: Setting<i32>,
    /// `ignoreClassBindingExceptions` (Spring Boot 2 only; no effect here).
    pub ignore_class_binding_exceptions: Setting<bool>,
    /// Positions of each `recordExceptions` item, parallel to the names.
    pub record_exceptions_origins: Vec<Origin>,
    /// Positions of each `ignoreExceptions` item, parallel to the names.
    pub ignore_exceptions_origins: Vec<Origin>,
}

impl ResolvedInstance {
    /// Resilience4j's library defaults (`CircuitBreakerConfig.ofDefaults()` plus Spring's
    /// defaults for the non-core settings).
    pub fn library_defaults(name: &str) -> Self {
        ResolvedInstance {
            name: name.to_string(),
            base: Base::LibraryDefaults,
            failure_rate_threshold: Setting::default(50.0),
            slow_call_rate_threshold: Setting::default(100.0),
            slow_call_duration_threshold: Setting::default(Duration::from_secs(60)),
            wait_duration_in_open_state: Setting::default(Duration::from_secs(60)),
            wait_interval_in_open_state: Setting::default(WaitInterval::Constant),
            max_wait_duration_in_half_open_state: Setting::default(Duration::ZERO),
            permitted_number_of_calls_in_half_open_state: Setting::default(10),
            sliding_window_type: Setting::default(SlidingWindowType::CountBased),
            sliding_window_size: Setting::default(100),
            minimum_number_of_calls: Setting::default(100),
            automatic_transition_from_open_to_half_open_enabled: Setting::default(false),
            transition_to_state_after_wait_duration: Setting::default(State::Open),
            initial_state: Setting::default(State::Closed),
            writable_stack_trace_enabled: Setting::default(true),
            record_exceptions: Setting::default(None),
            ignore_exceptions: Setting::default(None),
            record_failure_predicate: Setting::default(None),
            ignore_exception_predicate: Setting::default(None),
            record_result_predicate: Setting::default(None),
            register_health_indicator: Setting::default(false),
            allow_health_indicator_to_fail: Setting::default(false),
            event_consumer_buffer_size: Setting::default(100),
            ignore_class_binding_exceptions: Setting::default(false),
            record_exceptions_origins: Vec::new(),
            ignore_exceptions_origins: Vec::new(),
        }
    }
}

/// Everything the files say about circuit breakers, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedConfig {
    /// Every instance under `instances` / `backends` that resolves.
    pub instances: BTreeMap<String, ResolvedInstance>,
    /// Instances Resilience4j refuses to build, with the reason.
    pub errors: BTreeMap<String, ConfigError>,
    /// What a name not listed under `instances` gets (`configs.default` over the library
    /// defaults), or why that config is invalid.
    pub default_config: Result<ResolvedInstance, ConfigError>,
    /// Invalid values in `configs.*` blocks that no instance uses (Spring still refuses them).
    pub config_errors: Vec<ConfigError>,
    /// The active profiles the files were read with.
    pub profiles: Vec<String>,
}

impl ResolvedConfig {
    /// The configuration a circuit breaker named `name` gets: its instance entry, else the
    /// default config. `None` when that entry is invalid.
    pub fn config_for(&self, name: &str) -> Option<&ResolvedInstance> {
        match self.instances.get(name) {
            Some(i) => Some(i),
            None if self.errors.contains_key(name) => None,
            None => self.default_config.as_ref().ok(),
        }
    }

    /// Every error: invalid instances, an invalid default config and invalid unused configs.
    /// Empty means Spring Boot would start with these files.
    pub fn all_errors(&self) -> Vec<&ConfigError> {
        let mut out: Vec<&ConfigError> = self.errors.values().collect();
        if let Err(e) = &self.default_config {
            if !out.contains(&e) {
                out.push(e);
            }
        }
        for e in &self.config_errors {
            if !out.contains(&e) {
                out.push(e);
            }
        }
        out
    }
}
