//! Per-call cost of a protected call: `breaker` side by side with failsafe 1.3, recloser 1.4
//! and tower-resilience-circuitbreaker, and with the floors (what any breaker that times its
//! calls must at least do). Groups a-f follow issue #6; BENCHMARKS.md has the numbers.
//!
//! `cargo bench -p breaker-bench --bench breakers` (about 2 minutes); pass a filter such as
//! `-- a_closed` to run one group.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, LazyLock};
use std::time::{Duration, Instant};

use breaker_bench::*;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use failsafe::CircuitBreaker as _;
use resilience4rs::{
    circuit_breaker, CallError, CallNotPermitted, CircuitBreaker, CircuitBreakerConfig, Clock,
    Registry, SystemClock,
};

type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;

fn configure(g: &mut Group<'_>) {
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    g.sample_size(30);
}

/// Every fifth call fails (20 %): below every breaker's threshold, so all stay CLOSED.
#[inline]
fn fails(i: u64) -> bool {
    i % 5 == 4
}

fn outcome(i: u64) -> Result<u64, u64> {
    if fails(i) {
        Err(i)
    } else {
        Ok(i)
    }
}

// ----- a. closed-state protected call, sync API -------------------------------------------

fn a_closed(c: &mut Criterion) {
    let mut g = c.benchmark_group("a_closed_sync");
    configure(&mut g);

    let cb = ours_default();
    g.bench_function("breaker/permit", |b| {
        b.iter(|| {
            let p = cb.try_acquire_permission().expect("CLOSED");
            p.on_success();
        })
    });
    g.bench_function("breaker/call_sync", |b| {
        b.iter(|| cb.call_sync(|| Ok::<u64, u64>(black_box(1))))
    });

    let fs = failsafe_consecutive();
    g.bench_function("failsafe/consecutive", |b| {
        b.iter(|| fs.call(|| Ok::<u64, u64>(black_box(1))))
    });
    let fd = failsafe_default();
    g.bench_function("failsafe/default", |b| {
        b.iter(|| fd.call(|| Ok::<u64, u64>(black_box(1))))
    });
    let rc = recloser();
    g.bench_function("recloser", |b| {
        b.iter(|| rc.call(|| Ok::<u64, u64>(black_box(1))))
    });
    let mut tw = tower_breaker();
    g.bench_function("tower_resilience/layer", |b| {
        b.iter(|| tower_call(&mut tw, black_box(0)))
    });

    let counter = AtomicU64::new(0);
    g.bench_function("floor/2x_instant+fetch_add", |b| {
        b.iter(|| {
            let start = Instant::now();
            let end = Instant::now();
            counter.fetch_add(1, Ordering::Relaxed);
            end.duration_since(start)
        })
    });
    // The same floor with the clock reading the breaker takes (SystemClock's cached one).
    let clock = SystemClock::new();
    g.bench_function("floor/2x_cached_clock+fetch_add", |b| {
        b.iter(|| {
            let start = clock.recent_nanos();
            let end = clock.recent_nanos();
            counter.fetch_add(1, Ordering::Relaxed);
            end.wrapping_sub(start)
        })
    });
    g.finish();
}

// ----- b. 20 % errors; time-based window ---------------------------------------------------

fn b_errors(c: &mut Criterion) {
    let mut g = c.benchmark_group("b_closed_20pct_errors");
    configure(&mut g);

    for (id, cb) in [
        ("breaker/count_window", ours_default()),
        ("breaker/time_window", ours_time_based()),
    ] {
        let mut i = 0u64;
        g.bench_function(id, |b| {
            b.iter(|| {
                i += 1;
                let p = cb.try_acquire_permission().expect("CLOSED");
                if fails(i) {
                    p.on_error()
                } else {
                    p.on_success()
                }
            })
        });
        assert_eq!(cb.state(), resilience4rs::State::Closed);
    }

    let fs = failsafe_consecutive();
    let mut i = 0u64;
    g.bench_function("failsafe/consecutive", |b| {
        b.iter(|| {
            i += 1;
            fs.call(|| outcome(black_box(i)))
        })
    });
    let fd = failsafe_default();
    g.bench_function("failsafe/default", |b| {
        b.iter(|| {
            i += 1;
            fd.call(|| outcome(black_box(i)))
        })
    });
    let rc = recloser();
    g.bench_function("recloser", |b| {
        b.iter(|| {
            i += 1;
            rc.call(|| outcome(black_box(i)))
        })
    });
    let mut tw = tower_breaker();
    let mut n = 0u32;
    g.bench_function("tower_resilience/layer", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            tower_call(&mut tw, black_box(n))
        })
    });
    g.finish();
}

