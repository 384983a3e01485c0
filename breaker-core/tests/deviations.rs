//! Pins the places where breaker deliberately differs from Resilience4j (see the crate docs,
//! "Where this differs from Resilience4j").

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::Duration;

use breaker_core::{CallError, CircuitBreaker, CircuitBreakerConfig, ManualClock, Outcome, State};

fn clock() -> ManualClock {
    ManualClock::at_epoch_millis(1_700_000_000_000)
}

/// Window 2, minimum 2, one trial call, 1 s open wait.
fn small(clock: &ManualClock) -> CircuitBreakerConfig {
    CircuitBreakerConfig::builder()
        .sliding_window_size(2)
        .minimum_number_of_calls(2)
        .permitted_number_of_calls_in_half_open_state(1)
        .wait_duration_in_open_state(Duration::from_secs(1))
        .clock(Arc::new(clock.clone()))
        .build()
        .unwrap()
}

fn open_then_half_open(cb: &CircuitBreaker, clock: &ManualClock) {
    cb.try_acquire_permission().unwrap().on_error();
    cb.try_acquire_permission().unwrap().on_error();
    assert_eq!(cb.state(), State::Open);
    clock.advance(Duration::from_millis(1001));
}

#[test]
fn a_cancelled_call_hands_its_half_open_permit_back() {
    let clock = clock();
    let cb = CircuitBreaker::new("cancel", small(&clock));
    open_then_half_open(&cb, &clock);
    {
        // A call that never finishes, polled once (it takes the only trial permit), then
        // dropped, as tokio::time::timeout or select! would.
        let mut fut = pin!(cb.call(std::future::pending::<Result<(), ()>>()));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        assert_eq!(cb.state(), State::HalfOpen);
        assert!(
            cb.try_acquire_permission().is_err(),
            "the only permit is taken"
        );
    }
    // Dropped: the permit is back, so a new trial call is admitted.
    let p = cb
        .try_acquire_permission()
        .expect("permit was released on drop");
    p.on_success();
    assert_eq!(cb.state(), State::Closed);
}

#[test]
fn a_stale_permit_from_an_earlier_half_open_state_does_not_add_permits() {
    let clock = clock();
    let cb = CircuitBreaker::new("stale", small(&clock));
    open_then_half_open(&cb, &clock);
    let stale = cb.try_acquire_permission().unwrap();
    // A new HALF_OPEN state object with its own single permit.
    cb.transition_to_half_open_state().unwrap();
    drop(stale);
    let _held = cb
        .try_acquire_permission()
        .expect("the new state's own permit");
    assert!(
        cb.try_acquire_permission().is_err(),
        "dropping the stale permit must not have created a second one"
    );
}

#[test]
fn a_panic_inside_a_call_is_recorded_as_a_failure_and_resumed() {
    let clock = clock();
    let cb = CircuitBreaker::new("panic", small(&clock));
    open_then_half_open(&cb, &clock);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _: Result<(), CallError<()>> = cb.call_sync(|| panic!("boom"));
    }));
    assert!(result.is_err(), "the panic reaches the caller");
    // The single trial call failed: 1 of 1 = 100 % >= 50 %, so OPEN again (not stuck).
    assert_eq!(cb.state(), State::Open);
    assert_eq!(cb.metrics().number_of_failed_calls, 1);
}

/// A breaker that starts HALF_OPEN with a 500 ms `maxWaitDurationInHalfOpenState`.
fn half_open_with_max_wait(clock: &ManualClock) -> CircuitBreaker {
    let config = CircuitBreakerConfig::builder()
        .max_wait_duration_in_half_open_state(Duration::from_millis(500))
        .initial_state(State::HalfOpen)
        .clock(Arc::new(clock.clone()))
        .build()
        .unwrap();
    CircuitBreaker::new("half-open-timer", config)
}

#[test]
fn reset_cancels_the_half_open_timer() {
    let clock = clock();
    let cb = half_open_with_max_wait(&clock);
    assert_eq!(cb.state(), State::HalfOpen);
    cb.reset();
    clock.advance(Duration::from_millis(2_000));
    // Resilience4j would jump CLOSED -> OPEN here by itself.
    assert_eq!(cb.state(), State::Closed);
    assert!(cb.try_acquire_permission().is_ok());
}

#[test]
fn the_half_open_timer_fires_without_reset() {
    let clock = clock();
    let cb = half_open_with_max_wait(&clock);
    clock.advance(Duration::from_millis(499));
    assert_eq!(cb.state(), State::HalfOpen);
    clock.advance(Duration::from_millis(1));
    assert_eq!(cb.state(), State::Open);
}

