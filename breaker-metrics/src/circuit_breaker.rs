//! The circuit breaker's meters (integration spec §3.2): gauges read from the breaker's
//! metrics at scrape time; the call timer and the not-permitted counter fed by its events,
//! only while a recorder is installed.

use std::sync::Arc;
use std::time::Duration;

use breaker_core::{CircuitBreaker, CircuitBreakerEvent, EventKind, State, SubscriptionId};
use metrics::{Counter, Gauge, Histogram};

use crate::family::Meters;
use crate::names::{self, KIND, STATE};
use crate::register::{counter, gauge, histogram, Tags};
use crate::window_max::{WindowMax, EXPIRY_NANOS};

/// `state` tag values, in [`State::ALL`] order: the enum names lower-cased.
const STATE_TAGS: [&str; 6] = [
    "closed",
    "open",
    "half_open",
    "disabled",
    "forced_open",
    "metrics_only",
];

/// The timer's `kind` tag values: `SUCCESS`, `ERROR`, `IGNORED_ERROR` events.
const CALL_KINDS: [&str; 3] = ["successful", "failed", "ignored"];

/// What the breaker's events feed.
struct PerCall {
    calls: [Histogram; 3],
    max: [WindowMax; 3],
    not_permitted: Counter,
}

impl PerCall {
    fn on_event(&self, e: &CircuitBreakerEvent) {
        let (i, elapsed) = match e.kind {
            EventKind::Success { elapsed } => (0, elapsed),
            EventKind::Error { elapsed, .. } => (1, elapsed),
            EventKind::IgnoredError { elapsed, .. } => (2, elapsed),
            EventKind::NotPermitted => {
                self.not_permitted.increment(1);
                return;
            }
            _ => return,
        };
        self.calls[i].record(elapsed.as_secs_f64());
        self.max[i].record(e.creation_time_nanos, elapsed.as_nanos() as u64);
    }
}

pub(crate) struct CircuitBreakerMeters {
    breaker: CircuitBreaker,
    live: bool,
    state: [Gauge; 6],
    buffered_failed: Gauge,
    buffered_successful: Gauge,
    slow_successful: Gauge,
    slow_failed: Gauge,
    failure_rate: Gauge,
    slow_call_rate: Gauge,
    calls_max: [Gauge; 3],
    per_call: Arc<PerCall>,
    subscription: Option<SubscriptionId>,
}

impl Meters for CircuitBreakerMeters {
    type Instance = CircuitBreaker;

    fn register(breaker: &CircuitBreaker, tags: &Tags, live: bool) -> Self {
        let kind = |k: &str| tags.with(KIND, k);
        let per_call = Arc::new(PerCall {
            calls: CALL_KINDS.map(|k| histogram(names::CB_CALLS, &kind(k))),
            max: [(); 3].map(|_| WindowMax::new(EXPIRY_NANOS)),
            not_permitted: counter(names::CB_NOT_PERMITTED_CALLS, &kind("not_permitted")),
        });
        let subscription = live.then(|| {
            let p = per_call.clone();
            breaker.subscribe(move |e| p.on_event(e))
        });
        CircuitBreakerMeters {
            breaker: breaker.clone(),
            live,
            state: STATE_TAGS.map(|s| gauge(names::CB_STATE, &tags.with(STATE, s))),
            buffered_failed: gauge(names::CB_BUFFERED_CALLS, &kind("failed")),
            buffered_successful: gauge(names::CB_BUFFERED_CALLS, &kind("successful")),
            slow_successful: gauge(names::CB_SLOW_CALLS, &kind("successful")),
            slow_failed: gauge(names::CB_SLOW_CALLS, &kind("failed")),
            failure_rate: gauge(names::CB_FAILURE_RATE, tags),
            slow_call_rate: gauge(names::CB_SLOW_CALL_RATE, tags),
            calls_max: CALL_KINDS.map(|k| gauge(names::CB_CALLS_MAX, &kind(k))),
            per_call,
            subscription,
        }
    }

    fn live(&self) -> bool {
        self.live
    }

    fn instance(&self) -> &CircuitBreaker {
        &self.breaker
    }

    fn refresh(&self) {
        let m = self.breaker.metrics();
        for (i, s) in State::ALL.iter().enumerate() {
            self.state[i].set(if *s == m.state { 1.0 } else { 0.0 });
        }
        self.buffered_failed.set(m.number_of_failed_calls);
        self.buffered_successful.set(m.number_of_successful_calls);
        self.slow_successful.set(m.number_of_slow_successful_calls);
        self.slow_failed.set(m.number_of_slow_failed_calls);
        self.failure_rate.set(m.failure_rate);
        self.slow_call_rate.set(m.slow_call_rate);
        let now = self.breaker.clock().recent_nanos();
        for i in 0..3 {
            let max = Duration::from_nanos(self.per_call.max[i].poll(now));
            self.calls_max[i].set(max.as_secs_f64());
        }
    }

    fn detach(&self) {
        if let Some(id) = self.subscription {
            self.breaker.unsubscribe(id);
        }
    }
}
