//! [`InstanceSettings`]: the settings of a breaker instance that live beside the state
//! machine.

use crate::events::DEFAULT_EVENT_CONSUMER_BUFFER_SIZE;

/// The settings of one breaker instance that the state machine does not read: Resilience4j's
/// Spring `InstanceProperties` that are not part of `CircuitBreakerConfig`, and the settings
/// a Spring file can name that have no effect in Rust. They travel with the
/// [`CircuitBreakerConfig`](crate::CircuitBreakerConfig) (see
/// [`instance_settings`](crate::CircuitBreakerConfig::instance_settings)), so a breaker made
/// for a name the file does not list gets those of the default config, and a reload or
/// [`replace_config`](crate::CircuitBreaker::replace_config) brings the new ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceSettings {
    /// `eventConsumerBufferSize`: how many recent events the registry keeps for the breaker
    /// once [`Registry::enable_event_buffers`](crate::Registry::enable_event_buffers) is
    /// called (the actuator's `circuitbreakerevents`). At least 1; default 100.
    pub event_consumer_buffer_size: u32,
    /// `registerHealthIndicator`: whether a health endpoint reports this breaker. Default
    /// false.
    pub register_health_indicator: bool,
    /// `allowHealthIndicatorToFail`: whether an OPEN breaker reports `DOWN` (else
    /// `CIRCUIT_OPEN`). Default false.
    pub allow_health_indicator_to_fail: bool,
    /// `writableStackTraceEnabled`: Java's stack trace of `CallNotPermittedException`; no
    /// effect here (a [`CallNotPermitted`](crate::CallNotPermitted) has no stack trace).
    /// Default true.
    pub writable_stack_trace_enabled: bool,
    /// `recordFailurePredicate`: the Java class named in the file. It cannot be loaded, so it
    /// has no effect; give the predicate in code with
    /// [`record_exception`](crate::CircuitBreakerConfigBuilder::record_exception).
    pub record_failure_predicate: Option<String>,
    /// `ignoreExceptionPredicate`: the Java class named in the file, without effect (see
    /// [`ignore_exception`](crate::CircuitBreakerConfigBuilder::ignore_exception)).
    pub ignore_exception_predicate: Option<String>,
    /// `recordResultPredicate`: the Java class named in the file, without effect (see
    /// [`record_result`](crate::CircuitBreakerConfigBuilder::record_result)).
    pub record_result_predicate: Option<String>,
}

impl Default for InstanceSettings {
    /// Resilience4j's Spring defaults: a buffer of 100 events, no health indicator, stack
    /// traces on, no predicate classes.
    fn default() -> Self {
        InstanceSettings {
            event_consumer_buffer_size: DEFAULT_EVENT_CONSUMER_BUFFER_SIZE as u32,
            register_health_indicator: false,
            allow_health_indicator_to_fail: false,
            writable_stack_trace_enabled: true,
            record_failure_predicate: None,
            ignore_exception_predicate: None,
            record_result_predicate: None,
        }
    }
}
