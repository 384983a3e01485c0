//! The OPEN wait per attempt (Resilience4j's IntervalFunction and attempt counting, spec
//! §1.3 and §2.6): attempt 1 after CLOSED, +1 per HALF_OPEN -> OPEN, back to 0 on CLOSED;
//! admission strictly after the deadline.

use std::sync::Arc;
use std::time::Duration;

use breaker_core::{CircuitBreaker, CircuitBreakerConfig, IntervalFunction, ManualClock, State};

fn exponential(clock: &ManualClock) -> CircuitBreaker {
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(1)
        .minimum_number_of_calls(1)
        .permitted_number_of_calls_in_half_open_state(1)
        .wait_interval_function_in_open_state(IntervalFunction::Exponential {
            initial_millis: 1000,
            multiplier: 2.0,
            max_millis: None,
        })
        .clock(Arc::new(clock.clone()))
        .build()
        .unwrap();
    CircuitBreaker::new("backoff", config)
}

/// How long (ms) the breaker stays closed to calls: the first admitted request comes 1 ms
/// after the deadline.
fn measure_wait(cb: &CircuitBreaker, clock: &ManualClock) -> u64 {
    let mut waited = 0;
    loop {
        match cb.try_acquire_permission() {
            Ok(p) => {
                // The trial call fails: back to OPEN with the next attempt.
                p.on_error();
                return waited;
            }
            Err(_) => {
                clock.advance(Duration::from_millis(1));
                waited += 1;
            }
        }
    }
}

#[test]
fn exponential_waits_double_per_failed_trial_as_in_resilience4j() {
    // Resilience4j with ofExponentialBackoff(1000, 2): 1001, 2001, 4001, 8001 ms.
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let cb = exponential(&clock);
    cb.try_acquire_permission().unwrap().on_error();
    let waits: Vec<u64> = (0..4).map(|_| measure_wait(&cb, &clock)).collect();
    assert_eq!(waits, [1001, 2001, 4001, 8001]);
}

#[test]
fn closing_resets_the_attempts() {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let cb = exponential(&clock);
    cb.try_acquire_permission().unwrap().on_error();
    assert_eq!(measure_wait(&cb, &clock), 1001); // trial fails: attempt 2
    clock.advance(Duration::from_millis(2001));
    cb.try_acquire_permission().unwrap().on_success(); // trial succeeds: CLOSED, attempts 0
    assert_eq!(cb.state(), State::Closed);
    cb.try_acquire_permission().unwrap().on_error();
    assert_eq!(measure_wait(&cb, &clock), 1001, "attempt 1 again");
}

#[test]
fn open_for_keeps_the_attempts_and_forced_open_adds_one() {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let cb = exponential(&clock);
    cb.try_acquire_permission().unwrap().on_error(); // attempt 1
    cb.transition_to_open_state_for(Duration::from_millis(10))
        .unwrap(); // still attempt 1
    assert_eq!(measure_wait(&cb, &clock), 11); // the trial fails: attempt 2
    assert_eq!(measure_wait(&cb, &clock), 2001); // the trial fails: attempt 3
    cb.transition_to_forced_open_state().unwrap(); // FORCED_OPEN: attempt 4
    cb.transition_to_open_state().unwrap(); // OPEN: attempt 5, 1000 * 2^4 ms
    assert_eq!(measure_wait(&cb, &clock), 16001);
}
