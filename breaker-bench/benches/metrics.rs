//! What Resilience4j's meters cost per call (issue #13): a breaker whose registry is bound to
//! a `MetricsPublisher` while a `metrics-exporter-prometheus` recorder is installed (its
//! events feed the call timer and the not-permitted counter) against the same breaker bound
//! with no recorder installed (no subscription: the plain breaker). The two sides alternate
//! (A, B, A, B) in one process; BENCHMARKS.md has the numbers.
//!
//! `cargo bench -p breaker-bench --bench metrics` (about 40 s).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use metrics_exporter_prometheus::PrometheusBuilder;
use resilience4rs::metrics::MetricsPublisher;
use resilience4rs::{CircuitBreaker, CircuitBreakerConfig, Registry};

/// A breaker with one subscriber that does nothing: what any event subscription costs in
/// breaker-core, the share of the meters' cost that is not theirs.
fn noop_subscribed() -> CircuitBreaker {
    let cb = Registry::new().circuit_breaker("noop");
    cb.subscribe(|_| {});
    cb
}

fn breakers() -> (CircuitBreaker, CircuitBreaker, MetricsPublisher) {
    let publisher = MetricsPublisher::new([("application", "bench")]);
    // No recorder: bound, but nothing subscribes.
    let plain = Registry::new();
    let plain_cb = plain.circuit_breaker("plain");
    publisher.bind(&plain);
    // A recorder installed while binding: the breaker's events feed the meters.
    let recorder = Box::leak(Box::new(PrometheusBuilder::new().build_recorder()));
    // Scraped every second, as in production (it drains the timer's samples).
    let handle = recorder.handle();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_secs(1));
        let _ = handle.render();
    });
    let metered = Registry::new();
    let metered_cb = metered.circuit_breaker("metered");
    metrics::with_local_recorder(recorder, || {
        publisher.bind(&metered);
    });
    (plain_cb, metered_cb, publisher)
}

fn open(cb: &CircuitBreaker) {
    let forced = CircuitBreakerConfig::builder()
        .wait_duration_in_open_state(Duration::from_secs(3600))
        .build()
        .unwrap();
    cb.replace_config(forced);
    cb.transition_to_open_state().unwrap();
}

fn per_call(c: &mut Criterion) {
    let mut g = c.benchmark_group("metrics_per_call");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    g.sample_size(30);
    let (plain, metered, _publisher) = breakers();
    let noop = noop_subscribed();
    for round in 1..=2 {
        g.bench_function(format!("closed permit, no recorder ({round})"), |b| {
            b.iter(|| plain.try_acquire_permission().unwrap().on_success())
        });
        g.bench_function(format!("closed permit, recorder ({round})"), |b| {
            b.iter(|| metered.try_acquire_permission().unwrap().on_success())
        });
        g.bench_function(format!("closed permit, no-op subscriber ({round})"), |b| {
            b.iter(|| noop.try_acquire_permission().unwrap().on_success())
        });
    }
    let (plain, metered, _publisher) = breakers();
    let noop = noop_subscribed();
    open(&plain);
    open(&metered);
    open(&noop);
    for round in 1..=2 {
        g.bench_function(format!("open rejection, no recorder ({round})"), |b| {
            b.iter(|| plain.try_acquire_permission().unwrap_err())
        });
        g.bench_function(format!("open rejection, recorder ({round})"), |b| {
            b.iter(|| metered.try_acquire_permission().unwrap_err())
        });
        g.bench_function(format!("open rejection, no-op subscriber ({round})"), |b| {
            b.iter(|| noop.try_acquire_permission().unwrap_err())
        });
    }
    g.finish();
}

criterion_group!(benches, per_call);
criterion_main!(benches);
