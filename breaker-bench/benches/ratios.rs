//! The target table of issue #14: every target ratio measured by alternating its two sides
//! in this one process (see `breaker_bench::alternate`), one row per target ending in PASS
//! or FAIL.
//!
//! `cargo bench -p breaker-bench --bench ratios` (under a minute once built). Pass a word to run only
//! the rows whose name contains it: `cargo bench -p breaker-bench --bench ratios -- open`.

use std::future::ready;
use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use breaker_bench::alternate::{alternate, Measured, Plan, Side};
use breaker_bench::*;
use failsafe::CircuitBreaker as _;
use resilience4rs::bulkhead::{Bulkhead, BulkheadConfig, ThreadPoolBulkhead};
use resilience4rs::ratelimiter::{RateLimiter, RateLimiterConfig};
use resilience4rs::retry::{Retry, RetryConfig};
use resilience4rs::timelimiter::{TimeLimiter, TimeLimiterConfig};
use resilience4rs::{CircuitBreaker, Clock, SystemClock};

/// One target: A's per-call time over B's, at most `limit`, or A at most `slack_ns` more
/// than B (issue #26's "1.15x or 3 ns, whichever is larger"), judged on the medians.
struct Row<'a> {
    name: &'static str,
    limit: f64,
    slack_ns: f64,
    a: Side<'a>,
    b: Side<'a>,
}

impl Row<'_> {
    /// The ratio this row allows, given B's median: `limit`, or `slack_ns` over B if larger.
    fn allowed(&self, m: &Measured) -> f64 {
        let b = m.b_median_ns();
        if b > 0.0 {
            self.limit.max((b + self.slack_ns) / b)
        } else {
            self.limit
        }
    }
}

