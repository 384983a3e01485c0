//! The meter table as data: for each module, every gauge and instance-kept counter of one
//! instance, with its meter name ([`names`]), its extra tag (`kind` or
//! `state`) and its value, from one reading of the instance's metrics.
//!
//! The `metrics`-facade publisher of this crate and `breaker-otel`'s OpenTelemetry
//! publisher both read instances through these functions, so the two expose the same meters
//! with the same tags and values. The circuit breaker's call timer and not-permitted counter
//! are not here: they are fed by the breaker's events ([`CALL_KINDS`]).

use breaker_core::bulkhead::{Bulkhead, ThreadPoolBulkhead};
use breaker_core::ratelimiter::RateLimiter;
use breaker_core::retry::Retry;
use breaker_core::timelimiter::TimeLimiter;
use breaker_core::{CircuitBreaker, State};

use crate::names::{self, KIND, STATE};

/// What kind of meter a reading feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeterKind {
    /// A gauge (Micrometer `Gauge`): the value as read.
    Gauge,
    /// A monotonic counter the instance keeps itself (Micrometer `FunctionCounter`): the
    /// running total since the instance was created.
    Counter,
}

/// One value of one instance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// The meter's name in [`names`] (Micrometer's dotted name with the
    /// Prometheus suffix).
    pub meter: &'static str,
    /// Gauge or counter.
    pub kind: MeterKind,
    /// The tag this value adds to the instance's tags (`kind` or `state`), if any.
    pub tag: Option<(&'static str, &'static str)>,
    /// The value.
    pub value: f64,
}

const fn gauge(
    meter: &'static str,
    tag: Option<(&'static str, &'static str)>,
    value: f64,
) -> Reading {
    Reading {
        meter,
        kind: MeterKind::Gauge,
        tag,
        value,
    }
}

const fn counter(meter: &'static str, kind: &'static str, value: u64) -> Reading {
    Reading {
        meter,
        kind: MeterKind::Counter,
        tag: Some((KIND, kind)),
        value: value as f64,
    }
}

/// `state` tag values, in [`State::ALL`] order: the enum names lower-cased.
pub const STATE_TAGS: [&str; 6] = [
    "closed",
    "open",
    "half_open",
    "disabled",
    "forced_open",
    "metrics_only",
];

/// The call timer's `kind` tag values, for `SUCCESS`, `ERROR` and `IGNORED_ERROR` events.
pub const CALL_KINDS: [&str; 3] = ["successful", "failed", "ignored"];

/// The circuit breaker's gauges (spec §3.2): six state series (1 for the current state),
/// buffered failed / successful calls, slow successful / failed calls, the failure and
/// slow-call rates (percent, -1 below `minimumNumberOfCalls`). One `metrics()` reading.
pub fn circuit_breaker(breaker: &CircuitBreaker) -> [Reading; 12] {
    let m = breaker.metrics();
    let state = |i: usize| {
        let on = State::ALL[i] == m.state;
        gauge(
            names::CB_STATE,
            Some((STATE, STATE_TAGS[i])),
            if on { 1.0 } else { 0.0 },
        )
    };
    [
        state(0),
        state(1),
        state(2),
        state(3),
        state(4),
        state(5),
        gauge(
            names::CB_BUFFERED_CALLS,
            Some((KIND, "failed")),
            m.number_of_failed_calls.into(),
        ),
        gauge(
            names::CB_BUFFERED_CALLS,
            Some((KIND, "successful")),
            m.number_of_successful_calls.into(),
        ),
        gauge(
            names::CB_SLOW_CALLS,
            Some((KIND, "successful")),
            m.number_of_slow_successful_calls.into(),
        ),
        gauge(
            names::CB_SLOW_CALLS,
            Some((KIND, "failed")),
            m.number_of_slow_failed_calls.into(),
        ),
        gauge(names::CB_FAILURE_RATE, None, m.failure_rate.into()),
        gauge(names::CB_SLOW_CALL_RATE, None, m.slow_call_rate.into()),
    ]
}

/// `resilience4j.retry.calls` (§3.3), one counter per `kind`.
pub fn retry(retry: &Retry) -> [Reading; 4] {
    let m = retry.metrics();
    [
        counter(
            names::RETRY_CALLS,
            "successful_without_retry",
            m.number_of_successful_calls_without_retry_attempt,
        ),
        counter(
            names::RETRY_CALLS,
            "successful_with_retry",
            m.number_of_successful_calls_with_retry_attempt,
        ),
        counter(
            names::RETRY_CALLS,
            "failed_without_retry",
            m.number_of_failed_calls_without_retry_attempt,
        ),
        counter(
            names::RETRY_CALLS,
            "failed_with_retry",
            m.number_of_failed_calls_with_retry_attempt,
        ),
    ]
}

/// `resilience4j.timelimiter.calls` (§3.7), one counter per `kind`.
pub fn time_limiter(limiter: &TimeLimiter) -> [Reading; 3] {
    let m = limiter.metrics();
    [
        counter(names::TL_CALLS, "successful", m.number_of_successful_calls),
        counter(names::TL_CALLS, "failed", m.number_of_failed_calls),
        counter(names::TL_CALLS, "timeout", m.number_of_timeout_calls),
    ]
}

/// The semaphore bulkhead's two gauges (§3.4).
pub fn bulkhead(bulkhead: &Bulkhead) -> [Reading; 2] {
    let m = bulkhead.metrics();
    [
        gauge(
            names::BH_AVAILABLE,
            None,
            m.available_concurrent_calls.into(),
        ),
        gauge(
            names::BH_MAX_ALLOWED,
            None,
            m.max_allowed_concurrent_calls.into(),
        ),
    ]
}

/// The thread-pool bulkhead's seven gauges (§3.5).
pub fn thread_pool_bulkhead(pool: &ThreadPoolBulkhead) -> [Reading; 7] {
    let m = pool.metrics();
    [
        gauge(names::TP_QUEUE_DEPTH, None, m.queue_depth.into()),
        gauge(names::TP_QUEUE_CAPACITY, None, m.queue_capacity.into()),
        gauge(names::TP_THREAD_POOL_SIZE, None, m.thread_pool_size.into()),
        gauge(
            names::TP_MAX_THREAD_POOL_SIZE,
            None,
            m.maximum_thread_pool_size.into(),
        ),
        gauge(
            names::TP_CORE_THREAD_POOL_SIZE,
            None,
            m.core_thread_pool_size.into(),
        ),
        gauge(
            names::TP_ACTIVE_THREAD_COUNT,
            None,
            m.active_thread_count.into(),
        ),
        gauge(
            names::TP_AVAILABLE_THREAD_COUNT,
            None,
            m.available_thread_count.into(),
        ),
    ]
}

/// The rate limiter's two gauges (§3.6); available permissions may be negative.
pub fn rate_limiter(limiter: &RateLimiter) -> [Reading; 2] {
    let m = limiter.metrics();
    [
        gauge(
            names::RL_AVAILABLE_PERMISSIONS,
            None,
            m.available_permissions.into(),
        ),
        gauge(
            names::RL_WAITING_THREADS,
            None,
            m.number_of_waiting_threads.into(),
        ),
    ]
}
