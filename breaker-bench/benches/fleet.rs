//! What a fleet-wide rate limiter and bulkhead cost per call (issue #29): the same limiter
//! (bulkhead) with no store and with a `breaker-redis` store attached, alternated in this
//! one process (`breaker_bench::alternate`), against a `redis-server` the bench starts on
//! a free loopback port (skipped with a message when it is not installed). A shared
//! permission is one script run in Redis: the figure is a loopback round trip. With many
//! callers at once their requests share one pipeline (one round trip per batch), shown by
//! the 8-thread row.
//!
//! `cargo bench -p breaker-bench --bench fleet` (about 20 s once built).

use std::sync::Barrier;
use std::time::{Duration, Instant};

use breaker_bench::alternate::{alternate, Plan, Side};
use breaker_bench::redis_server::start_redis;
use breaker_redis::{RedisStore, RedisStoreOptions};
use resilience4rs::bulkhead::{Bulkhead, BulkheadConfig};
use resilience4rs::ratelimiter::{RateLimiter, RateLimiterConfig};

/// A limiter that never runs out (2e9 per second).
fn limiter(name: &str) -> RateLimiter {
    let config = RateLimiterConfig::builder()
        .limit_for_period(2_000_000_000)
        .limit_refresh_period(Duration::from_secs(1))
        .timeout_duration(Duration::ZERO)
        .build()
        .unwrap();
    RateLimiter::new(name, config)
}

/// `threads` threads each doing `n / threads` calls of `f` at once: the wall time over
/// `n` (the throughput cost of one call with that many callers).
fn threads(n: u64, threads: u64, f: &(impl Fn() + Sync)) -> Duration {
    let barrier = Barrier::new(threads as usize);
    let per = (n / threads).max(1);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                barrier.wait();
                for _ in 0..per {
                    f();
                }
            });
        }
    });
    let per_call = start.elapsed().as_nanos() as f64 / (per * threads) as f64;
    Duration::from_nanos((per_call * n as f64) as u64)
}

fn main() {
    let Some((_server, url)) = start_redis() else {
        eprintln!("SKIPPED fleet bench: redis-server is not installed");
        return;
    };
    let store = RedisStore::open(&url, RedisStoreOptions::default()).unwrap();
    let local = limiter("local");
    let shared = limiter("shared");
    store.attach_rate_limiter(&shared).unwrap();
    let local_b = Bulkhead::new("local", BulkheadConfig::default());
    let shared_b = Bulkhead::new("shared", BulkheadConfig::default());
    store.attach_bulkhead(&shared_b).unwrap();
    // Small batches: a shared call is tens of microseconds.
    let plan = Plan {
        rounds: 11,
        pairs: 5,
        batch: Duration::from_millis(20),
    };
    println!("| row | A (median per call) | B (median per call) | A/B median | min-max |");
    println!("| --- | --- | --- | ---: | ---: |");
    let row = |name: &str, mut a: Side<'_>, mut b: Side<'_>| {
        let m = alternate(plan, &mut a, &mut b);
        let (lo, hi) = m.min_max();
        println!(
            "| {name} | {} {:.0} ns | {} {:.0} ns | {:.2}x | {:.2}x-{:.2}x |",
            a.name,
            m.a_median_ns(),
            b.name,
            m.b_median_ns(),
            m.median(),
            lo,
            hi
        );
    };
    row(
        "rate limiter permission, 1 thread",
        Side::looped("shared", || shared.try_acquire_permission(1).is_ok()),
        Side::looped("local", || local.try_acquire_permission(1).is_ok()),
    );
    row(
        "bulkhead permit + release, 1 thread",
        Side::looped("shared", || {
            shared_b.try_acquire_permission().map(drop).is_ok()
        }),
        Side::looped("local", || {
            local_b.try_acquire_permission().map(drop).is_ok()
        }),
    );
    let shared_1 = || {
        let _ = shared.try_acquire_permission(1);
    };
    row(
        "rate limiter, 8 threads vs 1 thread (pipelining)",
        Side::custom("shared, 8 threads", |n| threads(n, 8, &shared_1)),
        Side::custom("shared, 1 thread", |n| threads(n, 1, &shared_1)),
    );
}
