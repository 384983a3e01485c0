//! With the `tokio` feature, timers fire on their own inside a runtime, with no call or read
//! to trigger them. Real time is used (tokio's paused clock does not move the system clock),
//! with wide margins; nothing here measures speed.
#![cfg(feature = "tokio")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::{CircuitBreaker, CircuitBreakerConfig, EventKind, State};

fn transitions(cb: &CircuitBreaker) -> Arc<Mutex<Vec<(State, State)>>> {
    let seen: Arc<Mutex<Vec<(State, State)>>> = Arc::default();
    let s = seen.clone();
    cb.subscribe(move |e| {
        if let EventKind::StateTransition { from, to } = e.kind {
            s.lock().unwrap().push((from, to));
        }
    });
    seen
}

async fn wait_for(seen: &Mutex<Vec<(State, State)>>, want: (State, State)) -> bool {
    for _ in 0..200 {
        if seen.lock().unwrap().contains(&want) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test]
async fn max_wait_in_half_open_fires_on_its_own() {
    let config = CircuitBreakerConfig::builder()
        .initial_state(State::HalfOpen)
        .max_wait_duration_in_half_open_state(Duration::from_millis(50))
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("idle-half-open", config);
    let seen = transitions(&cb);
    assert!(
        wait_for(&seen, (State::HalfOpen, State::Open)).await,
        "the half-open timer never fired"
    );
}

#[tokio::test]
async fn automatic_transition_from_open_to_half_open() {
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(1)
        .minimum_number_of_calls(1)
        .wait_duration_in_open_state(Duration::from_millis(50))
        .automatic_transition_from_open_to_half_open_enabled(true)
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("auto", config);
    let seen = transitions(&cb);
    cb.try_acquire_permission().unwrap().on_error();
    assert!(seen.lock().unwrap().contains(&(State::Closed, State::Open)));
    assert!(
        wait_for(&seen, (State::Open, State::HalfOpen)).await,
        "the automatic transition never fired"
    );
}