/// Runs `per_call` `n` times on each of two threads at once (started together); returns
/// the mean time one thread took, so the figure is the per-call cost each thread sees.
fn two_threads(n: u64, per_call: &(impl Fn() + Sync)) -> Duration {
    let barrier = Barrier::new(2);
    let total: Duration = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let t = Instant::now();
                    for _ in 0..n {
                        per_call();
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

fn permit_call(cb: &CircuitBreaker) {
    cb.try_acquire_permission().expect("permitted").on_success();
}

fn failsafe_call(fs: &FailsafeConsecutive) -> bool {
    fs.call(|| Ok::<u64, u64>(black_box(1))).is_ok()
}

fn rows() -> Vec<Row<'static>> {
    let mut rows = Vec::new();

    // ----- circuit breaker ---------------------------------------------------------------
    let cb = Arc::new(ours_default());
    let fs = Arc::new(failsafe_consecutive());
    {
        let (cb, fs) = (cb.clone(), fs.clone());
        rows.push(Row {
            name: "CLOSED permit vs failsafe consecutive",
            slack_ns: 0.0,
            limit: 1.0,
            a: Side::looped("breaker permit + on_success", move || permit_call(&cb)),
            b: Side::looped("failsafe call", move || failsafe_call(&fs)),
        });
    }
    {
        let (cb, fs) = (cb.clone(), fs.clone());
        rows.push(Row {
            name: "CLOSED call_sync vs failsafe consecutive",
            slack_ns: 0.0,
            limit: 1.0,
            a: Side::looped("breaker call_sync", move || {
                cb.call_sync(|| Ok::<u64, u64>(black_box(1))).is_ok()
            }),
            b: Side::looped("failsafe call", move || failsafe_call(&fs)),
        });
    }
    {
        let (cb, fs) = (cb.clone(), fs.clone());
        rows.push(Row {
            name: "async call vs failsafe async call",
            slack_ns: 0.0,
            limit: 1.0,
            a: Side::looped("breaker call (ready)", move || {
                poll_once(cb.call(ready(Ok::<u64, u64>(black_box(1))))).is_ok()
            }),
            b: Side::looped("failsafe futures call (ready)", move || {
                poll_once(failsafe::futures::CircuitBreaker::call(
                    &*fs,
                    ready(Ok::<u64, u64>(black_box(1))),
                ))
                .is_ok()
            }),
        });
    }
    {
        let (cb2, fs2) = (Arc::new(ours_default()), Arc::new(failsafe_consecutive()));
        rows.push(Row {
            name: "2 threads, one breaker, vs failsafe",
            slack_ns: 0.0,
            limit: 1.0,
            a: Side::custom("breaker permit, 2 threads", move |n| {
                two_threads(n, &|| permit_call(&cb2))
            }),
            b: Side::custom("failsafe call, 2 threads", move |n| {
                two_threads(n, &|| {
                    black_box(failsafe_call(&fs2));
                })
            }),
        });
    }
    {
        let open = ours_open();
        let state = AtomicU64::new(1);
        let not_permitted = AtomicU64::new(0);
        let clock = SystemClock::new();
        rows.push(Row {
            name: "OPEN rejection vs its floor",
            slack_ns: 0.0,
            limit: 1.5,
            a: Side::looped("breaker permit, rejected", move || {
                open.try_acquire_permission().is_err()
            }),
            b: Side::looped("floor: state load + cached clock + fetch_add", move || {
                let s = black_box(&state).load(Ordering::Acquire);
                let now = clock.recent_nanos();
                black_box(&not_permitted).fetch_add(1, Ordering::Relaxed);
                s.wrapping_add(now)
            }),
        });
    }
    {
        const TRIALS: i64 = 1000;
        let half = half_open_breaker(TRIALS);
        let mut i = 0i64;
        let cb = cb.clone();
        rows.push(Row {
            name: "HALF_OPEN call vs CLOSED count-based call",
            slack_ns: 0.0,
            limit: 1.5,
            a: Side::looped("breaker permit, HALF_OPEN", move || {
                permit_call(&half);
                i += 1;
                if i == TRIALS {
                    // The last trial call closed it: open it and start trying again.
                    i = 0;
                    half.transition_to_open_state().expect("CLOSED -> OPEN");
                    half.transition_to_half_open_state()
                        .expect("OPEN -> HALF_OPEN");
                }
            }),
            b: Side::looped("breaker permit, CLOSED", move || permit_call(&cb)),
        });
    }
    {
        let time = ours_time_based();
        let cb = cb.clone();
        rows.push(Row {
            name: "TIME_BASED call vs CLOSED count-based call",
            slack_ns: 0.0,
            limit: 1.5,
            a: Side::looped("breaker permit, TIME_BASED 10 s", move || {
                permit_call(&time)
            }),
            b: Side::looped("breaker permit, COUNT_BASED 100", move || permit_call(&cb)),
        });
    }

    // ----- the other modules ---------------------------------------------------------------
    {
        // Retry's success path counts the call (`numberOfSuccessfulCallsWithoutRetryAttempt`,
        // one relaxed increment); the loop counts its successes too, as a hand-written loop
        // that reports the metric must. Without the counter the loop is an empty body the
        // compiler folds away, which no retry that keeps Resilience4j's metrics can match.
        let retry = Retry::new("bench", RetryConfig::default());
        let successes = AtomicU64::new(0);
        rows.push(Row {
            name: "retry, first attempt succeeds, vs a plain loop",
            slack_ns: 0.0,
            limit: 1.2,
            a: Side::looped("Retry::call (ready)", move || {
                poll_once(retry.call(|| ready(Ok::<u64, String>(black_box(1))))).is_ok()
            }),
            b: Side::looped("plain retry loop (ready) + success counter", move || {
                let ok =
                    poll_once(plain_retry(3, || ready(Ok::<u64, String>(black_box(1))))).is_ok();
                if ok {
                    successes.fetch_add(1, Ordering::Relaxed);
                }
                ok
            }),
        });
    }
    {
        // Both run inside the runtime (`main` enters it once): `timeout` needs its timer.
        let limiter = TimeLimiter::new("bench", TimeLimiterConfig::default());
        rows.push(Row {
            name: "time limiter, ready future, vs tokio::time::timeout",
            slack_ns: 0.0,
            limit: 1.2,
            a: Side::looped("TimeLimiter::call (ready)", move || {
                poll_once(limiter.call(ready(Ok::<u64, String>(black_box(1))))).is_ok()
            }),
            b: Side::looped("tokio::time::timeout (ready)", move || {
                poll_once(tokio::time::timeout(
                    Duration::from_secs(1),
                    ready(Ok::<u64, String>(black_box(1))),
                ))
                .is_ok()
            }),
        });
    }
    {
        let bulkhead = Bulkhead::new("bench", BulkheadConfig::default());
        let semaphore = tokio::sync::Semaphore::new(25);
        rows.push(Row {
            name: "bulkhead call vs tokio Semaphore",
            slack_ns: 0.0,
            limit: 1.2,
            a: Side::looped("Bulkhead::call (ready)", move || {
                poll_once(bulkhead.call(ready(Ok::<u64, u64>(black_box(1))))).is_ok()
            }),
            b: Side::looped("Semaphore::acquire + body + drop", move || {
                let permit = poll_once(semaphore.acquire()).expect("open semaphore");
                let r = poll_once(ready(Ok::<u64, u64>(black_box(1))));
                drop(permit);
                r.is_ok()
            }),
        });
    }
    {
        use tower::{Service, ServiceExt};
        let bulkhead = Bulkhead::new("bench", BulkheadConfig::default());
        let mut limited = tower::ServiceBuilder::new()
            .concurrency_limit(25)
            .service(tower::service_fn(|x: u64| ready(Ok::<u64, u64>(x))));
        rows.push(Row {
            name: "bulkhead call vs tower ConcurrencyLimit",
            slack_ns: 0.0,
            limit: 1.2,
            a: Side::looped("Bulkhead::call (ready)", move || {
                poll_once(bulkhead.call(ready(Ok::<u64, u64>(black_box(1))))).is_ok()
            }),
            b: Side::looped("ConcurrencyLimit ready + call", move || {
                let svc = poll_once(limited.ready()).expect("ready");
                poll_once(svc.call(black_box(1))).is_ok()
            }),
        });
    }
    {
        let pool = ThreadPoolBulkhead::with_defaults("bench");
        let semaphore = tokio::sync::Semaphore::new(10);
        rows.push(Row {
            name: "thread-pool bulkhead call vs tokio Semaphore",
            slack_ns: 0.0,
            limit: 1.2,
            a: Side::looped("ThreadPoolBulkhead::call (ready)", move || {
                poll_once(pool.call(ready(Ok::<u64, u64>(black_box(1))))).is_ok()
            }),
            b: Side::looped("Semaphore::acquire + body + drop", move || {
                let permit = poll_once(semaphore.acquire()).expect("open semaphore");
                let r = poll_once(ready(Ok::<u64, u64>(black_box(1))));
                drop(permit);
                r.is_ok()
            }),
        });
    }
    {
        // Limits no call ever reaches: the success path only.
        let config = RateLimiterConfig::builder()
            .limit_for_period(i64::from(i32::MAX))
            .limit_refresh_period(Duration::from_secs(1))
            .timeout_duration(Duration::ZERO)
            .build()
            .expect("valid config");
        let limiter = RateLimiter::new("bench", config);
        let quota = governor::Quota::per_second(NonZeroU32::new(i32::MAX as u32).expect("> 0"));
        let governor = governor::RateLimiter::direct(quota);
        rows.push(Row {
            name: "rate limiter permission vs governor",
            slack_ns: 0.0,
            limit: 1.2,
            a: Side::looped("RateLimiter::try_acquire_permission", move || {
                limiter.try_acquire_permission(1).is_ok()
            }),
            b: Side::looped("governor check", move || governor.check().is_ok()),
        });
    }
    rows.extend(issue_26_rows());
    rows
}

/// Issue #26: the attributes and the tower layers against the core calls they wrap, and the
/// async bulkhead and rate limiter calls against their `call_sync` (see `breaker_bench::rows`).
fn issue_26_rows() -> Vec<Row<'static>> {
    use breaker_bench::rows::{self, oneshot, Core, TowerRegistries};
    let mut rows = Vec::new();
    let core: &'static Core = Box::leak(Box::new(Core::new("rows-core")));
    let tower: &'static TowerRegistries = Box::leak(Box::default());

    // Attributes: <= 1.15x the core call, or at most 3 ns more.
    macro_rules! attribute_row {
        ($name:expr, $attr:expr, $core:expr) => {
            rows.push(Row {
                name: $name,
                limit: 1.15,
                slack_ns: 3.0,
                a: Side::looped("attribute", || poll_once($attr).is_ok()),
                b: Side::looped("core call", move || poll_once($core).is_ok()),
            });
        };
    }
    attribute_row!(
        "attribute: #[retry] vs Retry::call",
        rows::attr_retry(),
        core.retry()
    );
    attribute_row!(
        "attribute: #[circuit_breaker] vs CircuitBreaker::call",
        rows::attr_circuit_breaker(),
        core.circuit_breaker()
    );
    attribute_row!(
        "attribute: #[rate_limiter] vs RateLimiter::call",
        rows::attr_rate_limiter(),
        core.rate_limiter()
    );
    attribute_row!(
        "attribute: #[time_limiter] vs TimeLimiter::call",
        rows::attr_time_limiter(),
        core.time_limiter()
    );
    attribute_row!(
        "attribute: #[bulkhead] vs Bulkhead::call",
        rows::attr_bulkhead(),
        core.bulkhead()
    );
    attribute_row!(
        "attribute: 4-layer stack vs core calls nested by hand",
        rows::attr_stack4(),
        core.stack4()
    );
    attribute_row!(
        "attribute: 5-layer stack vs core calls nested by hand",
        rows::attr_stack5(),
        core.stack5()
    );

    // Tower layers: <= 1.3x the core call, or at most 10 ns more.
    macro_rules! tower_row {
        ($name:expr, $svc:expr, $core:expr) => {{
            let mut svc = $svc;
            rows.push(Row {
                name: $name,
                limit: 1.3,
                slack_ns: 10.0,
                a: Side::looped("ServiceBuilder ready + call", move || {
                    oneshot(&mut svc).is_ok()
                }),
                b: Side::looped("core call", move || poll_once($core).is_ok()),
            });
        }};
    }
    tower_row!(
        "tower: RetryLayer vs Retry::call",
        tower.retry(),
        core.retry()
    );
    tower_row!(
        "tower: CircuitBreakerLayer vs CircuitBreaker::call",
        tower.circuit_breaker(),
        core.circuit_breaker()
    );
    tower_row!(
        "tower: RateLimiterLayer vs RateLimiter::call",
        tower.rate_limiter(),
        core.rate_limiter()
    );
    tower_row!(
        "tower: TimeLimiterLayer vs TimeLimiter::call",
        tower.time_limiter(),
        core.time_limiter()
    );
    tower_row!(
        "tower: BulkheadLayer vs Bulkhead::call",
        tower.bulkhead(),
        core.bulkhead()
    );
    tower_row!(
        "tower: 4-layer ServiceBuilder vs core calls nested by hand",
        tower.stack4(),
        core.stack4()
    );
    tower_row!(
        "tower: 5-layer ServiceBuilder vs core calls nested by hand",
        tower.stack5(),
        core.stack5()
    );

    // The async calls against their synchronous forms: <= 1.2x.
    rows.push(Row {
        name: "async Bulkhead::call vs Bulkhead::call_sync",
        limit: 1.2,
        slack_ns: 0.0,
        a: Side::looped("Bulkhead::call (ready)", || {
            poll_once(core.bulkhead.call(rows::body())).is_ok()
        }),
        b: Side::looped("Bulkhead::call_sync", || {
            core.bulkhead.call_sync(rows::count).is_ok()
        }),
    });
    rows.push(Row {
        name: "async RateLimiter::call vs RateLimiter::call_sync",
        limit: 1.2,
        slack_ns: 0.0,
        a: Side::looped("RateLimiter::call (ready)", || {
            poll_once(core.limiter.call(rows::body())).is_ok()
        }),
        b: Side::looped("RateLimiter::call_sync", || {
            core.limiter.call_sync(rows::count).is_ok()
        }),
    });
    rows
}

