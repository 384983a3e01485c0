//! What one clock reading costs on this machine: the options for timing a protected call.
//!
//! `cargo bench -p breaker-bench --bench clocks`

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use criterion::{criterion_group, criterion_main, Criterion};
use resilience4rs::{Clock, SystemClock};

fn clocks(c: &mut Criterion) {
    let mut g = c.benchmark_group("clock_read");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    g.sample_size(30);

    g.bench_function("std_instant_now", |b| b.iter(Instant::now));
    g.bench_function("std_system_time_now", |b| b.iter(SystemTime::now));
    let system = SystemClock::new();
    g.bench_function("breaker_system_clock_now_exact", |b| {
        b.iter(|| black_box(&system).now_nanos())
    });
    g.bench_function("breaker_system_clock_recent_cached", |b| {
        b.iter(|| black_box(&system).recent_nanos())
    });

    let q = quanta::Clock::new();
    g.bench_function("quanta_now", |b| b.iter(|| q.now()));
    g.bench_function("quanta_raw_tsc", |b| b.iter(|| q.raw()));
    g.bench_function("quanta_recent_without_upkeep", |b| b.iter(|| q.recent()));

    g.bench_function("coarsetime_now_monotonic_coarse", |b| {
        b.iter(coarsetime::Instant::now)
    });
    coarsetime::Instant::update();
    g.bench_function("coarsetime_recent_cached", |b| {
        b.iter(coarsetime::Instant::recent)
    });
    g.finish();
}

criterion_group!(benches, clocks);
criterion_main!(benches);
