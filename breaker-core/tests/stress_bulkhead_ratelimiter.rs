//! Stress test (issue #12): 64 tasks call through one rate limiter and one bulkhead for 5 s
//! of real time on a multi-thread runtime, with random cancellations (timeouts that drop a
//! call while it waits for the limiter, waits in the bulkhead's queue, or runs) and random
//! panics inside the protected code. Checked throughout and at the end:
//!
//! - never more than `maxConcurrentCalls` calls inside the bulkhead at once;
//! - never more than `limitForPeriod` permits granted for one cycle (the cycle a permit
//!   belongs to is read from the limiter's own clock readings: the decision time for a
//!   permit granted at once, the end of the wait for a reserved one);
//! - every bulkhead permit back and nobody left waiting once the tasks stop.

use std::cell::Cell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use breaker_core::bulkhead::{Bulkhead, BulkheadConfig, BulkheadError};
use breaker_core::ratelimiter::{RateLimiter, RateLimiterConfig};
use breaker_core::{Clock, Sleep, SystemClock};

const TASKS: usize = 64;
const RUN: Duration = Duration::from_secs(5);
const MAX_CONCURRENT_CALLS: usize = 6;
const LIMIT_FOR_PERIOD: u64 = 40;
const PERIOD: Duration = Duration::from_millis(20);

thread_local! {
    /// The last reading this thread took of the recording clock.
    static LAST_NOW: Cell<u64> = const { Cell::new(0) };
    /// The deadline of the last wait this thread started on the recording clock.
    static LAST_SLEEP_DEADLINE: Cell<Option<u64>> = const { Cell::new(None) };
}

/// The precise system clock, remembering per thread what the limiter read and until when
/// it waits, so a task can tell which cycle its permit belongs to.
#[derive(Debug)]
struct RecordingClock {
    inner: SystemClock,
    first: OnceLock<u64>,
}

impl Clock for RecordingClock {
    fn now_nanos(&self) -> u64 {
        let now = self.inner.now_nanos();
        self.first.get_or_init(|| now);
        LAST_NOW.with(|c| c.set(now));
        now
    }
    fn sleep(&self, duration: Duration) -> Sleep {
        Sleep::from_future(tokio::time::sleep(duration))
    }
    fn sleep_until(&self, deadline_nanos: u64) -> Sleep {
        LAST_SLEEP_DEADLINE.with(|c| c.set(Some(deadline_nanos)));
        self.sleep(Duration::from_nanos(
            deadline_nanos.saturating_sub(self.inner.now_nanos()),
        ))
    }
}

/// Wraps the limiter's acquire future: on its first poll (where the limiter decides) it
/// notes the cycle the permit belongs to.
struct Recorded<F> {
    inner: Pin<Box<F>>,
    cycle: Option<u64>,
    clock: Arc<RecordingClock>,
}

impl<F: Future<Output = Result<(), E>>, E> Future for Recorded<F> {
    type Output = (Result<(), E>, u64);
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let first = self.cycle.is_none();
        if first {
            LAST_SLEEP_DEADLINE.with(|c| c.set(None));
        }
        let r = self.inner.as_mut().poll(cx);
        if first {
            let at = LAST_SLEEP_DEADLINE
                .with(Cell::get)
                .unwrap_or_else(|| LAST_NOW.with(Cell::get));
            let start = *self.clock.first.get().expect("the limiter read the clock");
            self.cycle = Some((at - start) / PERIOD.as_nanos() as u64);
        }
        r.map(|r| (r, self.cycle.unwrap()))
    }
}

#[derive(Default)]
struct Tally {
    granted: AtomicU64,
    refused: AtomicU64,
    full: AtomicU64,
    completed: AtomicU64,
    cancelled: AtomicU64,
    panicked: AtomicU64,
}