#[test]
fn open_entered_from_forced_open_gets_a_fresh_window() {
    let clock = clock();
    let cb = CircuitBreaker::new("forced", small(&clock));
    let late = cb.try_acquire_permission().unwrap();
    cb.transition_to_forced_open_state().unwrap();
    assert!(cb.try_acquire_permission().is_err());
    cb.transition_to_open_state().unwrap();
    // Resilience4j throws ArithmeticException here; we record into a fresh window.
    late.record(Outcome::Success);
    let m = cb.metrics();
    assert_eq!(m.state, State::Open);
    assert_eq!(m.number_of_buffered_calls, 1);
    assert_eq!(m.number_of_successful_calls, 1);
    // The FORCED_OPEN rejection is still counted.
    assert_eq!(m.number_of_not_permitted_calls, 1);
}

#[test]
fn rejections_say_when_to_retry() {
    let clock = clock();
    let cb = CircuitBreaker::new("retry", small(&clock));
    cb.try_acquire_permission().unwrap().on_error();
    cb.try_acquire_permission().unwrap().on_error();
    clock.advance(Duration::from_millis(400));
    let rejection = cb.try_acquire_permission().unwrap_err();
    assert_eq!(rejection.state(), State::Open);
    assert_eq!(rejection.circuit_breaker_name(), "retry");
    // 600 ms of the 1 s wait remain; admission needs strictly after the deadline: 601 ms.
    assert_eq!(rejection.retry_after(), Some(Duration::from_millis(601)));
    assert_eq!(
        rejection.to_string(),
        "CircuitBreaker 'retry' is OPEN and does not permit further calls"
    );
    // The same answer through the locked path (a subscriber turns the lock-free one off),
    // rounded up to whole ms plus the strict deadline's 1 ms.
    cb.subscribe(|_| {});
    clock.advance(Duration::from_nanos(250_000_001));
    let locked = cb.try_acquire_permission().unwrap_err();
    assert_eq!(locked.retry_after(), Some(Duration::from_millis(351)));
    // HALF_OPEN without a max wait cannot say; FORCED_OPEN never can.
    clock.advance(Duration::from_millis(351));
    let _trial = cb.try_acquire_permission().unwrap();
    let full = cb.try_acquire_permission().unwrap_err();
    assert_eq!((full.state(), full.retry_after()), (State::HalfOpen, None));
    cb.transition_to_forced_open_state().unwrap();
    let forced = cb.try_acquire_permission().unwrap_err();
    assert_eq!(
        (forced.state(), forced.retry_after()),
        (State::ForcedOpen, None)
    );
}

#[test]
fn a_full_half_open_state_says_when_its_max_wait_ends() {
    let clock = clock();
    let cb = half_open_with_max_wait(&clock);
    let held: Vec<_> = (0..10)
        .map(|_| cb.try_acquire_permission().unwrap())
        .collect();
    clock.advance(Duration::from_millis(123));
    let full = cb.try_acquire_permission().unwrap_err();
    assert_eq!(full.state(), State::HalfOpen);
    assert_eq!(full.retry_after(), Some(Duration::from_millis(377)));
    drop(held);
}

#[test]
fn a_panicking_subscriber_does_not_hurt_the_call_or_other_subscribers() {
    let clock = clock();
    let cb = CircuitBreaker::new("subscribers", small(&clock));
    let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    cb.subscribe(|_| panic!("subscriber bug"));
    let s = seen.clone();
    cb.subscribe(move |_| {
        s.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    let r: Result<u8, CallError<()>> = cb.call_sync(|| Ok(1));
    assert_eq!(r, Ok(1));
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(cb.metrics().number_of_successful_calls, 1);
}

#[test]
fn an_exception_list_on_a_derived_builder_replaces_the_base_list() {
    #[derive(Debug)]
    enum E {
        Io,
        Timeout,
    }
    let catalog = breaker_core::ErrorCatalog::new()
        .register("java.io.IOException", |e: &E| matches!(e, E::Io))
        .register("java.util.concurrent.TimeoutException", |e: &E| {
            matches!(e, E::Timeout)
        });
    let base = CircuitBreakerConfig::builder()
        .error_catalog(catalog)
        .record_exceptions(["java.io.IOException"])
        .ignore_exceptions(["java.util.concurrent.TimeoutException"])
        .build()
        .unwrap();
    let derived = base
        .to_builder()
        .record_exceptions(["java.util.concurrent.TimeoutException"])
        .ignore_exceptions(Vec::<String>::new())
        .build()
        .unwrap();
    // Resilience4j's plain `from(base)` would OR the lists: IOException still a failure and
    // TimeoutException still ignored.
    assert_eq!(derived.classify_error(&E::Io), Outcome::Success);
    assert_eq!(derived.classify_error(&E::Timeout), Outcome::Failure);
    assert_eq!(base.classify_error(&E::Io), Outcome::Failure);
    assert_eq!(base.classify_error(&E::Timeout), Outcome::Ignored);
}