// ----- c. open-state rejection ---------------------------------------------------------------

fn c_open(c: &mut Criterion) {
    let mut g = c.benchmark_group("c_open_rejection");
    configure(&mut g);

    let cb = ours_open();
    g.bench_function("breaker/permit", |b| {
        b.iter(|| cb.try_acquire_permission().is_err())
    });
    g.bench_function("breaker/call_sync", |b| {
        b.iter(|| cb.call_sync(|| Ok::<u64, u64>(black_box(1))).is_err())
    });

    let fs = failsafe_consecutive();
    open_by_failures(|| {
        matches!(
            fs.call(|| Err::<(), ()>(())),
            Err(failsafe::Error::Rejected)
        )
    });
    g.bench_function("failsafe/consecutive", |b| {
        b.iter(|| fs.call(|| Ok::<u64, u64>(black_box(1))).is_err())
    });
    let fd = failsafe_default();
    open_by_failures(|| {
        matches!(
            fd.call(|| Err::<(), ()>(())),
            Err(failsafe::Error::Rejected)
        )
    });
    g.bench_function("failsafe/default", |b| {
        b.iter(|| fd.call(|| Ok::<u64, u64>(black_box(1))).is_err())
    });
    let rc = recloser();
    open_by_failures(|| {
        matches!(
            rc.call(|| Err::<(), ()>(())),
            Err(recloser::Error::Rejected)
        )
    });
    g.bench_function("recloser", |b| {
        b.iter(|| rc.call(|| Ok::<u64, u64>(black_box(1))).is_err())
    });
    let mut tw = tower_breaker();
    let mut n = 3u32;
    open_by_failures(|| {
        n += 5;
        // n % 5 == 4 fails; after enough failures the breaker rejects.
        use tower::Service;
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let _ = tw.poll_ready(&mut cx);
        matches!(
            poll_once(tw.call(n + 1)),
            Err(e) if e.is_circuit_open()
        )
    });
    g.bench_function("tower_resilience/layer", |b| {
        b.iter(|| tower_call(&mut tw, black_box(0)))
    });

    let word = AtomicU64::new(1);
    g.bench_function("floor/atomic_load", |b| {
        b.iter(|| black_box(&word).load(Ordering::Acquire))
    });
    g.finish();
}

// ----- d. async call; #[circuit_breaker] ----------------------------------------------------

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

#[derive(Debug)]
enum BodyError {
    Rejected,
}

impl From<CallNotPermitted> for BodyError {
    fn from(_: CallNotPermitted) -> Self {
        BodyError::Rejected
    }
}

#[inline(never)]
async fn body(x: u64) -> Result<u64, BodyError> {
    Ok(black_box(x))
}

#[circuit_breaker(name = "annotated", registry = REGISTRY)]
async fn annotated(x: u64) -> Result<u64, BodyError> {
    body(x).await
}

/// What the annotated fn does, written by hand: the same breaker, the same body, `call`.
async fn direct(cb: &CircuitBreaker, x: u64) -> Result<u64, BodyError> {
    match cb.call(body(x)).await {
        Ok(v) => Ok(v),
        Err(CallError::Inner(e)) => Err(e),
        Err(CallError::NotPermitted(n)) => Err(n.into()),
    }
}

fn d_async(c: &mut Criterion) {
    let mut g = c.benchmark_group("d_async_call");
    configure(&mut g);

    let cb = ours_default();
    g.bench_function("breaker/call", |b| {
        b.iter(|| poll_once(cb.call(std::future::ready(Ok::<u64, u64>(black_box(1))))))
    });
    let named = REGISTRY.circuit_breaker("annotated");
    g.bench_function("breaker/direct_call_same_body", |b| {
        b.iter(|| poll_once(direct(&named, black_box(1))))
    });
    g.bench_function("breaker/annotated_fn", |b| {
        b.iter(|| poll_once(annotated(black_box(1))))
    });

    let fs = failsafe_consecutive();
    g.bench_function("failsafe/consecutive", |b| {
        b.iter(|| {
            poll_once(failsafe::futures::CircuitBreaker::call(
                &fs,
                std::future::ready(Ok::<u64, u64>(black_box(1))),
            ))
        })
    });
    let ra = recloser_async();
    g.bench_function("recloser", |b| {
        b.iter(|| poll_once(ra.call(std::future::ready(Ok::<u64, u64>(black_box(1))))))
    });
    let mut tw = tower_breaker();
    g.bench_function("tower_resilience/layer", |b| {
        b.iter(|| tower_call(&mut tw, black_box(0)))
    });
    g.finish();
}

