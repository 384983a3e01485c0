//! Shared setup for the criterion benches in `benches/`: the breakers under test (ours and
//! the peers) built with comparable settings, and a poll-once executor for ready futures.
//!
//! Nothing here is part of `breaker`'s API; the crate is not published.

pub mod alternate;
pub mod redis_server;
pub mod rows;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use failsafe::backoff;
use failsafe::failure_policy::SuccessRateOverTimeWindow;
use failsafe::failure_policy::{consecutive_failures, ConsecutiveFailures, OrElse};
use resilience4rs::{CircuitBreaker, CircuitBreakerConfig, SlidingWindowType};

/// Polls `fut` once with a no-op waker and returns its output.
///
/// # Panics
/// If the future is not ready on the first poll (every future benched here is).
#[inline]
pub fn poll_once<F: Future>(fut: F) -> F::Output {
    let fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    match fut.poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("the benched future was not ready on its first poll"),
    }
}

/// A breaker in HALF_OPEN whose `trials` trial calls all succeed: the last one closes it
/// (the caller opens it and moves it to HALF_OPEN again to go on).
pub fn half_open_breaker(trials: i64) -> CircuitBreaker {
    let config = CircuitBreakerConfig::builder()
        .permitted_number_of_calls_in_half_open_state(trials)
        .minimum_number_of_calls(trials)
        .wait_duration_in_open_state(Duration::from_secs(3600))
        .build()
        .expect("valid config");
    let cb = CircuitBreaker::new("bench-half-open", config);
    cb.transition_to_open_state().expect("CLOSED -> OPEN");
    cb.transition_to_half_open_state()
        .expect("OPEN -> HALF_OPEN");
    cb
}

/// A plain retry loop, as one writes it without a library: up to `max` attempts, no wait
/// (the success path never reaches one).
pub async fn plain_retry<T, E, F, Fut>(max: u32, mut attempt: F) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut n = 0;
    loop {
        n += 1;
        match attempt().await {
            Ok(v) => return Ok(v),
            Err(e) if n >= max => return Err(e),
            Err(_) => {}
        }
    }
}

/// Our breaker with Resilience4j's defaults (COUNT_BASED window of 100, slow-call timing on).
pub fn ours_default() -> CircuitBreaker {
    CircuitBreaker::new("bench", CircuitBreakerConfig::default())
}

/// Our breaker with a TIME_BASED window of 10 s (one bucket per second).
pub fn ours_time_based() -> CircuitBreaker {
    let config = CircuitBreakerConfig::builder()
        .sliding_window_type(SlidingWindowType::TimeBased)
        .sliding_window_size(10)
        .build()
        .expect("valid config");
    CircuitBreaker::new("bench-time", config)
}

/// Our breaker, OPEN for an hour.
pub fn ours_open() -> CircuitBreaker {
    let cb = ours_default();
    cb.transition_to_open_state_for(Duration::from_secs(3600))
        .expect("CLOSED -> OPEN is legal");
    cb
}

/// failsafe with the consecutive-failures policy (3 in a row trip it).
pub type FailsafeConsecutive = failsafe::StateMachine<ConsecutiveFailures<backoff::Constant>, ()>;

/// failsafe with its default policy (success rate over a time window, or else consecutive
/// failures).
pub type FailsafeDefault = failsafe::StateMachine<
    OrElse<
        SuccessRateOverTimeWindow<backoff::EqualJittered>,
        ConsecutiveFailures<backoff::EqualJittered>,
    >,
    (),
>;

/// failsafe, consecutive-failures policy: trips after 3 failures in a row, open for an hour.
pub fn failsafe_consecutive() -> FailsafeConsecutive {
    failsafe::Config::new()
        .failure_policy(consecutive_failures(
            3,
            backoff::constant(Duration::from_secs(3600)),
        ))
        .build()
}

/// failsafe with `Config::new()` defaults.
pub fn failsafe_default() -> FailsafeDefault {
    failsafe::Config::new().build()
}

/// recloser with a closed ring of 100 calls (its default) and a 1 h open wait.
pub fn recloser() -> recloser::Recloser {
    recloser::Recloser::custom()
        .closed_len(100)
        .open_wait(Duration::from_secs(3600))
        .build()
}

/// recloser's async wrapper around [`recloser()`].
pub fn recloser_async() -> recloser::AsyncRecloser {
    recloser::AsyncRecloser::from(recloser())
}

/// The inner service under tower-resilience's layer: answers at once.
pub type TowerInner =
    tower::util::ServiceFn<fn(u32) -> std::future::Ready<Result<u32, std::io::Error>>>;

/// tower-resilience's breaker service, built through its `Layer`.
pub type TowerBreaker = tower_resilience_circuitbreaker::CircuitBreaker<
    TowerInner,
    tower_resilience_circuitbreaker::DefaultClassifier,
>;

fn tower_inner(req: u32) -> std::future::Ready<Result<u32, std::io::Error>> {
    if req % 5 == 4 {
        std::future::ready(Err(std::io::Error::other("every fifth call fails")))
    } else {
        std::future::ready(Ok(req))
    }
}

/// tower-resilience's breaker through `CircuitBreakerLayer` over a service that is always
/// ready: a COUNT window of 100, 50 % failure threshold, slow-call detection at 60 s (as
/// Resilience4j's defaults), a 1 h open wait. Requests `n` with `n % 5 == 4` fail.
pub fn tower_breaker() -> TowerBreaker {
    use tower::Layer;
    let layer = tower_resilience_circuitbreaker::CircuitBreakerLayer::builder()
        .failure_rate_threshold(0.5)
        .sliding_window_size(100)
        .minimum_number_of_calls(100)
        .slow_call_duration_threshold(Duration::from_secs(60))
        .slow_call_rate_threshold(1.0)
        .wait_duration_in_open(Duration::from_secs(3600))
        .build()
        .expect("valid tower-resilience config");
    layer.layer(tower::service_fn(tower_inner as fn(u32) -> _))
}

/// One request through tower's `Service` contract: `poll_ready`, then `call`, both polled
/// once.
#[inline]
pub fn tower_call(svc: &mut TowerBreaker, req: u32) -> bool {
    use tower::Service;
    let mut cx = Context::from_waker(Waker::noop());
    match svc.poll_ready(&mut cx) {
        Poll::Ready(Ok(())) => {}
        other => panic!("tower-resilience breaker not ready: {:?}", other.is_ready()),
    }
    poll_once(svc.call(req)).is_ok()
}

/// Drives a breaker to OPEN by failing calls until it rejects one.
pub fn open_by_failures(mut fail_once: impl FnMut() -> bool) {
    for _ in 0..10_000 {
        if fail_once() {
            return;
        }
    }
    panic!("the breaker did not open after 10 000 failures");
}

/// An `Arc`'d registry-free handle, for benches that need `'static` threads.
pub fn shared(cb: CircuitBreaker) -> Arc<CircuitBreaker> {
    Arc::new(cb)
}
