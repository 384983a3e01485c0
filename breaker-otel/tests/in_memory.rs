//! The OpenTelemetry path against the SDK's in-memory exporter (issue #24, item 4): names as
//! Micrometer's OTLP registry sends Resilience4j's meters, units, attributes and values
//! through a trip and a recovery on a ManualClock, and every other module's instruments.

use std::sync::Arc;
use std::time::Duration;

use breaker_core::bulkhead::{BulkheadConfig, BulkheadRegistry};
use breaker_core::ratelimiter::{RateLimiterConfig, RateLimiterRegistry};
use breaker_core::retry::{RetryConfig, RetryRegistry};
use breaker_core::timelimiter::TimeLimiterRegistry;
use breaker_core::{CircuitBreakerConfig, ManualClock, Registry, State};
use breaker_otel::OtelPublisher;
use opentelemetry::metrics::MeterProvider;
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};

struct Harness {
    provider: SdkMeterProvider,
    exporter: InMemoryMetricExporter,
}

impl Harness {
    fn new() -> (Self, opentelemetry::metrics::Meter) {
        let exporter = InMemoryMetricExporter::default();
        let reader = PeriodicReader::builder(exporter.clone())
            // Never on its own during a test: only `collect` exports.
            .with_interval(Duration::from_secs(3600))
            .build();
        let provider = SdkMeterProvider::builder().with_reader(reader).build();
        let meter = provider.meter("resilience4j");
        (Harness { provider, exporter }, meter)
    }

    /// One collection, as an exporter receives it.
    fn collect(&self) -> ResourceMetrics {
        self.exporter.reset();
        self.provider.force_flush().unwrap();
        let mut all = self.exporter.get_finished_metrics().unwrap();
        all.pop().expect("one export")
    }
}

fn metric<'a>(rm: &'a ResourceMetrics, name: &str) -> &'a Metric {
    rm.scope_metrics()
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == name)
        .unwrap_or_else(|| panic!("no instrument {name}"))
}

fn attrs_match<'a>(mut have: impl Iterator<Item = &'a KeyValue>, want: &[(&str, &str)]) -> bool {
    let have: Vec<(String, String)> = have
        .by_ref()
        .map(|kv| (kv.key.to_string(), kv.value.to_string()))
        .collect();
    have.len() == want.len()
        && want
            .iter()
            .all(|(k, v)| have.iter().any(|(hk, hv)| hk == k && hv == v))
}

/// The value of gauge `name` at exactly the attributes `want`.
fn gauge(rm: &ResourceMetrics, name: &str, want: &[(&str, &str)]) -> f64 {
    match metric(rm, name).data() {
        AggregatedMetrics::F64(MetricData::Gauge(g)) => g
            .data_points()
            .find(|p| attrs_match(p.attributes(), want))
            .unwrap_or_else(|| panic!("no {name} point at {want:?}"))
            .value(),
        other => panic!("{name} is not an f64 gauge: {other:?}"),
    }
}

/// The value of monotonic sum `name` at exactly the attributes `want`.
fn sum(rm: &ResourceMetrics, name: &str, want: &[(&str, &str)]) -> u64 {
    match metric(rm, name).data() {
        AggregatedMetrics::U64(MetricData::Sum(s)) => {
            assert!(s.is_monotonic(), "{name} is a counter");
            s.data_points()
                .find(|p| attrs_match(p.attributes(), want))
                .unwrap_or_else(|| panic!("no {name} point at {want:?}"))
                .value()
        }
        other => panic!("{name} is not a u64 sum: {other:?}"),
    }
}

/// (count, sum, max) of histogram `name` at exactly the attributes `want`.
fn histogram(rm: &ResourceMetrics, name: &str, want: &[(&str, &str)]) -> (u64, f64, f64) {
    match metric(rm, name).data() {
        AggregatedMetrics::F64(MetricData::Histogram(h)) => {
            let p = h
                .data_points()
                .find(|p| attrs_match(p.attributes(), want))
                .unwrap_or_else(|| panic!("no {name} point at {want:?}"));
            (p.count(), p.sum(), p.max().unwrap())
        }
        other => panic!("{name} is not an f64 histogram: {other:?}"),
    }
}

const APP: (&str, &str) = ("application", "checkout");
const NAME: (&str, &str) = ("name", "backendA");

fn state_of(rm: &ResourceMetrics) -> Vec<(&'static str, f64)> {
    [
        "closed",
        "open",
        "half_open",
        "disabled",
        "forced_open",
        "metrics_only",
    ]
    .into_iter()
    .map(|s| {
        (
            s,
            gauge(
                rm,
                "resilience4j.circuitbreaker.state",
                &[APP, NAME, ("state", s)],
            ),
        )
    })
    .filter(|(_, v)| *v != 0.0)
    .collect()
}

