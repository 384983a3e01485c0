//! The JSON report of `breaker check --json`: the shape of the `*.expected.json` fixtures
//! (Resilience4j camelCase names, durations in milliseconds, thresholds as numbers, exception
//! lists as written or `null`), plus the sources of every value and the warnings.

use std::time::Duration;

use breaker_core::{CircuitBreakerConfig, IntervalFunction};
use serde_json::{json, Map, Value};

use crate::error::ConfigError;
use crate::load::Loaded;
use crate::model::{ResolvedInstance, Setting, WaitInterval};

fn ms(d: Duration) -> Value {
    Value::from(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The settings of one instance, keyed by Resilience4j's camelCase names.
pub fn instance_json(i: &ResolvedInstance) -> Value {
    let interval = match i.wait_interval_in_open_state.value {
        WaitInterval::Constant => json!({"type": "constant"}),
        WaitInterval::Exponential {
            multiplier,
            max_wait,
        } => json!({
            "type": "exponential",
            "multiplier": multiplier,
            "maxWaitDuration": max_wait.map(ms),
        }),
        WaitInterval::Randomized { factor } => json!({"type": "randomized", "factor": factor}),
    };
    json!({
        "failureRateThreshold": i.failure_rate_threshold.value,
        "slowCallRateThreshold": i.slow_call_rate_threshold.value,
        "slowCallDurationThreshold": ms(i.slow_call_duration_threshold.value),
        "waitDurationInOpenState": ms(i.wait_duration_in_open_state.value),
        "waitIntervalFunctionInOpenState": interval,
        "maxWaitDurationInHalfOpenState": ms(i.max_wait_duration_in_half_open_state.value),
        "permittedNumberOfCallsInHalfOpenState": i.permitted_number_of_calls_in_half_open_state.value,
        "slidingWindowType": i.sliding_window_type.value.name(),
        "slidingWindowSize": i.sliding_window_size.value,
        "minimumNumberOfCalls": i.minimum_number_of_calls.value,
        "automaticTransitionFromOpenToHalfOpenEnabled": i.automatic_transition_from_open_to_half_open_enabled.value,
        "transitionToStateAfterWaitDuration": i.transition_to_state_after_wait_duration.value.name(),
        "initialState": i.initial_state.value.name(),
        "writableStackTraceEnabled": i.writable_stack_trace_enabled.value,
        "recordExceptions": i.record_exceptions.value,
        "ignoreExceptions": i.ignore_exceptions.value,
        "recordFailurePredicate": i.record_failure_predicate.value,
        "ignoreExceptionPredicate": i.ignore_exception_predicate.value,
        "recordResultPredicate": i.record_result_predicate.value,
        "registerHealthIndicator": i.register_health_indicator.value,
        "allowHealthIndicatorToFail": i.allow_health_indicator_to_fail.value,
        "eventConsumerBufferSize": i.event_consumer_buffer_size.value,
    })
}

/// What a breaker-core config holds, in the shape of [`instance_json`]: the settings a
/// breaker actually runs with (and reports through
/// [`CircuitBreakerConfig::instance_settings`] for those beside the state machine). For a
/// config built from a file it equals `instance_json` of the resolved instance, which is what
/// `breaker check --json` prints.
pub fn core_config_json(c: &CircuitBreakerConfig) -> Value {
    let (wait, interval) = match *c.wait_interval_function_in_open_state() {
        IntervalFunction::Constant { interval_millis } => {
            (interval_millis, json!({"type": "constant"}))
        }
        IntervalFunction::Exponential {
            initial_millis,
            multiplier,
            max_millis,
        } => (
            initial_millis,
            json!({"type": "exponential", "multiplier": multiplier, "maxWaitDuration": max_millis}),
        ),
        IntervalFunction::Randomized {
            interval_millis,
            randomization_factor,
        } => (
            interval_millis,
            json!({"type": "randomized", "factor": randomization_factor}),
        ),
        IntervalFunction::ExponentialRandom {
            initial_millis,
            multiplier,
            randomization_factor,
            max_millis,
        } => (
            initial_millis,
            json!({
                "type": "exponentialRandom",
                "multiplier": multiplier,
                "factor": randomization_factor,
                "maxWaitDuration": max_millis,
            }),
        ),
    };
    let list = |configured: bool, names: &[String]| configured.then(|| names.to_vec());
    let s = c.instance_settings();
    json!({
        "failureRateThreshold": c.failure_rate_threshold(),
        "slowCallRateThreshold": c.slow_call_rate_threshold(),
        "slowCallDurationThreshold": ms(c.slow_call_duration_threshold()),
        "waitDurationInOpenState": wait,
        "waitIntervalFunctionInOpenState": interval,
        "maxWaitDurationInHalfOpenState": ms(c.max_wait_duration_in_half_open_state()),
        "permittedNumberOfCallsInHalfOpenState": c.permitted_number_of_calls_in_half_open_state(),
        "slidingWindowType": c.sliding_window_type().name(),
        "slidingWindowSize": c.sliding_window_size(),
        "minimumNumberOfCalls": c.minimum_number_of_calls(),
        "automaticTransitionFromOpenToHalfOpenEnabled": c.automatic_transition_from_open_to_half_open_enabled(),
        "transitionToStateAfterWaitDuration": c.transition_to_state_after_wait_duration().name(),
        "initialState": c.initial_state().name(),
        "writableStackTraceEnabled": s.writable_stack_trace_enabled,
        "recordExceptions": list(c.record_exceptions_configured(), c.record_exceptions()),
        "ignoreExceptions": list(c.ignore_exceptions_configured(), c.ignore_exceptions()),
        "recordFailurePredicate": s.record_failure_predicate,
        "ignoreExceptionPredicate": s.ignore_exception_predicate,
        "recordResultPredicate": s.record_result_predicate,
        "registerHealthIndicator": s.register_health_indicator,
        "allowHealthIndicatorToFail": s.allow_health_indicator_to_fail,
        "eventConsumerBufferSize": s.event_consumer_buffer_size,
    })
}

/// Where each setting of an instance came from (`instance`, `configs.<name>`, `default`),
/// with its position.
pub fn sources_json(i: &ResolvedInstance) -> Value {
    fn s<T>(x: &Setting<T>) -> Value {
        match &x.origin {
            Some(o) => json!({"from": x.source.to_string(), "at": o.to_string()}),
            None => json!({"from": x.source.to_string()}),
        }
    }
    json!({
        "failureRateThreshold": s(&i.failure_rate_threshold),
        "slowCallRateThreshold": s(&i.slow_call_rate_threshold),
        "slowCallDurationThreshold": s(&i.slow_call_duration_threshold),
        "waitDurationInOpenState": s(&i.wait_duration_in_open_state),
        "waitIntervalFunctionInOpenState": s(&i.wait_interval_in_open_state),
        "maxWaitDurationInHalfOpenState": s(&i.max_wait_duration_in_half_open_state),
        "permittedNumberOfCallsInHalfOpenState": s(&i.permitted_number_of_calls_in_half_open_state),
        "slidingWindowType": s(&i.sliding_window_type),
        "slidingWindowSize": s(&i.sliding_window_size),
        "minimumNumberOfCalls": s(&i.minimum_number_of_calls),
        "automaticTransitionFromOpenToHalfOpenEnabled": s(&i.automatic_transition_from_open_to_half_open_enabled),
        "transitionToStateAfterWaitDuration": s(&i.transition_to_state_after_wait_duration),
        "initialState": s(&i.initial_state),
        "writableStackTraceEnabled": s(&i.writable_stack_trace_enabled),
        "recordExceptions": s(&i.record_exceptions),
        "ignoreExceptions": s(&i.ignore_exceptions),
        "recordFailurePredicate": s(&i.record_failure_predicate),
        "ignoreExceptionPredicate": s(&i.ignore_exception_predicate),
        "recordResultPredicate": s(&i.record_result_predicate),
        "registerHealthIndicator": s(&i.register_health_indicator),
        "allowHealthIndicatorToFail": s(&i.allow_health_indicator_to_fail),
        "eventConsumerBufferSize": s(&i.event_consumer_buffer_size),
    })
}

/// One error as data: `{"file", "line", "column", "key", "value", "message", "allowed"}`.
/// `file`, `line` and `column` are `null` when the position is unknown, `value` when the
/// error has no value; a value from outside the files has its source in `file`
/// (`environment RESILIENCE4J_...`, `SPRING_APPLICATION_JSON`, `argument --...`) and `null`
/// `line` and `column`.
pub fn error_json(e: &ConfigError) -> Value {
    let o = e.origin.as_ref();
    let in_file = o.filter(|o| !o.is_outside());
    json!({
        "file": o.map(|o| o.file.to_string()),
        "line": in_file.map(|o| o.line),
        "column": in_file.map(|o| o.column),
        "key": e.key,
        "value": e.value,
        "message": e.message,
        "allowed": e.allowed,
    })
}

/// The whole report: the circuit breakers' `{"instances", "errors", "defaultConfig",
/// "sources"}`, the other modules' `{"retry", "timelimiter", "bulkhead", "threadpoolbulkhead",
/// "ratelimiter", "aspectOrder"}` (the shape of `NN.modules.expected.json`, see
/// [`crate::modules::ModulesConfig::report`]) with their `"moduleSources"`, and
/// `{"warnings", "errorDetails", "profiles"}`. `errors` maps an instance to Resilience4j's
/// message; `errorDetails` lists every error of every section as an object (see
/// [`error_json`]) with file, line, column, key, value, message and what is allowed.
pub fn report(loaded: &Loaded) -> Value {
    let c = &loaded.config;
    let mut instances = Map::new();
    let mut sources = Map::new();
    for (name, i) in &c.instances {
        instances.insert(name.clone(), instance_json(i));
        sources.insert(name.clone(), sources_json(i));
    }
    let mut errors = Map::new();
    for (name, e) in &c.errors {
        errors.insert(name.clone(), Value::from(e.message.clone()));
    }
    let default_config = match &c.default_config {
        Ok(d) => {
            sources.insert("<default>".into(), sources_json(d));
            instance_json(d)
        }
        Err(_) => Value::Null,
    };
    let mut out = json!({
        "instances": instances,
        "errors": errors,
        "defaultConfig": default_config,
        "warnings": loaded.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        "errorDetails": loaded.errors().into_iter().map(error_json).collect::<Vec<_>>(),
        "sources": sources,
        "moduleSources": loaded.modules.sources(),
        "profiles": c.profiles,
    });
    if let Value::Object(m) = &mut out {
        m.extend(loaded.modules.report());
        if loaded.shared_store != crate::SharedStoreConfig::default() {
            m.insert("sharedState".into(), loaded.shared_store.report());
        }
        if !loaded.budgets.is_empty() {
            m.insert("budgets".into(), loaded.budgets.report());
        }
        if !loaded.drills.instances.is_empty() {
            m.insert("drills".into(), loaded.drills.report());
        }
    }
    out
}
