//! The store hook (issue #16) with a recording store, on a manual clock: which transitions
//! the store hears about, how a refused trial is rejected, what a trial's end reports, and
//! what `apply_shared_state` does in each state.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::{
    CircuitBreaker, CircuitBreakerConfig, ManualClock, SharedState, SharedView, State, TrialEnd,
    TrialGrant,
};

#[derive(Default)]
struct Recording {
    transitions: Mutex<Vec<(State, State, bool)>>,
    trials: Mutex<Vec<u64>>,
    ends: Mutex<Vec<(u64, TrialEnd)>>,
    grant: Mutex<Option<TrialGrant>>,
}

impl SharedState for Recording {
    fn on_transition(&self, _: &CircuitBreaker, from: State, to: State, manual: bool) {
        self.transitions.lock().unwrap().push((from, to, manual));
    }
    fn acquire_trial(&self, _: &CircuitBreaker, episode: u64) -> TrialGrant {
        self.trials.lock().unwrap().push(episode);
        self.grant.lock().unwrap().unwrap_or(TrialGrant::Granted)
    }
    fn end_trial(&self, _: &CircuitBreaker, episode: u64, end: TrialEnd) {
        self.ends.lock().unwrap().push((episode, end));
    }
}

const START_MS: u64 = 1_700_000_000_000;

fn breaker() -> (CircuitBreaker, ManualClock, Arc<Recording>) {
    let clock = ManualClock::at_epoch_millis(START_MS);
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(2)
        .minimum_number_of_calls(2)
        .permitted_number_of_calls_in_half_open_state(2)
        .wait_duration_in_open_state(Duration::from_secs(10))
        .slow_call_duration_threshold(Duration::from_secs(1))
        .clock(Arc::new(clock.clone()))
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("shared", config);
    let store = Arc::new(Recording::default());
    assert!(cb.attach_shared_state(store.clone()).is_ok());
    (cb, clock, store)
}

fn trip(cb: &CircuitBreaker) {
    for _ in 0..2 {
        cb.try_acquire_permission().unwrap().on_error();
    }
}

#[test]
fn a_breaker_has_one_store_for_life() {
    let (cb, _, _) = breaker();
    assert!(cb.has_shared_state());
    assert!(cb
        .attach_shared_state(Arc::new(Recording::default()))
        .is_err());
}

#[test]
fn the_store_hears_the_breakers_own_transitions_not_the_ones_it_applies() {
    let (cb, clock, store) = breaker();
    trip(&cb);
    cb.reset();
    cb.apply_shared_state(SharedView::Open {
        until: START_MS * 1_000_000 + 5_000_000_000,
    });
    clock.advance(Duration::from_secs(6));
    // The first call after the applied deadline moves to HALF_OPEN through the calls.
    let p = cb.try_acquire_permission().unwrap();
    assert_eq!(p.admitted_in(), State::HalfOpen);
    drop(p);
    assert_eq!(
        *store.transitions.lock().unwrap(),
        [
            (State::Closed, State::Open, false),
            (State::Open, State::Closed, true),
            (State::Open, State::HalfOpen, false),
        ]
    );
}

#[test]
fn a_refused_trial_is_rejected_and_its_permission_handed_back() {
    let (cb, clock, store) = breaker();
    trip(&cb);
    clock.advance(Duration::from_secs(11));
    *store.grant.lock().unwrap() = Some(TrialGrant::Refused {
        until: START_MS * 1_000_000 + 12_000_000_000,
    });
    for _ in 0..3 {
        let e = cb.try_acquire_permission().unwrap_err();
        assert_eq!(e.state(), State::HalfOpen);
        // 12 s - 11 s.
        assert_eq!(e.retry_after(), Some(Duration::from_secs(1)));
    }
    // Every refusal handed the local permission back: 3 asks, 2 local permits.
    assert_eq!(store.trials.lock().unwrap().len(), 3);
    assert_eq!(cb.metrics().number_of_not_permitted_calls, 3);
    *store.grant.lock().unwrap() = Some(TrialGrant::Granted);
    let a = cb.try_acquire_permission().unwrap();
    let b = cb.try_acquire_permission().unwrap();
    assert!(cb.try_acquire_permission().is_err(), "2 local permits");
    clock.advance(Duration::from_millis(1500));
    a.on_error();
    b.on_ignored_error();
    let ends = store.ends.lock().unwrap().clone();
    assert_eq!(ends.len(), 2);
    assert_eq!(
        ends[0].1,
        TrialEnd::Outcome {
            failed: true,
            elapsed: Duration::from_millis(1500)
        }
    );
    assert_eq!(ends[1].1, TrialEnd::Released);
}

#[test]
fn closed_calls_never_reach_the_store() {
    let (cb, _, store) = breaker();
    for _ in 0..100 {
        cb.try_acquire_permission().unwrap().on_success();
    }
    assert!(store.trials.lock().unwrap().is_empty());
    assert!(store.ends.lock().unwrap().is_empty());
    assert!(store.transitions.lock().unwrap().is_empty());
}

#[test]
fn applied_states() {
    let (cb, clock, _) = breaker();
    let now = START_MS * 1_000_000;
    // CLOSED -> OPEN with the shared deadline: retry_after counts down to it.
    assert!(cb.apply_shared_state(SharedView::Open {
        until: now + 4_000_000_000
    }));
    assert_eq!(cb.state(), State::Open);
    let e = cb.try_acquire_permission().unwrap_err();
    assert_eq!(e.retry_after(), Some(Duration::from_millis(4001)));
    // The same deadline again changes nothing.
    assert!(!cb.apply_shared_state(SharedView::Open {
        until: now + 4_000_000_000
    }));
    // OPEN -> HALF_OPEN -> CLOSED.
    assert!(cb.apply_shared_state(SharedView::HalfOpen));
    assert_eq!(cb.state(), State::HalfOpen);
    assert!(cb.apply_shared_state(SharedView::Closed));
    assert_eq!(cb.state(), State::Closed);
    // CLOSED -> HALF_OPEN goes through an expired OPEN.
    assert!(cb.apply_shared_state(SharedView::HalfOpen));
    assert_eq!(cb.state(), State::HalfOpen);
    // A state set by hand in this process is left alone.
    cb.transition_to_forced_open_state().unwrap();
    assert!(!cb.apply_shared_state(SharedView::Closed));
    assert_eq!(cb.state(), State::ForcedOpen);
    clock.advance(Duration::from_secs(1));
}
