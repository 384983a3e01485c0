//! The JSON bodies of the endpoints (integration spec §4.3): Resilience4j's DTOs, field for
//! field, nulls written as `null`.

use breaker_core::bulkhead::BulkheadEvent;
use breaker_core::ratelimiter::RateLimiterEvent;
use breaker_core::retry::RetryEvent;
use breaker_core::timelimiter::TimeLimiterEvent;
use breaker_core::{java_float, CircuitBreaker, CircuitBreakerEvent, EventKind, Throwable};
use serde::Serialize;

use crate::time::zoned_date_time;

/// A Java `float` with `%`, as Resilience4j's endpoints print rates: `"50.0%"`, `"-1.0%"`.
pub(crate) fn percent(v: f32) -> String {
    format!("{}%", java_float(v))
}

/// `CircuitBreakerDetails` (`GET /actuator/circuitbreakers`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CircuitBreakerDetails {
    pub failure_rate: String,
    pub slow_call_rate: String,
    pub failure_rate_threshold: String,
    pub slow_call_rate_threshold: String,
    pub buffered_calls: u32,
    pub failed_calls: u32,
    pub slow_calls: u32,
    pub slow_failed_calls: u32,
    pub not_permitted_calls: u64,
    pub state: &'static str,
}

impl CircuitBreakerDetails {
    pub(crate) fn of(cb: &CircuitBreaker) -> Self {
        let m = cb.metrics();
        let c = cb.config();
        CircuitBreakerDetails {
            failure_rate: percent(m.failure_rate),
            slow_call_rate: percent(m.slow_call_rate),
            failure_rate_threshold: percent(c.failure_rate_threshold()),
            slow_call_rate_threshold: percent(c.slow_call_rate_threshold()),
            buffered_calls: m.number_of_buffered_calls,
            failed_calls: m.number_of_failed_calls,
            slow_calls: m.number_of_slow_calls,
            slow_failed_calls: m.number_of_slow_failed_calls,
            not_permitted_calls: m.number_of_not_permitted_calls,
            state: m.state.name(),
        }
    }
}

/// The health details of one breaker (spec §5.3), in Resilience4j's order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CircuitBreakerHealthDetails {
    pub failure_rate: String,
    pub failure_rate_threshold: String,
    pub slow_call_rate: String,
    pub slow_call_rate_threshold: String,
    pub buffered_calls: u32,
    pub slow_calls: u32,
    pub slow_failed_calls: u32,
    pub failed_calls: u32,
    pub not_permitted_calls: u64,
    pub state: &'static str,
}

impl From<CircuitBreakerDetails> for CircuitBreakerHealthDetails {
    fn from(d: CircuitBreakerDetails) -> Self {
        CircuitBreakerHealthDetails {
            failure_rate: d.failure_rate,
            failure_rate_threshold: d.failure_rate_threshold,
            slow_call_rate: d.slow_call_rate,
            slow_call_rate_threshold: d.slow_call_rate_threshold,
            buffered_calls: d.buffered_calls,
            slow_calls: d.slow_calls,
            slow_failed_calls: d.slow_failed_calls,
            failed_calls: d.failed_calls,
            not_permitted_calls: d.not_permitted_calls,
            state: d.state,
        }
    }
}

/// `CircuitBreakerEventDTO`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CircuitBreakerEventDto {
    pub circuit_breaker_name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub creation_time: String,
    pub error_message: Option<String>,
    pub duration_in_ms: Option<u64>,
    pub state_transition: Option<String>,
}

impl From<&CircuitBreakerEvent> for CircuitBreakerEventDto {
    fn from(e: &CircuitBreakerEvent) -> Self {
        let (error_message, duration_in_ms, state_transition) = match &e.kind {
            EventKind::Success { elapsed } => (None, Some(elapsed.as_millis() as u64), None),
            EventKind::Error { elapsed, error } | EventKind::IgnoredError { elapsed, error } => (
                error.as_ref().map(throwable),
                Some(elapsed.as_millis() as u64),
                None,
            ),
            EventKind::StateTransition { from, to } => (
                None,
                None,
                Some(format!("{}_TO_{}", from.name(), to.name())),
            ),
            _ => (None, None, None),
        };
        CircuitBreakerEventDto {
            circuit_breaker_name: e.circuit_breaker_name.to_string(),
            kind: e.event_type().name(),
            creation_time: zoned_date_time(e.creation_time_nanos),
            error_message,
            duration_in_ms,
            state_transition,
        }
    }
}

/// Java's `Throwable.toString()`: `<class>: <message>`, or the class alone.
fn throwable(t: &Throwable) -> String {
    if t.message().is_empty() {
        t.class().to_string()
    } else {
        format!("{}: {}", t.class(), t.message())
    }
}

/// `RetryEventDTO`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RetryEventDto {
    pub retry_name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub creation_time: String,
    pub error_message: Option<String>,
    pub number_of_attempts: u32,
}

impl From<&RetryEvent> for RetryEventDto {
    fn from(e: &RetryEvent) -> Self {
        RetryEventDto {
            retry_name: e.retry_name.to_string(),
            kind: e.event_type.name(),
            creation_time: zoned_date_time(e.creation_time_nanos),
            error_message: e.last_throwable.as_ref().map(throwable),
            number_of_attempts: e.number_of_retry_attempts,
        }
    }
}

/// `BulkheadEventDTO`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BulkheadEventDto {
    pub bulkhead_name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub creation_time: String,
}

impl From<&BulkheadEvent> for BulkheadEventDto {
    fn from(e: &BulkheadEvent) -> Self {
        BulkheadEventDto {
            bulkhead_name: e.bulkhead_name.to_string(),
            kind: e.event_type.name(),
            creation_time: zoned_date_time(e.creation_time_nanos),
        }
    }
}

/// `RateLimiterEventDTO`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RateLimiterEventDto {
    pub rate_limiter_name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub creation_time: String,
}

impl From<&RateLimiterEvent> for RateLimiterEventDto {
    fn from(e: &RateLimiterEvent) -> Self {
        RateLimiterEventDto {
            rate_limiter_name: e.rate_limiter_name.to_string(),
            kind: e.event_type.name(),
            creation_time: zoned_date_time(e.creation_time_nanos),
        }
    }
}

/// `TimeLimiterEventDTO`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TimeLimiterEventDto {
    pub time_limiter_name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub creation_time: String,
}

impl From<&TimeLimiterEvent> for TimeLimiterEventDto {
    fn from(e: &TimeLimiterEvent) -> Self {
        TimeLimiterEventDto {
            time_limiter_name: e.time_limiter_name.to_string(),
            kind: e.event_type.name(),
            creation_time: zoned_date_time(e.creation_time_nanos),
        }
    }
}
