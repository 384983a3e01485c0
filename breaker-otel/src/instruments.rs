//! The instruments: one observable gauge or counter per meter of the table, observed from
//! every bound instance at collection time, and the two instruments fed by breaker events.

use std::sync::Arc;

use breaker_core::{CircuitBreakerEvent, EventKind};
use breaker_metrics::names::{self, DESCRIPTIONS, KIND};
use breaker_metrics::readings::CALL_KINDS;
use opentelemetry::metrics::{Counter, Histogram, Meter};
use opentelemetry::KeyValue;

/// Micrometer OTLP's name for a meter of [`names`]: the dotted name without the
/// Prometheus suffix (`.total` of counters, `.seconds` of the timer).
pub(crate) fn otel_name(meter: &'static str) -> &'static str {
    meter
        .strip_suffix(".total")
        .or_else(|| meter.strip_suffix(".seconds"))
        .unwrap_or(meter)
}

/// Whether a meter of [`names`] is a counter (its Prometheus name ends in `_total`).
fn is_counter(meter: &str) -> bool {
    meter.ends_with(".total")
}

/// The meters fed by events, not read from the instances.
const EVENT_FED: [&str; 3] = [
    names::CB_CALLS,
    names::CB_CALLS_MAX,
    names::CB_NOT_PERMITTED_CALLS,
];

/// Registers an observable instrument for every read meter of the table.
/// The callbacks hold the publisher's state: they observe for as long as the meter provider
/// lives, whether or not the publisher is kept.
pub(crate) fn observe_all<S>(meter: &Meter, source: &Arc<S>)
where
    S: Fn(&'static str, &mut dyn FnMut(f64, &[KeyValue])) + Send + Sync + 'static,
{
    for (name, description) in DESCRIPTIONS {
        if EVENT_FED.contains(&name) {
            continue;
        }
        let source = source.clone();
        if is_counter(name) {
            meter
                .u64_observable_counter(otel_name(name))
                .with_description(description)
                .with_callback(move |o| source(name, &mut |v, attrs| o.observe(v as u64, attrs)))
                .build();
        } else {
            meter
                .f64_observable_gauge(otel_name(name))
                .with_description(description)
                .with_callback(move |o| source(name, &mut |v, attrs| o.observe(v, attrs)))
                .build();
        }
    }
}

/// `resilience4j.circuitbreaker.calls` and `resilience4j.circuitbreaker.not.permitted.calls`,
/// fed by each bound breaker's events.
#[doc(hidden)]
pub struct PerCall {
    calls: Histogram<f64>,
    not_permitted: Counter<u64>,
}

impl PerCall {
    pub(crate) fn new(meter: &Meter) -> Self {
        let description = |n: &str| {
            DESCRIPTIONS
                .iter()
                .find(|(name, _)| *name == n)
                .map_or("", |(_, d)| d)
        };
        PerCall {
            calls: meter
                .f64_histogram(otel_name(names::CB_CALLS))
                .with_unit("ms")
                .with_description(description(names::CB_CALLS))
                .build(),
            not_permitted: meter
                .u64_counter(otel_name(names::CB_NOT_PERMITTED_CALLS))
                .with_description(description(names::CB_NOT_PERMITTED_CALLS))
                .build(),
        }
    }

    /// Records one breaker event; `attrs` are the breaker's attributes (name included).
    pub(crate) fn on_event(&self, e: &CircuitBreakerEvent, attrs: &[KeyValue]) {
        let (kind, elapsed) = match &e.kind {
            EventKind::Success { elapsed } => (CALL_KINDS[0], elapsed),
            EventKind::Error { elapsed, .. } => (CALL_KINDS[1], elapsed),
            EventKind::IgnoredError { elapsed, .. } => (CALL_KINDS[2], elapsed),
            EventKind::NotPermitted => {
                self.not_permitted
                    .add(1, &with(attrs, KIND, "not_permitted"));
                return;
            }
            _ => return,
        };
        self.calls
            .record(elapsed.as_secs_f64() * 1000.0, &with(attrs, KIND, kind));
    }
}

/// `attrs` plus `key = value`.
pub(crate) fn with(attrs: &[KeyValue], key: &'static str, value: &'static str) -> Vec<KeyValue> {
    let mut v = Vec::with_capacity(attrs.len() + 1);
    v.extend_from_slice(attrs);
    v.push(KeyValue::new(key, value));
    v
}
