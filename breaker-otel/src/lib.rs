//! Resilience4j's meters for breaker through the [OpenTelemetry](https://docs.rs/opentelemetry)
//! metrics API, named as Micrometer's OTLP registry (`micrometer-registry-otlp`) names
//! Resilience4j's Micrometer meters, with the same tags as attributes. Export them with any
//! OpenTelemetry exporter (OTLP through `opentelemetry-otlp`, see `examples/otlp.rs`).
//!
//! Its own crate (facade feature `otel`) so that a service exporting to Prometheus compiles
//! none of the `opentelemetry` crates.
//!
//! | module | instruments | attributes |
//! |---|---|---|
//! | circuit breaker | `resilience4j.circuitbreaker.state` (6 series, 1 for the current state), `.buffered.calls`, `.slow.calls`, `.failure.rate`, `.slow.call.rate` (observable gauges); `resilience4j.circuitbreaker.calls` (histogram, unit `ms`); `resilience4j.circuitbreaker.not.permitted.calls` (counter) | `name`, `state`, `kind` |
//! | retry | `resilience4j.retry.calls` (observable counter) | `name`, `kind` |
//! | time limiter | `resilience4j.timelimiter.calls` (observable counter) | `name`, `kind` |
//! | bulkhead | `resilience4j.bulkhead.available.concurrent.calls`, `.max.allowed.concurrent.calls` (observable gauges) | `name` |
//! | thread-pool bulkhead | `resilience4j.bulkhead.queue.depth`, `.queue.capacity`, `.thread.pool.size`, `.max.thread.pool.size`, `.core.thread.pool.size`, `.active.thread.count`, `.available.thread.count` | `name` |
//! | rate limiter | `resilience4j.ratelimiter.available.permissions`, `resilience4j.ratelimiter.waiting_threads` | `name` |
//!
//! Plus the publisher's attributes (Spring's `management.metrics.tags.*`, e.g.
//! `application`) and each registry's (`resilience4j.<module>.tags`).
//!
//! Names are Micrometer's dotted names without the Prometheus suffixes (`_total`,
//! `_seconds`), as Micrometer's OTLP registry sends them; the call timer is a histogram in
//! milliseconds (unit `ms`), Micrometer OTLP's default base time unit, with the SDK's
//! min/max per data point in place of Prometheus's `_max` gauge. No Resilience4j gauge or
//! counter has a base unit, so their unit is empty. The meter table (names, tags and how
//! each value is read) is `breaker_metrics`' ([`breaker_metrics::readings`]), so the
//! Prometheus and OpenTelemetry paths expose the same meters.
//!
//! ```
//! use breaker_core::Registry;
//! use breaker_otel::OtelPublisher;
//!
//! let meter = opentelemetry::global::meter("resilience4j");
//! let registry = Registry::new();
//! let publisher = OtelPublisher::new(&meter, [("application", "checkout")]);
//! publisher.bind(&registry);
//! registry.circuit_breaker("payments"); // its meters are observed at each collection
//! ```
//!
//! Gauges and the instance-kept counters are observed at each collection (a periodic
//! reader's interval), one reading of an instance per instrument; the call histogram and
//! the not-permitted counter are fed by each breaker's events, which a bound breaker
//! therefore builds (a call then costs what it costs with any event subscriber).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bind;
mod instruments;

pub use bind::OtelRegistry;

use std::sync::{Arc, Mutex};

use opentelemetry::metrics::Meter;
use opentelemetry::KeyValue;

use crate::bind::Family;
use crate::instruments::PerCall;

/// Publishes the meters of bound registries through an OpenTelemetry [`Meter`]: every
/// instance that exists when a registry is bound and every one created later (Micrometer's
/// `EntryAdded`); a removed one is no longer observed and its breaker is unsubscribed
/// (`EntryRemoved`).
///
/// Cheap to clone; clones share everything. Instruments are created once, by
/// [`new`](Self::new): create one publisher per meter.
#[derive(Clone)]
pub struct OtelPublisher {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    /// The publisher's attributes, sorted by key.
    attributes: Vec<KeyValue>,
    /// Every bound registry's instances.
    families: Mutex<Vec<Arc<dyn Family>>>,
    /// The instruments fed by breaker events.
    per_call: Arc<PerCall>,
}

impl Inner {
    pub(crate) fn families(&self) -> Vec<Arc<dyn Family>> {
        self.families
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl std::fmt::Debug for OtelPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelPublisher")
            .field("attributes", &self.inner.attributes)
            .finish_non_exhaustive()
    }
}

impl OtelPublisher {
    /// Creates every instrument on `meter` and a publisher that adds `attributes` to every
    /// measurement (Spring Boot's `management.metrics.tags.*`, e.g. `application`).
    pub fn new<K: Into<String>, V: Into<String>>(
        meter: &Meter,
        attributes: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let inner = Arc::new(Inner {
            attributes: sorted(attributes),
            families: Mutex::new(Vec::new()),
            per_call: Arc::new(PerCall::new(meter)),
        });
        // Hands every bound instance's value of a meter to the instrument's callback.
        let observed = Arc::clone(&inner);
        let source = Arc::new(
            move |meter: &'static str, f: &mut dyn FnMut(f64, &[KeyValue])| {
                for family in observed.families() {
                    family.observe(meter, f);
                }
            },
        );
        instruments::observe_all(meter, &source);
        OtelPublisher { inner }
    }

    /// Publishes the meters of every instance of `registry`, now and later.
    pub fn bind<R: OtelRegistry>(&self, registry: &R) -> &Self {
        self.bind_tagged(registry, std::iter::empty::<(String, String)>())
    }

    /// [`bind`](Self::bind), adding `attributes` to the registry's meters (Resilience4j's
    /// `resilience4j.<module>.tags`; they win over the publisher's on the same key).
    pub fn bind_tagged<R: OtelRegistry, K: Into<String>, V: Into<String>>(
        &self,
        registry: &R,
        attributes: impl IntoIterator<Item = (K, V)>,
    ) -> &Self {
        let mut all: Vec<(String, String)> = self
            .inner
            .attributes
            .iter()
            .map(|kv| (kv.key.to_string(), kv.value.to_string()))
            .collect();
        for (k, v) in attributes {
            let (k, v) = (k.into(), v.into());
            all.retain(|(key, _)| *key != k);
            all.push((k, v));
        }
        let family = registry.family(sorted(all), self.inner.per_call.clone());
        self.inner
            .families
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(family);
        self
    }
}

/// `pairs` as attributes, sorted by key (as Micrometer sorts tags).
fn sorted<K: Into<String>, V: Into<String>>(
    pairs: impl IntoIterator<Item = (K, V)>,
) -> Vec<KeyValue> {
    let mut v: Vec<(String, String)> = pairs
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    v.sort();
    v.into_iter().map(|(k, v)| KeyValue::new(k, v)).collect()
}
