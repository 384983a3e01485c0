//! What sharing a breaker's state through Redis costs per call (issue #16): the same breaker
//! with no store (local) and with a `breaker-redis` store attached (shared), side by side
//! (A, B, A, B) in one process, against a `redis-server` the bench starts on a free
//! loopback port (skipped with a message when it is not installed).
//!
//! CLOSED and OPEN calls never talk to Redis: the figures show the hook's cost. A HALF_OPEN
//! trial call takes two round trips (lease, outcome): the figure is Redis's latency.
//!
//! `cargo bench -p breaker-bench --bench shared_state` (about 30 s).

use std::time::Duration;

use breaker_bench::redis_server::start_redis;
use breaker_redis::{RedisStore, RedisStoreOptions};
use criterion::{criterion_group, criterion_main, Criterion};
use resilience4rs::{CircuitBreaker, CircuitBreakerConfig};

fn config(permitted: i64) -> CircuitBreakerConfig {
    CircuitBreakerConfig::builder()
        .permitted_number_of_calls_in_half_open_state(permitted)
        .minimum_number_of_calls(permitted)
        .wait_duration_in_open_state(Duration::from_secs(3600))
        .build()
        .unwrap()
}

fn pair(url: &str, name: &str, permitted: i64) -> (CircuitBreaker, CircuitBreaker, RedisStore) {
    let local = CircuitBreaker::new(format!("{name}-local"), config(permitted));
    let shared = CircuitBreaker::new(format!("{name}-shared"), config(permitted));
    let store = RedisStore::open(url, RedisStoreOptions::default()).unwrap();
    store.attach(&shared).unwrap();
    (local, shared, store)
}

fn shared_state(c: &mut Criterion) {
    let Some((_server, url)) = start_redis() else {
        eprintln!("SKIPPED shared_state bench: redis-server is not installed");
        return;
    };
    let mut g = c.benchmark_group("shared_state");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    g.sample_size(30);

    let (local, shared, _s1) = pair(&url, "closed", 10);
    for round in 1..=2 {
        for (side, cb) in [("local", &local), ("shared", &shared)] {
            g.bench_function(format!("closed permit, {side} ({round})"), |b| {
                b.iter(|| cb.try_acquire_permission().unwrap().on_success())
            });
        }
    }

    let (local, shared, _s2) = pair(&url, "open", 10);
    local.transition_to_open_state().unwrap();
    shared.transition_to_open_state().unwrap();
    for round in 1..=2 {
        for (side, cb) in [("local", &local), ("shared", &shared)] {
            g.bench_function(format!("open rejection, {side} ({round})"), |b| {
                b.iter(|| cb.try_acquire_permission().unwrap_err())
            });
        }
    }

    // HALF_OPEN that never decides: every shared trial is a lease and an outcome in Redis.
    let (local, shared, _s3) = pair(&url, "half", 100_000_000);
    for cb in [&local, &shared] {
        cb.transition_to_open_state().unwrap();
        cb.transition_to_half_open_state().unwrap();
    }
    for round in 1..=2 {
        for (side, cb) in [("local", &local), ("shared", &shared)] {
            g.bench_function(format!("half-open trial, {side} ({round})"), |b| {
                b.iter(|| cb.try_acquire_permission().unwrap().on_success())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, shared_state);
criterion_main!(benches);