// ----- e. two threads on one breaker ---------------------------------------------------------

/// Runs `per_call` `iters` times on each of two threads at once; returns the mean time one
/// thread took, so the reported figure is the per-call cost seen by each thread.
fn two_threads(iters: u64, per_call: impl Fn(u64) + Sync) -> Duration {
    let barrier = Barrier::new(2);
    let total: Duration = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let t = Instant::now();
                    for i in 0..iters {
                        per_call(i);
                    }
                    t.elapsed()
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("bench thread"))
            .sum()
    });
    total / 2
}

fn e_two_threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("e_two_threads_per_thread");
    configure(&mut g);

    let cb = ours_default();
    g.bench_function("breaker/permit", |b| {
        b.iter_custom(|iters| {
            two_threads(iters, |_| {
                cb.try_acquire_permission().expect("CLOSED").on_success();
            })
        })
    });
    let fs = failsafe_consecutive();
    g.bench_function("failsafe/consecutive", |b| {
        b.iter_custom(|iters| {
            two_threads(iters, |_| {
                let _ = black_box(fs.call(|| Ok::<u64, u64>(black_box(1))));
            })
        })
    });
    let fd = failsafe_default();
    g.bench_function("failsafe/default", |b| {
        b.iter_custom(|iters| {
            two_threads(iters, |_| {
                let _ = black_box(fd.call(|| Ok::<u64, u64>(black_box(1))));
            })
        })
    });
    let rc = recloser();
    g.bench_function("recloser", |b| {
        b.iter_custom(|iters| {
            two_threads(iters, |_| {
                let _ = black_box(rc.call(|| Ok::<u64, u64>(black_box(1))));
            })
        })
    });
    g.finish();
}

// ----- f. registry ----------------------------------------------------------------------------

fn f_registry(c: &mut Criterion) {
    let mut g = c.benchmark_group("f_registry");
    configure(&mut g);

    let registry = Registry::new();
    let cached = registry.circuit_breaker("payments");
    g.bench_function("cached_handle", |b| {
        b.iter(|| {
            cached
                .try_acquire_permission()
                .expect("CLOSED")
                .on_success()
        })
    });
    g.bench_function("handle_by_name", |b| {
        b.iter(|| {
            registry
                .circuit_breaker(black_box("payments"))
                .try_acquire_permission()
                .expect("CLOSED")
                .on_success()
        })
    });

    // A reload thread swaps the instance config (same window, so the state is kept) every
    // 100 us while the measured thread calls through its cached handle.
    let registry = Arc::new(Registry::new());
    let cached = registry.circuit_breaker("payments");
    let stop = Arc::new(AtomicBool::new(false));
    let reloads = Arc::new(AtomicU64::new(0));
    let reloader = {
        let (registry, stop, reloads) = (registry.clone(), stop.clone(), reloads.clone());
        std::thread::spawn(move || {
            let mut flip = false;
            while !stop.load(Ordering::Relaxed) {
                flip = !flip;
                let config = CircuitBreakerConfig::builder()
                    .failure_rate_threshold(if flip { 50.0 } else { 60.0 })
                    .build()
                    .expect("valid config");
                registry.configure_instance("payments", config);
                reloads.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_micros(100));
            }
        })
    };
    g.bench_function("cached_handle_during_reloads", |b| {
        b.iter(|| {
            cached
                .try_acquire_permission()
                .expect("CLOSED")
                .on_success()
        })
    });
    stop.store(true, Ordering::Relaxed);
    reloader.join().expect("reload thread");
    g.finish();
}

criterion_group!(
    benches,
    a_closed,
    b_errors,
    c_open,
    d_async,
    e_two_threads,
    f_registry
);
criterion_main!(benches);
