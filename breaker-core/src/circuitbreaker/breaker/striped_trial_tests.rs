//! HALF_OPEN's striped trial successes when the last one's "settle now" is missed: two
//! last successes that end at once can each miss the other's stripe store. Simulated
//! here by counting a success in the stripe and not acting on the answer.
use super::*;
use std::time::Duration;

use crate::fast_window::Recorded;
use crate::{ManualClock, Permit};

const T0_MS: u64 = 1_700_000_000_000;

fn half_open(clock: &ManualClock) -> CircuitBreaker {
    half_open_with(clock, 2)
}

fn config(clock: &ManualClock, permitted: i64) -> CircuitBreakerConfig {
    CircuitBreakerConfig::builder()
        .permitted_number_of_calls_in_half_open_state(permitted)
        .minimum_number_of_calls(permitted)
        .failure_rate_threshold(50.0)
        .wait_duration_in_open_state(Duration::from_secs(10))
        .clock(Arc::new(clock.clone()))
        .build()
        .expect("valid config")
}

fn half_open_with(clock: &ManualClock, permitted: i64) -> CircuitBreaker {
    let cb = CircuitBreaker::new("striped", config(clock, permitted));
    cb.transition_to_open_state().expect("CLOSED -> OPEN");
    cb.transition_to_half_open_state()
        .expect("OPEN -> HALF_OPEN");
    cb
}

/// Counts `permit`'s success in this thread's stripe, ending now, as the lock-free path
/// does, but without settling, although it was the last outcome: the race's outcome.
fn unseen_success(cb: &CircuitBreaker, permit: Permit<'_>) {
    let answer = late_success(cb, permit);
    assert_eq!(answer, Recorded::YesSettle, "it was the last outcome");
}

/// Counts `permit`'s success in this thread's stripe without settling, whatever the
/// answer (returned): a success checked against the published state just before a seal
/// and stored just after it.
fn late_success(cb: &CircuitBreaker, permit: Permit<'_>) -> Recorded {
    let end = cb.now_nanos();
    let answer =
        cb.inner
            .fast
            .record_trial_in_stripe(crate::striped::thread_index(), end, permit.episode());
    std::mem::forget(permit);
    answer
}

#[test]
fn a_trial_success_stored_after_its_state_ended_counts_in_the_next_one() {
    let clock = ManualClock::at_epoch_millis(T0_MS);
    let cb = half_open(&clock);
    let first = cb.try_acquire_permission().expect("trial 1");
    let second = cb.try_acquire_permission().expect("trial 2");
    first.on_success();
    cb.transition_to_closed_state()
        .expect("HALF_OPEN -> CLOSED");
    let _ = late_success(&cb, second);
    // As any outcome of an earlier state, it is recorded in the current one (as in
    // Resilience4j, and as the lock-free compare-and-swap that failed used to do).
    let m = cb.metrics();
    assert_eq!(m.number_of_successful_calls, 1);
    assert_eq!(m.number_of_buffered_calls, 1);
}

#[test]
fn a_reconfiguration_first_settles_a_verdict_the_stripes_made_due() {
    let clock = ManualClock::at_epoch_millis(T0_MS);
    let cb = half_open_with(&clock, 3);
    let trials: Vec<_> = (0..3)
        .map(|_| cb.try_acquire_permission().expect("a trial"))
        .collect();
    let mut trials = trials.into_iter();
    trials.next().unwrap().on_success();
    trials.next().unwrap().on_success();
    unseen_success(&cb, trials.next().unwrap());
    // The verdict (CLOSED: 3 of 3 succeeded) comes before the new config, which would
    // otherwise replace the complete trial window with an empty one and no permission.
    cb.replace_config(config(&clock, 2));
    assert_eq!(cb.state(), State::Closed);
}

#[test]
fn a_shrunk_trial_window_takes_what_it_holds_and_the_rest_count_after_it() {
    let clock = ManualClock::at_epoch_millis(T0_MS);
    let cb = half_open_with(&clock, 4);
    let trials: Vec<_> = (0..4)
        .map(|_| cb.try_acquire_permission().expect("a trial"))
        .collect();
    // A fresh trial window of 2 (no permission left: 4 are in flight).
    cb.replace_config(config(&clock, 2));
    let mut trials = trials.into_iter();
    trials.next().unwrap().on_success();
    assert_eq!(cb.state(), State::HalfOpen);
    // Three more succeed before anything settles: two fill the window (CLOSED), the
    // third is an outcome after the verdict and counts in CLOSED.
    for t in trials {
        let _ = late_success(&cb, t);
    }
    assert_eq!(cb.state(), State::Closed);
    let m = cb.metrics();
    assert_eq!(
        m.number_of_successful_calls, 2,
        "4 successes, 2 in the trial window"
    );
}

#[test]
fn an_unsettled_last_success_closes_the_breaker_on_the_next_read() {
    let clock = ManualClock::at_epoch_millis(T0_MS);
    let cb = half_open(&clock);
    let first = cb.try_acquire_permission().expect("trial 1");
    let second = cb.try_acquire_permission().expect("trial 2");
    first.on_success();
    assert_eq!(cb.state(), State::HalfOpen, "one of two trials in");
    unseen_success(&cb, second);
    // Both successes are in: 0 % failures, CLOSED (Resilience4j decides on the second).
    assert_eq!(cb.state(), State::Closed);
    assert!(cb.try_acquire_permission().is_ok());
}

#[test]
fn an_unsettled_last_success_opens_the_breaker_as_of_its_end() {
    let clock = ManualClock::at_epoch_millis(T0_MS);
    let cb = half_open(&clock);
    let first = cb.try_acquire_permission().expect("trial 1");
    let second = cb.try_acquire_permission().expect("trial 2");
    clock.advance(Duration::from_millis(1));
    first.on_error();
    clock.advance(Duration::from_millis(1));
    // Ends at T0 + 2 ms; nothing touches the breaker for 5 s after it.
    unseen_success(&cb, second);
    clock.advance(Duration::from_secs(5));
    // 1 failure of 2 = 50 % >= 50 %: OPEN, decided as of the success's end, so the
    // 10 s wait runs from T0 + 2 ms (strictly after T0 + 10.002 s admits a trial call).
    let rejected = cb.try_acquire_permission().expect_err("OPEN");
    assert_eq!(rejected.state(), State::Open);
    // T0 + 5.002 s now, the deadline T0 + 10.002 s: 5 s left (+ 1 ms, see `retry_after`);
    // decided now, it would be 10 s.
    assert_eq!(
        rejected.retry_after(),
        Some(Duration::from_millis(5_000 + 1))
    );
    clock.set_epoch_nanos((T0_MS + 10_002) * 1_000_000);
    assert!(cb.try_acquire_permission().is_err(), "not strictly after");
    clock.advance(Duration::from_nanos(1));
    let trial = cb.try_acquire_permission().expect("a trial call");
    assert_eq!(trial.admitted_in(), State::HalfOpen);
}
