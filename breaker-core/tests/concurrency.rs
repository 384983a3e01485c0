//! Many threads on one breaker: HALF_OPEN never admits more calls than its permits, and no
//! outcome is lost.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use breaker_core::{CircuitBreaker, CircuitBreakerConfig, ManualClock, State};

const THREADS: usize = 4;

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
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let cb = cb.clone();
            let barrier = barrier.clone();
            thread::spawn(move || {
                barrier.wait();
                for i in 0..CALLS {
                    let p = cb.try_acquire_permission().unwrap();
                    // Thread t fails every (t + 2)-th call.
                    if i % (t as u32 + 2) == 0 {
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