fn ratio(x: f64) -> String {
    format!("{x:.2}x")
}

fn print_row(row: &Row<'_>, m: &Measured) {
    let (lo, hi) = m.min_max();
    let allowed = row.allowed(m);
    let verdict = if m.median() <= allowed {
        "PASS"
    } else {
        "FAIL"
    };
    println!(
        "| {} | {} {:.1} ns | {} {:.1} ns | {} | {}-{} | <= {} | {} |",
        row.name,
        row.a.name,
        m.a_median_ns(),
        row.b.name,
        m.b_median_ns(),
        ratio(m.median()),
        ratio(lo),
        ratio(hi),
        ratio(allowed),
        verdict
    );
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument filters the rows.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("tokio runtime");
    // Every row runs inside the runtime: `tokio::time::timeout` finds its timer there.
    let _in_runtime = rt.enter();
    let plan = Plan::default();
    let started = Instant::now();
    println!(
        "alternated ratios: {} rounds of {} A/B pairs of ~{} ms batches; median ratio (min-max over rounds)",
        plan.rounds,
        plan.pairs,
        plan.batch.as_millis()
    );
    println!();
    println!(
        "| target | A (median per call) | B (median per call) | A/B median | min-max | limit | |"
    );
    println!("| --- | --- | --- | ---: | ---: | ---: | --- |");
    let mut failed = 0;
    for mut row in rows() {
        if !filter.is_empty() && !filter.iter().any(|f| row.name.contains(f.as_str())) {
            continue;
        }
        let m = alternate(plan, &mut row.a, &mut row.b);
        if m.median() > row.allowed(&m) {
            failed += 1;
        }
        print_row(&row, &m);
    }
    println!();
    println!(
        "{} row(s) failed; {:.0} s",
        failed,
        started.elapsed().as_secs_f64()
    );
}
