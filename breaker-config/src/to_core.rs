//! Conversion of a resolved instance into breaker-core's `CircuitBreakerConfig`, validated by
//! breaker-core's builder (Resilience4j's `CircuitBreakerConfig.Builder` rules).

use breaker_core::{
    CircuitBreakerConfig, CircuitBreakerConfigBuilder, ErrorCatalog, InstanceSettings,
    IntervalFunction,
};

use crate::model::{ResolvedConfig, ResolvedInstance, WaitInterval};
use crate::UnclaimedName;

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl ResolvedInstance {
    /// A breaker-core builder carrying every resolved setting and `catalog` (which binds the
    /// `recordExceptions` / `ignoreExceptions` names to Rust errors), the settings beside the
    /// state machine included ([`InstanceSettings`]: `eventConsumerBufferSize`, the health
    /// indicator flags, ...). Add predicates or a clock before
    /// [`CircuitBreakerConfigBuilder::build`]. The Java predicate classes
    /// (`recordFailurePredicate`, ...) cannot be instantiated: they are kept by name only (set
    /// the predicates in code).
    pub fn to_core_builder(&self, catalog: &ErrorCatalog) -> CircuitBreakerConfigBuilder {
        let wait = self.wait_duration_in_open_state.value;
        let mut b = CircuitBreakerConfig::builder()
            .failure_rate_threshold(self.failure_rate_threshold.value)
            .slow_call_rate_threshold(self.slow_call_rate_threshold.value)
            .slow_call_duration_threshold(self.slow_call_duration_threshold.value)
            .max_wait_duration_in_half_open_state(self.max_wait_duration_in_half_open_state.value)
            .permitted_number_of_calls_in_half_open_state(i64::from(
                self.permitted_number_of_calls_in_half_open_state.value,
            ))
            .sliding_window_type(self.sliding_window_type.value)
            .sliding_window_size(i64::from(self.sliding_window_size.value))
            .minimum_number_of_calls(i64::from(self.minimum_number_of_calls.value))
            .automatic_transition_from_open_to_half_open_enabled(
                self.automatic_transition_from_open_to_half_open_enabled
                    .value,
            )
            .transition_to_state_after_wait_duration(
                self.transition_to_state_after_wait_duration.value,
            )
            .initial_state(self.initial_state.value)
            .error_catalog(catalog.clone())
            .instance_settings(InstanceSettings {
                // Spring rejects values below 1 before this point.
                event_consumer_buffer_size: u32::try_from(self.event_consumer_buffer_size.value)
                    .unwrap_or(0),
                register_health_indicator: self.register_health_indicator.value,
                allow_health_indicator_to_fail: self.allow_health_indicator_to_fail.value,
                writable_stack_trace_enabled: self.writable_stack_trace_enabled.value,
                record_failure_predicate: self.record_failure_predicate.value.clone(),
                ignore_exception_predicate: self.ignore_exception_predicate.value.clone(),
                record_result_predicate: self.record_result_predicate.value.clone(),
            });
        b = match self.wait_interval_in_open_state.value {
            WaitInterval::Constant => b.wait_duration_in_open_state(wait),
            WaitInterval::Exponential {
                multiplier,
                max_wait,
            } => b.wait_interval_function_in_open_state(IntervalFunction::Exponential {
                initial_millis: millis(wait),
                multiplier,
                max_millis: max_wait.map(millis),
            }),
            WaitInterval::Randomized { factor } => {
                b.wait_interval_function_in_open_state(IntervalFunction::Randomized {
                    interval_millis: millis(wait),
                    randomization_factor: factor,
                })
            }
        };
        if let Some(names) = &self.record_exceptions.value {
            b = b.record_exceptions(names.iter().cloned());
        }
        if let Some(names) = &self.ignore_exceptions.value {
            b = b.ignore_exceptions(names.iter().cloned());
        }
        b
    }

    /// The breaker-core configuration of this instance.
    ///
    /// # Errors
    /// breaker-core's [`breaker_core::ConfigError`] when a value passes Spring's checks but not
    /// Resilience4j's builder (e.g. an `exponentialBackoffMultiplier` below 1.0).
    pub fn to_core_config(
        &self,
        catalog: &ErrorCatalog,
    ) -> Result<CircuitBreakerConfig, breaker_core::ConfigError> {
        self.to_core_builder(catalog).build()
    }
}

impl ResolvedConfig {
    /// Exception names in the files that `catalog` does not claim.
    pub fn unclaimed_in_catalog(&self, catalog: &ErrorCatalog) -> Vec<UnclaimedName> {
        self.unclaimed_exception_names(&|n| catalog.claims(n))
    }
}

impl ResolvedInstance {
    /// Where the setting named `setting` (Resilience4j camelCase) is written, if in a file.
    pub fn origin_of(&self, setting: &str) -> Option<&crate::Origin> {
        let o = match setting {
            "failureRateThreshold" => &self.failure_rate_threshold.origin,
            "slowCallRateThreshold" => &self.slow_call_rate_threshold.origin,
            "slowCallDurationThreshold" => &self.slow_call_duration_threshold.origin,
            "waitDurationInOpenState" | "waitIntervalFunctionInOpenState" => {
                &self.wait_interval_in_open_state.origin
            }
            "maxWaitDurationInHalfOpenState" => &self.max_wait_duration_in_half_open_state.origin,
            "permittedNumberOfCallsInHalfOpenState" => {
                &self.permitted_number_of_calls_in_half_open_state.origin
            }
            "slidingWindowType" => &self.sliding_window_type.origin,
            "slidingWindowSize" => &self.sliding_window_size.origin,
            "minimumNumberOfCalls" => &self.minimum_number_of_calls.origin,
            "transitionToStateAfterWaitDuration" => {
                &self.transition_to_state_after_wait_duration.origin
            }
            "initialState" => &self.initial_state.origin,
            "eventConsumerBufferSize" => &self.event_consumer_buffer_size.origin,
            _ => return None,
        };
        o.as_ref()
    }
}

/// Moves instances that breaker-core's builder rejects into `errors` (and the default config
/// likewise), so that every resolved value has passed Resilience4j's builder checks.
pub(crate) fn validate_with_core(config: &mut ResolvedConfig) {
    let catalog = ErrorCatalog::new();
    let check = |i: &ResolvedInstance, path: String| -> Option<crate::ConfigError> {
        i.to_core_config(&catalog)
            .err()
            .map(|e| crate::ConfigError {
                origin: i.origin_of(e.setting()).cloned(),
                key: format!("{path}.{}", e.setting()),
                value: Some(e.value().to_string()),
                message: e.message().to_string(),
                allowed: e.allowed().to_string(),
            })
    };
    let rejected: Vec<(String, crate::ConfigError)> = config
        .instances
        .iter()
        .filter_map(|(n, i)| {
            check(i, format!("resilience4j.circuitbreaker.instances.{n}")).map(|e| (n.clone(), e))
        })
        .collect();
    for (n, e) in rejected {
        config.instances.remove(&n);
        config.errors.insert(n, e);
    }
    if let Ok(d) = &config.default_config {
        if let Some(e) = check(d, "resilience4j.circuitbreaker.configs.default".into()) {
            config.default_config = Err(e);
        }
    }
}
