//! A quick probe of single hot-path costs (best of 7 batches, ns per call), for profiling
//! between runs of the ratio bench: `cargo run --release -p breaker-bench --example probe
//! [name filter]`. Not a result: ratios count only from `--bench ratios`.

use breaker_bench::*;
use resilience4rs::{Clock, SystemClock};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
fn t(name: &str, n: u64, mut f: impl FnMut()) {
    let only = std::env::args().nth(1);
    if only.as_deref().is_some_and(|o| !name.contains(o)) {
        return;
    }
    let mut best = f64::MAX;
    for _ in 0..7 {
        let s = Instant::now();
        for _ in 0..n {
            f()
        }
        best = best.min(s.elapsed().as_nanos() as f64 / n as f64);
    }
    println!("{name}: {best:.2} ns");
}
fn main() {
    let cb = ours_default();
    let fs = failsafe_consecutive();
    let n = 2_000_000;
    let w = AtomicU64::new(0);
    let clock = SystemClock::new();
    let time = ours_time_based();
    let half = half_open_breaker(1000);
    let mut i = 0;
    let open = ours_open();
    let state = AtomicU64::new(1);
    let np = AtomicU64::new(0);
    let retry = resilience4rs::retry::Retry::new("r", resilience4rs::retry::RetryConfig::default());
    let count = AtomicU64::new(0);
    println!(
        "retry future: {} bytes",
        std::mem::size_of_val(&retry.call(|| std::future::ready(Ok::<u64, String>(1))))
    );
    for _ in 0..2 {
        t("retry", n, || {
            black_box(
                poll_once(retry.call(|| std::future::ready(Ok::<u64, String>(black_box(1)))))
                    .is_ok(),
            );
        });
        t("plain", n, || {
            black_box(
                poll_once(plain_retry(3, || {
                    std::future::ready(Ok::<u64, String>(black_box(1)))
                }))
                .is_ok(),
            );
        });
        t("counted", n, || {
            black_box(
                poll_once(plain_retry(3, || {
                    std::future::ready(Ok::<u64, String>(black_box(1)))
                }))
                .is_ok(),
            );
            count.fetch_add(1, Ordering::Relaxed);
        });
        t("open", n, || {
            black_box(open.try_acquire_permission().is_err());
        });
        t("floor", n, || {
            let s = black_box(&state).load(Ordering::Acquire);
            let now = clock.recent_nanos();
            black_box(&np).fetch_add(1, Ordering::Relaxed);
            black_box(s.wrapping_add(now));
        });
        t("time", n, || {
            time.try_acquire_permission().unwrap().on_success();
        });
        t("half", n, || {
            half.try_acquire_permission().unwrap().on_success();
            i += 1;
            if i == 1000 {
                i = 0;
                half.transition_to_open_state().unwrap();
                half.transition_to_half_open_state().unwrap();
            }
        });
        t("permit+on_success", n, || {
            cb.try_acquire_permission().unwrap().on_success();
        });
        t("acquire+forget", n, || {
            std::mem::forget(black_box(cb.try_acquire_permission().unwrap()));
        });
        t("failsafe", n, || {
            let _ = black_box(failsafe::CircuitBreaker::call(&fs, || {
                Ok::<u64, u64>(black_box(1))
            }));
        });
        t("cas", n, || {
            let v = black_box(&w).load(Ordering::Acquire);
            let _ =
                black_box(&w).compare_exchange_weak(v, v + 2, Ordering::AcqRel, Ordering::Acquire);
        });
        t("2 clock reads", n, || {
            black_box(clock.recent_nanos());
            black_box(clock.recent_nanos());
        });
    }
}