#[test]
fn circuit_breaker_through_a_trip_and_a_recovery() {
    let (h, meter) = Harness::new();
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let breakers = Registry::with_default_config(
        CircuitBreakerConfig::builder()
            .sliding_window_size(4)
            .minimum_number_of_calls(4)
            .permitted_number_of_calls_in_half_open_state(1)
            .wait_duration_in_open_state(Duration::from_secs(10))
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap(),
    );
    OtelPublisher::new(&meter, [APP]).bind(&breakers);
    let cb = breakers.circuit_breaker("backendA");

    // Two successes of 10 ms, two failures of 30 ms (by the breaker's clock): 50 % of 4
    // calls reaches the default 50 % threshold and opens the breaker.
    for (ms, fail) in [(10, false), (30, true), (10, false), (30, true)] {
        let _ = cb.call_sync(|| {
            clock.advance(Duration::from_millis(ms));
            if fail {
                Err(std::io::Error::other("down"))
            } else {
                Ok(())
            }
        });
    }
    // Two rejections.
    for _ in 0..2 {
        assert!(cb.call_sync(|| Ok::<_, std::io::Error>(())).is_err());
    }
    assert_eq!(cb.state(), State::Open);

    let rm = h.collect();
    assert_eq!(state_of(&rm), [("open", 1.0)]);
    assert_eq!(
        gauge(
            &rm,
            "resilience4j.circuitbreaker.failure.rate",
            &[APP, NAME]
        ),
        50.0
    );
    assert_eq!(
        gauge(
            &rm,
            "resilience4j.circuitbreaker.slow.call.rate",
            &[APP, NAME]
        ),
        0.0
    );
    for kind in ["failed", "successful"] {
        assert_eq!(
            gauge(
                &rm,
                "resilience4j.circuitbreaker.buffered.calls",
                &[APP, NAME, ("kind", kind)]
            ),
            2.0,
            "{kind}"
        );
    }
    let calls = metric(&rm, "resilience4j.circuitbreaker.calls");
    assert_eq!(calls.unit(), "ms");
    assert_eq!(calls.description(), "Total number of successful calls");
    assert_eq!(
        histogram(
            &rm,
            "resilience4j.circuitbreaker.calls",
            &[APP, NAME, ("kind", "successful")]
        ),
        (2, 20.0, 10.0)
    );
    assert_eq!(
        histogram(
            &rm,
            "resilience4j.circuitbreaker.calls",
            &[APP, NAME, ("kind", "failed")]
        ),
        (2, 60.0, 30.0)
    );
    assert_eq!(
        sum(
            &rm,
            "resilience4j.circuitbreaker.not.permitted.calls",
            &[APP, NAME, ("kind", "not_permitted")]
        ),
        2
    );
    assert_eq!(
        metric(&rm, "resilience4j.circuitbreaker.state").unit(),
        "",
        "no Resilience4j gauge has a base unit"
    );

    // Recovery: the wait passes (a request strictly after it moves to HALF_OPEN), one trial call of 5 ms succeeds, the breaker closes with a
    // fresh window (failure rate -1: below minimumNumberOfCalls).
    clock.advance(Duration::from_millis(10_001));
    cb.call_sync(|| {
        clock.advance(Duration::from_millis(5));
        Ok::<_, std::io::Error>(())
    })
    .unwrap();
    assert_eq!(cb.state(), State::Closed);

    let rm = h.collect();
    assert_eq!(state_of(&rm), [("closed", 1.0)]);
    assert_eq!(
        gauge(
            &rm,
            "resilience4j.circuitbreaker.failure.rate",
            &[APP, NAME]
        ),
        -1.0
    );
    assert_eq!(
        gauge(
            &rm,
            "resilience4j.circuitbreaker.buffered.calls",
            &[APP, NAME, ("kind", "failed")]
        ),
        0.0
    );
    // Cumulative: 3 successes, 25 ms in all.
    assert_eq!(
        histogram(
            &rm,
            "resilience4j.circuitbreaker.calls",
            &[APP, NAME, ("kind", "successful")]
        ),
        (3, 25.0, 10.0)
    );
}

#[test]
fn every_other_module_has_its_instruments() {
    let (h, meter) = Harness::new();
    let retries = RetryRegistry::with_default_config(
        RetryConfig::builder()
            .max_attempts(2)
            .wait_duration(Duration::ZERO)
            .build()
            .unwrap(),
    );
    let bulkheads = BulkheadRegistry::with_default_config(
        BulkheadConfig::builder()
            .max_concurrent_calls(3)
            .build()
            .unwrap(),
    );
    let rate_limiters = RateLimiterRegistry::with_default_config(
        RateLimiterConfig::builder()
            .limit_for_period(10)
            .limit_refresh_period(Duration::from_secs(60))
            .build()
            .unwrap(),
    );
    let limiters = TimeLimiterRegistry::new();
    OtelPublisher::new(&meter, [APP])
        .bind_tagged(&retries, [("team", "payments")])
        .bind(&bulkheads)
        .bind(&rate_limiters)
        .bind(&limiters);

    let _retry = retries.retry("backendA");
    let bulkhead = bulkheads.bulkhead("inventory");
    let _held = bulkhead.try_acquire_permission().unwrap();
    let limiter = rate_limiters.rate_limiter("api");
    for _ in 0..4 {
        limiter.try_acquire_permission(1).unwrap();
    }
    let _tl = limiters.time_limiter("slow");

    let rm = h.collect();
    for kind in [
        "successful_without_retry",
        "successful_with_retry",
        "failed_without_retry",
        "failed_with_retry",
    ] {
        assert_eq!(
            sum(
                &rm,
                "resilience4j.retry.calls",
                &[APP, NAME, ("kind", kind), ("team", "payments")]
            ),
            0
        );
    }
    for kind in ["successful", "failed", "timeout"] {
        assert_eq!(
            sum(
                &rm,
                "resilience4j.timelimiter.calls",
                &[APP, ("name", "slow"), ("kind", kind)]
            ),
            0
        );
    }
    let inventory = [APP, ("name", "inventory")];
    assert_eq!(
        gauge(
            &rm,
            "resilience4j.bulkhead.available.concurrent.calls",
            &inventory
        ),
        2.0
    );
    assert_eq!(
        gauge(
            &rm,
            "resilience4j.bulkhead.max.allowed.concurrent.calls",
            &inventory
        ),
        3.0
    );
    let api = [APP, ("name", "api")];
    assert_eq!(
        gauge(&rm, "resilience4j.ratelimiter.available.permissions", &api),
        6.0
    );
    assert_eq!(
        gauge(&rm, "resilience4j.ratelimiter.waiting_threads", &api),
        0.0
    );
}
