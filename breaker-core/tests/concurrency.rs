//! Many threads on one breaker: HALF_OPEN never admits more calls than its permits, and no
//! outcome is lost.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use breaker_core::{CircuitBreaker, CircuitBreakerConfig, ManualClock, State};

const THREADS: usize = 4;

/// Runs `threads` writers on `cb`, started together; writer `t` records `calls` outcomes,
/// the `i`-th a failure when `fails(t, i)`. Returns when every writer has finished.
fn run_writers(cb: &CircuitBreaker, threads: usize, calls: u32, fails: fn(u32, u32) -> bool) {
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads as u32)
        .map(|t| {
            let (cb, barrier) = (cb.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                for i in 0..calls {
                    let p = cb.try_acquire_permission().unwrap();
                    if fails(t, i) {
                        p.on_error()
                    } else {
                        p.on_success()
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn counts_add_up_under_contention() {
    const CALLS: u32 = 5_000;
    // A window larger than all calls, a minimum that is never reached: nothing trips.
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(100_000)
        .minimum_number_of_calls(1_000_000)
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("stress", config);
    // Thread t fails every (t + 2)-th call.
    run_writers(&cb, THREADS, CALLS, |t, i| i % (t + 2) == 0);
    let expected_failures: u32 = (0..THREADS as u32).map(|t| CALLS.div_ceil(t + 2)).sum();
    let m = cb.metrics();
    assert_eq!(m.number_of_buffered_calls, THREADS as u32 * CALLS);
    assert_eq!(m.number_of_failed_calls, expected_failures);
    assert_eq!(
        m.number_of_successful_calls,
        THREADS as u32 * CALLS - expected_failures
    );
}

#[test]
fn half_open_never_admits_more_than_its_permits() {
    for round in 0..50 {
        let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
        let config = CircuitBreakerConfig::builder()
            .sliding_window_size(1)
            .minimum_number_of_calls(1)
            .permitted_number_of_calls_in_half_open_state(3)
            .wait_duration_in_open_state(Duration::from_millis(100))
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap();
        let cb = CircuitBreaker::new("half-open-race", config);
        cb.try_acquire_permission().unwrap().on_error();
        assert_eq!(cb.state(), State::Open);
        clock.advance(Duration::from_millis(101));
        let admitted = Arc::new(AtomicU32::new(0));
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (cb, admitted, barrier) = (cb.clone(), admitted.clone(), barrier.clone());
                thread::spawn(move || {
                    barrier.wait();
                    let mut held = Vec::new();
                    for _ in 0..10 {
                        if let Ok(p) = cb.try_acquire_permission() {
                            admitted.fetch_add(1, Ordering::SeqCst);
                            held.push(p);
                        }
                    }
                    // Keep the permits until every thread has tried.
                    barrier.wait();
                    for p in held {
                        p.release();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(admitted.load(Ordering::SeqCst), 3, "round {round}");
        assert_eq!(cb.state(), State::HalfOpen);
        let m = cb.metrics();
        assert_eq!(m.number_of_not_permitted_calls, THREADS as u64 * 10 - 3);
    }
}

/// More threads than cores on one breaker (the machine's lock is a spin-then-yield lock, so
/// holders get preempted while others wait): every outcome is counted exactly once, a reader
/// racing the writers never sees more calls than the window holds or totals that do not add
/// up, and rejections in OPEN are all counted.
#[test]
fn oversubscribed_lock_keeps_counts_exact() {
    const WRITERS: usize = 8;
    const CALLS: u32 = 20_000;
    const WINDOW: u32 = 1_000;
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(i64::from(WINDOW))
        .minimum_number_of_calls(i64::from(WINDOW))
        .failure_rate_threshold(100.0)
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("oversubscribed", config);
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (cb, done) = (cb.clone(), done.clone());
        thread::spawn(move || {
            let mut reads = 0u32;
            while !done.load(Ordering::Relaxed) {
                let m = cb.metrics();
                assert!(m.number_of_buffered_calls <= WINDOW, "{m:?}");
                assert_eq!(
                    m.number_of_failed_calls + m.number_of_successful_calls,
                    m.number_of_buffered_calls
                );
                reads += 1;
            }
            reads
        })
    };
    // Every writer fails one call in 4: never 100 %, nothing trips.
    run_writers(&cb, WRITERS, CALLS, |t, i| (i + t) % 4 == 0);
    done.store(true, Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    assert_eq!(cb.state(), State::Closed);
    let m = cb.metrics();
    assert_eq!(m.number_of_buffered_calls, WINDOW);

    // OPEN: every rejection, lock-free or not, is counted once.
    cb.transition_to_open_state().unwrap();
    let barrier = Arc::new(Barrier::new(WRITERS));
    let handles: Vec<_> = (0..WRITERS)
        .map(|_| {
            let (cb, barrier) = (cb.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                for _ in 0..CALLS {
                    let e = cb.try_acquire_permission().unwrap_err();
                    assert_eq!(e.circuit_breaker_name(), "oversubscribed");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(
        cb.metrics().number_of_not_permitted_calls,
        WRITERS as u64 * u64::from(CALLS)
    );
}

/// Many threads failing at once on a CLOSED breaker: it trips exactly once per CLOSED state
/// object (one `FAILURE_RATE_EXCEEDED`, one CLOSED->OPEN), however many outcomes cross the
/// threshold concurrently; late outcomes land in OPEN without a second transition.
#[test]
fn exactly_one_trip_per_closed_state() {
    use breaker_core::EventKind;
    for round in 0..30 {
        let config = CircuitBreakerConfig::builder()
            .sliding_window_size(10)
            .minimum_number_of_calls(10)
            .wait_duration_in_open_state(Duration::from_secs(3600))
            .build()
            .unwrap();
        let cb = CircuitBreaker::new("one-trip", config);
        let to_open = Arc::new(AtomicU32::new(0));
        let exceeded = Arc::new(AtomicU32::new(0));
        {
            let (to_open, exceeded) = (to_open.clone(), exceeded.clone());
            cb.subscribe(move |e| match e.kind {
                EventKind::StateTransition {
                    from: State::Closed,
                    to: State::Open,
                } => {
                    to_open.fetch_add(1, Ordering::SeqCst);
                }
                EventKind::FailureRateExceeded { .. } => {
                    exceeded.fetch_add(1, Ordering::SeqCst);
                }
                _ => {}
            });
        }
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (cb, barrier) = (cb.clone(), barrier.clone());
                thread::spawn(move || {
                    // Take the permits first so every outcome races the others.
                    let permits: Vec<_> = (0..10)
                        .filter_map(|_| cb.try_acquire_permission().ok())
                        .collect();
                    barrier.wait();
                    for p in permits {
                        p.on_error();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(cb.state(), State::Open, "round {round}");
        assert_eq!(to_open.load(Ordering::SeqCst), 1, "round {round}");
        assert_eq!(exceeded.load(Ordering::SeqCst), 1, "round {round}");
    }
}
