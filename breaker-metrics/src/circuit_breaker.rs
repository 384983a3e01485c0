//! The circuit breaker's meters (integration spec §3.2): gauges read from the breaker's
//! metrics at scrape time; the call timer and the not-permitted counter fed by its events,
//! only while a recorder is installed.

use std::sync::Arc;
use std::time::Duration;

use breaker_core::{CircuitBreaker, CircuitBreakerEvent, EventKind, SubscriptionId};
use metrics::{Counter, Gauge, Histogram};

use crate::family::Meters;
use crate::names::{self, KIND};
use crate::readings::{self, CALL_KINDS};
use crate::register::{counter, gauge, histogram, Tags};
use crate::window_max::{WindowMax, EXPIRY_NANOS};

/// What the breaker's events feed.
struct PerCall {
    calls: [Histogram; 3],
    max: [WindowMax; 3],
    not_permitted: Counter,
}

impl PerCall {
    fn on_event(&self, e: &CircuitBreakerEvent) {
        let (i, elapsed) = match &e.kind {
            EventKind::Success { elapsed } => (0, elapsed),
            EventKind::Error { elapsed, .. } => (1, elapsed),
            EventKind::IgnoredError { elapsed, .. } => (2, elapsed),
            EventKind::NotPermitted => {
                self.not_permitted.increment(1);
                return;
            }
            _ => return,
        };
        let elapsed = *elapsed;
        self.calls[i].record(elapsed.as_secs_f64());
        self.max[i].record(e.creation_time_nanos, elapsed.as_nanos() as u64);
    }
}

pub(crate) struct CircuitBreakerMeters {
    breaker: CircuitBreaker,
    live: bool,
    /// In the order of [`readings::circuit_breaker`].
    gauges: [Gauge; 12],
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
            gauges: readings::circuit_breaker(breaker).map(|r| match r.tag {
                Some((k, v)) => gauge(r.meter, &tags.with(k, v)),
                None => gauge(r.meter, tags),
            }),
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
        for (g, r) in self
            .gauges
            .iter()
            .zip(readings::circuit_breaker(&self.breaker))
        {
            g.set(r.value);
        }
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
