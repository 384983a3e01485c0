//! What stacking costs per call: the same body behind a lone `#[circuit_breaker]`, behind
//! `#[retry]` + `#[circuit_breaker]`, and behind all five attributes, each with its instances
//! cached per call site (`registry = STATIC`) and the nesting read from the global aspect
//! orders on every call. Every call succeeds at once (the retry's first attempt, a free
//! permit, a future ready before any timeout).
//!
//! The sides alternate within every measurement, as in `macro_registry`: each sample runs the
//! three sides in turn, in chunks of 1/16 of its iterations, and a side's figure is the time of
//! its own chunks, so load from other processes falls on all sides alike.
//!
//! `cargo bench -p breaker-bench --bench stack` (about a minute).

use std::hint::black_box;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use breaker_bench::poll_once;
use criterion::{criterion_group, criterion_main, Criterion};
use resilience4rs::bulkhead::{BulkheadFullException, BulkheadRegistry};
use resilience4rs::ratelimiter::{RateLimiterRegistry, RequestNotPermitted};
use resilience4rs::retry::{MaxRetriesExceeded, RetryRegistry};
use resilience4rs::timelimiter::{TimeLimiterRegistry, Timeout};
use resilience4rs::{
    bulkhead, circuit_breaker, rate_limiter, retry, time_limiter, CallNotPermitted, Registry,
};

#[derive(Debug)]
struct BodyError;

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("body error")
    }
}

macro_rules! from {
    ($($t:ty),*) => {$(
        impl From<$t> for BodyError {
            fn from(_: $t) -> Self { BodyError }
        }
    )*};
}
from!(
    CallNotPermitted,
    Timeout,
    BulkheadFullException,
    RequestNotPermitted,
    MaxRetriesExceeded
);

static BREAKERS: LazyLock<Registry> = LazyLock::new(Registry::new);
static RETRIES: LazyLock<RetryRegistry> = LazyLock::new(RetryRegistry::new);
static LIMITERS: LazyLock<RateLimiterRegistry> = LazyLock::new(|| {
    // Enough permits that the measured calls are never refused.
    let config = resilience4rs::ratelimiter::RateLimiterConfig::builder()
        .limit_for_period(i32::MAX as i64)
        .limit_refresh_period(Duration::from_millis(1))
        .build()
        .expect("valid");
    RateLimiterRegistry::with_default_config(config)
});
static TIME_LIMITERS: LazyLock<TimeLimiterRegistry> = LazyLock::new(TimeLimiterRegistry::new);
static BULKHEADS: LazyLock<BulkheadRegistry> = LazyLock::new(BulkheadRegistry::new);

#[inline(never)]
async fn body(x: u64) -> Result<u64, BodyError> {
    Ok(black_box(x))
}

#[circuit_breaker(name = "bench-stack", registry = BREAKERS)]
async fn lone_breaker(x: u64) -> Result<u64, BodyError> {
    body(x).await
}

#[retry(name = "bench-stack", registry = RETRIES)]
#[circuit_breaker(name = "bench-stack-2", registry = BREAKERS)]
async fn retry_and_breaker(x: u64) -> Result<u64, BodyError> {
    body(x).await
}

#[retry(name = "bench-stack-5", registry = RETRIES)]
#[circuit_breaker(name = "bench-stack-5", registry = BREAKERS)]
#[rate_limiter(name = "bench-stack-5", registry = LIMITERS)]
#[time_limiter(name = "bench-stack-5", registry = TIME_LIMITERS)]
#[bulkhead(name = "bench-stack-5", registry = BULKHEADS)]
async fn all_five(x: u64) -> Result<u64, BodyError> {
    body(x).await
}

fn stack(c: &mut Criterion) {
    // The time limiter arms a tokio timer: run inside a runtime's context.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let _inside = rt.enter();
    let mut g = c.benchmark_group("g_stack");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(5));
    g.sample_size(50);
    let sides: [(&str, &dyn Fn()); 3] = [
        ("lone_circuit_breaker", &|| {
            let _ = poll_once(lone_breaker(black_box(1)));
        }),
        ("retry_and_circuit_breaker", &|| {
            let _ = poll_once(retry_and_breaker(black_box(1)));
        }),
        ("all_five", &|| {
            let _ = poll_once(all_five(black_box(1)));
        }),
    ];
    const CHUNKS: u64 = 16;
    for (measured, _) in sides {
        g.bench_function(measured, |b| {
            b.iter_custom(|iters| {
                let per_chunk = iters.div_ceil(CHUNKS);
                let mut mine = Duration::ZERO;
                for _ in 0..CHUNKS {
                    for (name, run) in &sides {
                        let start = Instant::now();
                        for _ in 0..per_chunk {
                            run();
                        }
                        if *name == measured {
                            mine += start.elapsed();
                        }
                    }
                }
                mine.mul_f64(iters as f64 / (per_chunk * CHUNKS) as f64)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, stack);
criterion_main!(benches);
