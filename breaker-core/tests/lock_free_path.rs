//! The lock-free CLOSED path (an outcome recorded with one compare-and-swap when it equals
//! the one it replaces in a full count window, nobody subscribed) changes nothing a user can
//! observe: a breaker without subscribers (which takes that path whenever it can) and one
//! with a subscriber (which never takes it: its calls publish events) go through the same
//! states with the same metrics, step by step, over random outcomes, durations, count and
//! time windows, configs, config changes and manual transitions.

use std::sync::Arc;
use std::time::Duration;

use breaker_core::{
    CircuitBreaker, CircuitBreakerConfig, ManualClock, Metrics, SlidingWindowType, State,
};

/// A random config: a count window of 1-30 calls or a time window of 1-5 s.
fn config(rng: &mut fastrand::Rng, clock: &ManualClock) -> CircuitBreakerConfig {
    let (kind, size) = if rng.bool() {
        (SlidingWindowType::CountBased, rng.i64(1..=30))
    } else {
        (SlidingWindowType::TimeBased, rng.i64(1..=5))
    };
    CircuitBreakerConfig::builder()
        .sliding_window_type(kind)
        .sliding_window_size(size)
        .minimum_number_of_calls(rng.i64(1..=40))
        .failure_rate_threshold(rng.f32() * 99.0 + 1.0)
        .slow_call_rate_threshold(rng.f32() * 99.0 + 1.0)
        .slow_call_duration_threshold(Duration::from_millis(rng.u64(1..=20)))
        .permitted_number_of_calls_in_half_open_state(rng.i64(1..=5))
        .wait_duration_in_open_state(Duration::from_millis(5))
        .clock(Arc::new(clock.clone()))
        .build()
        .expect("valid config")
}

/// Everything observable about a breaker: its state and its metrics.
fn observe(cb: &CircuitBreaker) -> (State, Metrics) {
    (cb.state(), cb.metrics())
}

#[test]
fn quiet_and_subscribed_breakers_agree_step_by_step() {
    let mut rng = fastrand::Rng::with_seed(14);
    let mut steps = 0u32;
    for round in 0..200 {
        let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
        let c = config(&mut rng, &clock);
        let quiet = CircuitBreaker::new("quiet", c.clone());
        let loud = CircuitBreaker::new("loud", c);
        let _events = loud.attach_event_buffer(10);
        for step in 0..300 {
            // Mostly within one second, now and then into the next ones.
            let ms = if rng.u8(0..50) == 0 {
                rng.u64(0..3000)
            } else {
                rng.u64(0..3)
            };
            clock.advance(Duration::from_millis(ms));
            // Most outcomes repeat the previous one: the lock-free path's case.
            let failed = rng.u8(0..10) < 2;
            let elapsed = Duration::from_millis(rng.u64(0..25));
            match (
                quiet.try_acquire_permission(),
                loud.try_acquire_permission(),
            ) {
                (Ok(a), Ok(b)) => {
                    let outcome = if failed {
                        breaker_core::Outcome::Failure
                    } else {
                        breaker_core::Outcome::Success
                    };
                    a.record_with_duration(outcome, elapsed);
                    b.record_with_duration(outcome, elapsed);
                }
                (Err(_), Err(_)) => {}
                (a, b) => panic!(
                    "round {round} step {step}: permitted {} vs {}",
                    a.is_ok(),
                    b.is_ok()
                ),
            }
            // Reading the metrics closes and reopens the path: read only now and then, so
            // long stretches run lock-free.
            if rng.u8(0..8) == 0 {
                assert_eq!(
                    format!("{:?}", observe(&quiet)),
                    format!("{:?}", observe(&loud)),
                    "round {round} step {step}"
                );
            }
            match rng.u16(0..400) {
                0 => {
                    let c = config(&mut rng, &clock);
                    quiet.replace_config(c.clone());
                    loud.replace_config(c);
                }
                1 => {
                    quiet.reset();
                    loud.reset();
                }
                2 => {
                    let a = quiet.transition_to_open_state();
                    let b = loud.transition_to_open_state();
                    assert_eq!(a.is_ok(), b.is_ok());
                }
                _ => {}
            }
            steps += 1;
        }
        assert_eq!(
            format!("{:?}", observe(&quiet)),
            format!("{:?}", observe(&loud)),
            "round {round}"
        );
    }
    assert_eq!(steps, 200 * 300);
}

/// Two threads keep a full window of 10 busy with outcomes that mostly repeat (so most go
/// lock-free) while a third reads the metrics (each read closes the path, adopts the head
/// the lock-free updates moved, and reopens it): the window always holds 10 calls whose
/// counts add up, the breaker never trips (failures stay below the threshold), and at the
/// end the window holds exactly the last 10 outcomes of the one thread still writing.
#[test]
fn lock_free_outcomes_race_locked_ones_and_readers() {
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(10)
        .minimum_number_of_calls(10)
        .failure_rate_threshold(100.0)
        .slow_call_duration_threshold(Duration::from_secs(3600))
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("race", config);
    for _ in 0..10 {
        cb.try_acquire_permission().unwrap().on_success();
    }
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2u64)
        .map(|t| {
            let cb = cb.clone();
            std::thread::spawn(move || {
                for i in 0..200_000u64 {
                    let p = cb.try_acquire_permission().expect("never trips");
                    // One failure in 97 calls: never ten in a row.
                    if (i + t * 31) % 97 == 0 {
                        p.on_error()
                    } else {
                        p.on_success()
                    }
                }
            })
        })
        .collect();
    let reader = {
        let (cb, stop) = (cb.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let m = cb.metrics();
                assert_eq!(m.number_of_buffered_calls, 10, "{m:?}");
                assert_eq!(m.number_of_failed_calls + m.number_of_successful_calls, 10);
                assert_eq!(m.state, State::Closed);
                reads += 1;
                std::thread::yield_now();
            }
            reads
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    // One thread alone: the window ends holding its outcomes.
    for _ in 0..9 {
        cb.try_acquire_permission().unwrap().on_success();
    }
    cb.try_acquire_permission().unwrap().on_error();
    let m = cb.metrics();
    assert_eq!(m.number_of_buffered_calls, 10);
    assert_eq!(m.number_of_failed_calls, 1);
    assert_eq!(m.state, State::Closed);
}