#[test]
fn sixty_four_tasks_through_one_bulkhead_and_one_rate_limiter() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let clock = Arc::new(RecordingClock {
        inner: SystemClock::precise(),
        first: OnceLock::new(),
    });
    let limiter = RateLimiter::new(
        "stress",
        RateLimiterConfig::builder()
            .limit_for_period(LIMIT_FOR_PERIOD as i64)
            .limit_refresh_period(PERIOD)
            .timeout_duration(Duration::from_millis(30))
            .clock(clock.clone())
            .build()
            .unwrap(),
    );
    let bulkhead = Bulkhead::new(
        "stress",
        BulkheadConfig::builder()
            .max_concurrent_calls(MAX_CONCURRENT_CALLS as i64)
            .max_wait_duration(Duration::from_millis(3))
            .clock(clock.clone())
            .build()
            .unwrap(),
    );
    let in_flight = Arc::new(AtomicUsize::new(0));
    let max_in_flight = Arc::new(AtomicUsize::new(0));
    let per_cycle: Arc<Mutex<HashMap<u64, u64>>> = Arc::default();
    let tally = Arc::new(Tally::default());
    // Panics are expected; keep them off the test output.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));

    runtime.block_on(async {
        let stop = Instant::now() + RUN;
        let mut tasks = Vec::new();
        for seed in 0..TASKS as u64 {
            let (limiter, bulkhead, clock) = (limiter.clone(), bulkhead.clone(), clock.clone());
            let (in_flight, max_in_flight) = (in_flight.clone(), max_in_flight.clone());
            let (per_cycle, tally) = (per_cycle.clone(), tally.clone());
            tasks.push(tokio::spawn(async move {
                let mut rng = fastrand::Rng::with_seed(seed);
                while Instant::now() < stop {
                    let work = Duration::from_micros(rng.u64(0..3_000));
                    let panics = rng.u8(0..20) == 0;
                    let cancel_after = Duration::from_micros(rng.u64(1_000..40_000));
                    let (limiter, bulkhead, clock) =
                        (limiter.clone(), bulkhead.clone(), clock.clone());
                    let (in_flight, max_in_flight) = (in_flight.clone(), max_in_flight.clone());
                    let (per_cycle, tally2) = (per_cycle.clone(), tally.clone());
                    // Each call is a task of its own, so a panic ends only that call.
                    let call = tokio::spawn(async move {
                        let one_call = async {
                            let acquire = Recorded {
                                inner: Box::pin(limiter.acquire_permission(1)),
                                cycle: None,
                                clock,
                            };
                            let (permitted, cycle) = acquire.await;
                            if permitted.is_err() {
                                tally2.refused.fetch_add(1, Ordering::Relaxed);
                                // Back off a little instead of spinning on refusals.
                                tokio::time::sleep(Duration::from_millis(1)).await;
                                return;
                            }
                            tally2.granted.fetch_add(1, Ordering::Relaxed);
                            *per_cycle.lock().unwrap().entry(cycle).or_default() += 1;
                            let r = bulkhead
                                .call(async {
                                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                                    max_in_flight.fetch_max(now, Ordering::SeqCst);
                                    assert!(now <= MAX_CONCURRENT_CALLS, "{now} calls in flight");
                                    struct Leave<'a>(&'a AtomicUsize);
                                    impl Drop for Leave<'_> {
                                        fn drop(&mut self) {
                                            self.0.fetch_sub(1, Ordering::SeqCst);
                                        }
                                    }
                                    let _leave = Leave(&in_flight);
                                    tokio::time::sleep(work).await;
                                    if panics {
                                        panic!("injected panic");
                                    }
                                    Ok::<(), ()>(())
                                })
                                .await;
                            match r {
                                Ok(()) => tally2.completed.fetch_add(1, Ordering::Relaxed),
                                Err(BulkheadError::Full(_)) => {
                                    tally2.full.fetch_add(1, Ordering::Relaxed)
                                }
                                Err(BulkheadError::Inner(())) => unreachable!(),
                            };
                        };
                        if tokio::time::timeout(cancel_after, one_call).await.is_err() {
                            tally2.cancelled.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                    if let Err(e) = call.await {
                        assert!(e.is_panic());
                        tally.panicked.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }));
        }
        for t in tasks {
            t.await.expect("a task failed an invariant");
        }
    });
    std::panic::set_hook(hook);

    let t = &tally;
    let counts = [
        ("granted", t.granted.load(Ordering::Relaxed)),
        ("refused by the limiter", t.refused.load(Ordering::Relaxed)),
        ("rejected by the bulkhead", t.full.load(Ordering::Relaxed)),
        ("completed", t.completed.load(Ordering::Relaxed)),
        ("cancelled", t.cancelled.load(Ordering::Relaxed)),
        ("panicked", t.panicked.load(Ordering::Relaxed)),
    ];
    eprintln!(
        "{counts:?}, max in flight {}",
        max_in_flight.load(Ordering::SeqCst)
    );
    for (what, n) in counts {
        assert!(n > 0, "nothing {what}: the run did not exercise it");
    }
    let per_cycle = per_cycle.lock().unwrap();
    let busiest = per_cycle.iter().max_by_key(|(_, n)| **n).unwrap();
    assert!(
        *busiest.1 <= LIMIT_FOR_PERIOD,
        "cycle {} granted {} permits, limitForPeriod is {LIMIT_FOR_PERIOD}",
        busiest.0,
        busiest.1
    );
    assert_eq!(
        *busiest.1, LIMIT_FOR_PERIOD,
        "the limiter was never saturated"
    );
    assert_eq!(max_in_flight.load(Ordering::SeqCst), MAX_CONCURRENT_CALLS);
    assert_eq!(in_flight.load(Ordering::SeqCst), 0);
    let m = bulkhead.metrics();
    assert_eq!(
        m.available_concurrent_calls as usize, MAX_CONCURRENT_CALLS,
        "a permit leaked"
    );
    assert!(!bulkhead.is_config_change_pending());
    assert_eq!(limiter.metrics().number_of_waiting_threads, 0);
}
