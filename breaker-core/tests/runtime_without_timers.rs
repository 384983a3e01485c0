//! Issue 23 item 7, "Waits panic in a tokio runtime built without timers":
//! `Builder::new_current_thread().build()` (no `enable_time`) made every wait panic with "A
//! Tokio 1.x context was found, but timers are disabled" (reproduced with
//! `TimeLimiter::call`), and the automatic OPEN -> HALF_OPEN transition silently fell back
//! to lazy. Waits now use the library's timer thread there. Real time is used, with wide
//! margins (up to 10 s to see a 50 ms transition under load); nothing measures speed.
#![cfg(feature = "tokio")]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::retry::{Retry, RetryConfig, RetryError};
use breaker_core::timelimiter::{TimeLimiter, TimeLimiterConfig, TimeLimiterError};
use breaker_core::{CircuitBreaker, CircuitBreakerConfig, Clock, EventKind, State, SystemClock};

fn runtime_without_timers() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

#[test]
fn a_time_limiter_times_out_instead_of_panicking() {
    let limiter = TimeLimiter::new(
        "no-timers",
        TimeLimiterConfig::builder()
            .timeout_duration(Duration::from_millis(20))
            .build()
            .unwrap(),
    );
    let r: Result<(), TimeLimiterError<std::io::Error>> =
        runtime_without_timers().block_on(limiter.call(std::future::pending()));
    let e = r.unwrap_err();
    assert!(matches!(e, TimeLimiterError::Timeout(_)), "{e}");
    // A call that finishes in time is unaffected.
    let r: Result<u32, TimeLimiterError<std::io::Error>> =
        runtime_without_timers().block_on(limiter.call(async { Ok(7) }));
    assert_eq!(r.unwrap(), 7);
}

#[test]
fn a_retry_waits_between_attempts() {
    let retry = Retry::new(
        "no-timers",
        RetryConfig::builder()
            .max_attempts(3)
            .wait_duration(Duration::from_millis(5))
            .build()
            .unwrap(),
    );
    let attempts = AtomicU32::new(0);
    let r: Result<(), RetryError<&str>> = runtime_without_timers().block_on(retry.call(|| {
        attempts.fetch_add(1, Ordering::SeqCst);
        async { Err("down") }
    }));
    assert!(r.is_err());
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
}

#[test]
fn the_automatic_transition_fires_on_its_own() {
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(1)
        .minimum_number_of_calls(1)
        .wait_duration_in_open_state(Duration::from_millis(50))
        .automatic_transition_from_open_to_half_open_enabled(true)
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("auto-no-timers", config);
    let seen: Arc<Mutex<Vec<(State, State)>>> = Arc::default();
    let s = seen.clone();
    cb.subscribe(move |e| {
        if let EventKind::StateTransition { from, to } = e.kind {
            s.lock().unwrap().push((from, to));
        }
    });
    let fired = runtime_without_timers().block_on(async {
        cb.try_acquire_permission().unwrap().on_error();
        assert_eq!(*seen.lock().unwrap(), [(State::Closed, State::Open)]);
        // Nothing touches the breaker from here on: only its timer can move it.
        let clock = SystemClock::new();
        for _ in 0..1000 {
            if seen
                .lock()
                .unwrap()
                .contains(&(State::Open, State::HalfOpen))
            {
                return true;
            }
            clock.sleep(Duration::from_millis(10)).await;
        }
        false
    });
    assert!(fired, "the automatic transition never fired");
}
