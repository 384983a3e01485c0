//! What `registry = EXPR` costs per call, by the kind of expression (issue #10): a path to a
//! static (the handle cached at the call site), a `name = CONST` (cached handle plus a name
//! comparison), and `registry = self.registry` (evaluated per call: a registry lookup per
//! call, so two clients with two registries each use their own). The baseline is the same
//! body run through `CircuitBreaker::call` by hand with a handle kept by the caller.
//!
//! The sides alternate within every measurement: each sample runs the four sides in turn,
//! in chunks of 1/16 of its iterations, and a side's figure is the time of its own chunks, so
//! load from other processes falls on all sides alike.
//!
//! `cargo bench -p breaker-bench --bench macro_registry` (about 1.5 minutes).

use std::hint::black_box;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use breaker_bench::poll_once;
use criterion::{criterion_group, criterion_main, Criterion};
use resilience4rs::{circuit_breaker, CallError, CallNotPermitted, CircuitBreaker, Registry};

#[derive(Debug)]
enum BodyError {
    Rejected,
}

impl From<CallNotPermitted> for BodyError {
    fn from(_: CallNotPermitted) -> Self {
        BodyError::Rejected
    }
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

const NAME: &str = "bench-const-name";

#[inline(never)]
async fn body(x: u64) -> Result<u64, BodyError> {
    Ok(black_box(x))
}

/// What the annotated fns do, written by hand: the same body through `call`.
async fn direct(cb: &CircuitBreaker, x: u64) -> Result<u64, BodyError> {
    match cb.call(body(x)).await {
        Ok(v) => Ok(v),
        Err(CallError::Inner(e)) => Err(e),
        Err(CallError::NotPermitted(n)) => Err(n.into()),
    }
}

#[circuit_breaker(name = "bench-static", registry = REGISTRY)]
async fn static_path(x: u64) -> Result<u64, BodyError> {
    body(x).await
}

#[circuit_breaker(name = NAME, registry = REGISTRY)]
async fn const_name(x: u64) -> Result<u64, BodyError> {
    body(x).await
}

struct Client {
    registry: &'static Registry,
}

impl Client {
    #[circuit_breaker(name = "bench-per-call", registry = self.registry)]
    async fn per_call(&self, x: u64) -> Result<u64, BodyError> {
        body(x).await
    }
}

fn registry_expression(c: &mut Criterion) {
    let mut g = c.benchmark_group("g_registry_expression");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(6));
    g.sample_size(60);
    // A registry holding as many breakers as a service might, so the lookup is not trivial.
    let registry: &'static Registry = &REGISTRY;
    for i in 0..50 {
        registry.circuit_breaker(&format!("other-{i}"));
    }
    let client = Client { registry };
    let handle = registry.circuit_breaker("bench-direct");
    let sides: [(&str, &dyn Fn()); 4] = [
        ("direct_call_baseline", &|| {
            let _ = poll_once(direct(&handle, black_box(1)));
        }),
        ("static_path", &|| {
            let _ = poll_once(static_path(black_box(1)));
        }),
        ("const_name", &|| {
            let _ = poll_once(const_name(black_box(1)));
        }),
        ("self_registry_per_call", &|| {
            let _ = poll_once(client.per_call(black_box(1)));
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
                // `per_chunk * CHUNKS` calls were timed for `iters` requested.
                mine.mul_f64(iters as f64 / (per_chunk * CHUNKS) as f64)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, registry_expression);
criterion_main!(benches);
