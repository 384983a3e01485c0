//! Deadlines (issue 27), on virtual time: a retry stops before an attempt that cannot fit,
//! layers below cut their waits to the time left, a call past its deadline does not reach
//! the dependency. Expected values are worked out from the settings in each test.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breaker_core::bulkhead::{Bulkhead, BulkheadConfig};
use breaker_core::deadline::{self, Deadline};
use breaker_core::ratelimiter::{RateLimiter, RateLimiterConfig};
use breaker_core::retry::{Retry, RetryBudgets, RetryConfig, RetryEventType};
use breaker_core::timelimiter::{TimeLimiter, TimeLimiterConfig, TimeLimiterError};
use breaker_core::{CallError, CircuitBreaker, CircuitBreakerConfig, Clock, ManualClock};

const MS: u64 = 1_000_000;

/// Polls `fut` to the end on `clock`, advancing it to the next registered sleep whenever
/// the future is parked. Returns the output and the virtual time (ms) it ended at.
fn drive<F: Future>(clock: &ManualClock, fut: F) -> (F::Output, u64) {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return (out, clock.now_nanos() / MS);
        }
        let next = clock
            .next_sleep_deadline()
            .expect("parked on something other than the clock");
        clock.set_epoch_nanos(next.max(clock.now_nanos()));
    }
}

fn shared(clock: &ManualClock) -> Arc<dyn Clock> {
    Arc::new(clock.clone())
}

/// Retry with 0.2 s x 2^n waits capped at 2 s, jitter factor 0.5 drawn as 0.75 (fixed seed),
/// attempts judged by a 1 s attempt timeout.
fn jittered_retry(clock: &ManualClock, max_attempts: i64) -> Retry {
    Retry::new(
        "hanging",
        RetryConfig::builder()
            .max_attempts(max_attempts)
            .exponential_random_backoff(
                Duration::from_millis(200),
                2.0,
                0.5,
                Some(Duration::from_secs(2).into()),
            )
            .random_source(Arc::new(|| 0.75))
            .clock(shared(clock))
            .budgets(RetryBudgets {
                attempt_timeout: Some(Duration::from_secs(1)),
                ..RetryBudgets::default()
            })
            .build()
            .unwrap(),
    )
}

fn attempt_timeout(clock: &ManualClock) -> TimeLimiter {
    TimeLimiter::new(
        "hanging",
        TimeLimiterConfig::builder()
            .timeout_duration(Duration::from_secs(1))
            .clock(shared(clock))
            .build()
            .unwrap(),
    )
}

/// Runs the hanging call; returns (attempt start times in ms, end time in ms, events).
fn hanging_call(max_attempts: i64, budget: Option<Duration>) -> (Vec<u64>, u64, Vec<String>) {
    let clock = ManualClock::at_epoch_millis(0);
    let retry = jittered_retry(&clock, max_attempts);
    let limiter = attempt_timeout(&clock);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    retry.subscribe(move |e| {
        seen.lock()
            .unwrap()
            .push(format!("{}({})", e.event_type, e.number_of_retry_attempts))
    });
    let starts = Arc::new(Mutex::new(Vec::new()));
    let call = retry.call(|| {
        starts.lock().unwrap().push(clock.now_nanos() / MS);
        limiter.call(std::future::pending::<Result<(), String>>())
    });
    let (result, end) = match budget {
        Some(b) => drive(
            &clock,
            deadline::with_deadline_at(Deadline::after(b, shared(&clock)), call),
        ),
        None => drive(&clock, call),
    };
    assert!(result.unwrap_err().inner().unwrap().is_timeout());
    let starts = starts.lock().unwrap().clone();
    let events = events.lock().unwrap().clone();
    (starts, end, events)
}

#[test]
fn three_attempts_fit_in_five_seconds() {
    // Waits: 200 ms randomized by 0.5 with r = 0.75 is (long)(100 + 0.75 * 201) = 250,
    // then 400 -> (long)(200 + 0.75 * 401) = 500. Attempts start at 0, 1000 + 250,
    // 2250 + 500; the last times out at 3750.
    let (starts, end, events) = hanging_call(3, Some(Duration::from_secs(5)));
    assert_eq!(starts, [0, 1250, 2750]);
    assert_eq!(end, 3750);
    assert_eq!(events, ["RETRY(1)", "RETRY(2)", "ERROR(3)"]);
}

#[test]
fn the_retry_stops_before_an_attempt_that_cannot_fit() {
    // Five attempts: after the third (ends 3750) the next wait is 800 randomized:
    // (long)(400 + 0.75 * 801) = 1000; 1000 + a 1 s attempt > the 1250 ms left: stop.
    let (starts, end, events) = hanging_call(5, Some(Duration::from_secs(5)));
    assert_eq!(starts, [0, 1250, 2750]);
    assert_eq!(end, 3750);
    assert!(end <= 5000);
    assert_eq!(events, ["RETRY(1)", "RETRY(2)", "DEADLINE_EXCEEDED(3)"]);
    // Without the deadline, as Resilience4j: a fourth attempt at 4750 and a fifth after
    // min(2000, (long)(800 + 0.75 * 1601)) = 2000 ms, at 7750; the call ends at 8750.
    let (starts, end, events) = hanging_call(5, None);
    assert_eq!(starts, [0, 1250, 2750, 4750, 7750]);
    assert_eq!(end, 8750);
    assert_eq!(events.last().unwrap(), "ERROR(5)");
}

#[test]
fn a_deadline_stop_is_counted_and_the_call_counts_as_failed_with_retry() {
    let clock = ManualClock::at_epoch_millis(0);
    let retry = jittered_retry(&clock, 5);
    let limiter = attempt_timeout(&clock);
    let call = retry.call(|| limiter.call(std::future::pending::<Result<(), String>>()));
    drive(
        &clock,
        deadline::with_deadline_at(
            Deadline::after(Duration::from_secs(5), shared(&clock)),
            call,
        ),
    )
    .0
    .unwrap_err();
    assert_eq!(retry.budget_metrics().number_of_deadline_exceeded_calls, 1);
    assert_eq!(retry.metrics().number_of_failed_calls_with_retry_attempt, 1);
    assert_eq!(retry.metrics().number_of_total_calls, 3);
}

/// deadline > retry > breaker > attempt timeout, 20 sequential requests against a dependency
/// that never answers. Returns (calls that reached the dependency, total waiting ms).
fn dead_dependency(budget: Option<Duration>) -> (u32, u64) {
    let clock = ManualClock::at_epoch_millis(0);
    let retry = Retry::new(
        "dead",
        RetryConfig::builder()
            .max_attempts(3)
            .wait_duration(Duration::from_millis(500))
            .clock(shared(&clock))
            .budgets(RetryBudgets {
                attempt_timeout: Some(Duration::from_secs(1)),
                ..RetryBudgets::default()
            })
            .build()
            .unwrap(),
    );
    let breaker = CircuitBreaker::new(
        "dead",
        CircuitBreakerConfig::builder()
            .sliding_window_size(10)
            .minimum_number_of_calls(5)
            .wait_duration_in_open_state(Duration::from_secs(600))
            .clock(shared(&clock))
            .build()
            .unwrap(),
    );
    let limiter = attempt_timeout(&clock);
    let reached = AtomicU32::new(0);
    let mut waited = 0;
    for _ in 0..20 {
        let start = clock.now_nanos() / MS;
        let call = retry.call(|| {
            breaker.call(limiter.call(async {
                reached.fetch_add(1, Ordering::SeqCst);
                std::future::pending::<Result<(), String>>().await
            }))
        });
        let (r, end): (Result<(), _>, u64) = match budget {
            Some(b) => drive(
                &clock,
                deadline::with_deadline_at(Deadline::after(b, shared(&clock)), call),
            ),
            None => drive(&clock, call),
        };
        assert!(r.is_err());
        waited += end - start;
    }
    (reached.load(Ordering::SeqCst), waited)
}

#[test]
fn twenty_requests_against_a_dead_dependency() {
    // Without a deadline: request 1 makes 3 attempts (1 s each, 0.5 s waits: 4 s), request
    // 2 two more (the 5th failure opens the breaker: 1 + 0.5 + 1 + 0.5 + 0 = 3 s), the 18
    // others are rejected at once three times with two 0.5 s waits (1 s each): 25 s.
    assert_eq!(dead_dependency(None), (5, 4_000 + 3_000 + 18 * 1_000));
    // With a 2 s deadline: every request stops after its first 1 s attempt (0.5 s + 1 s do
    // not fit in the 1 s left) until the breaker opens after 5 (requests 1 to 5, 1 s
    // each); the 15 others are rejected at once, and 0.5 s + 1 s still fit in the 2 s and
    // then the 1.5 s left, so they wait twice (1 s each), as without a deadline. No request
    // waits longer than its 2 s, against 4 s for the first one without.
    assert_eq!(
        dead_dependency(Some(Duration::from_secs(2))),
        (5, 5 * 1_000 + 15 * 1_000)
    );
}

#[test]
fn a_time_limit_never_outlasts_the_deadline() {
    let clock = ManualClock::at_epoch_millis(0);
    let limiter = TimeLimiter::new(
        "inner",
        TimeLimiterConfig::builder()
            .timeout_duration(Duration::from_secs(5))
            .clock(shared(&clock))
            .build()
            .unwrap(),
    );
    let call = limiter.call(std::future::pending::<Result<(), String>>());
    let (r, end) = drive(
        &clock,
        deadline::with_deadline_at(
            Deadline::after(Duration::from_secs(3), shared(&clock)),
            call,
        ),
    );
    assert!(r.unwrap_err().is_timeout());
    assert_eq!(end, 3_000, "outer 3 s, inner 5 s: cut at 3 s");
}

#[test]
fn a_call_past_its_deadline_does_not_reach_the_dependency() {
    let clock = ManualClock::at_epoch_millis(0);
    let reached = AtomicU32::new(0);
    let dependency = || async {
        reached.fetch_add(1, Ordering::SeqCst);
        Ok::<(), String>(())
    };
    let limiter = TimeLimiter::new(
        "t",
        TimeLimiterConfig::builder()
            .clock(shared(&clock))
            .build()
            .unwrap(),
    );
    let bulkhead = Bulkhead::new(
        "b",
        BulkheadConfig::builder()
            .clock(shared(&clock))
            .build()
            .unwrap(),
    );
    let rate = RateLimiter::new(
        "r",
        RateLimiterConfig::builder()
            .clock(shared(&clock))
            .build()
            .unwrap(),
    );
    let passed = Deadline::at(0, shared(&clock));
    let (r, _) = drive(
        &clock,
        deadline::with_deadline_at(passed.clone(), limiter.call(dependency())),
    );
    assert!(matches!(r, Err(TimeLimiterError::Timeout(_))));
    let (r, _) = drive(
        &clock,
        deadline::with_deadline_at(passed.clone(), bulkhead.call(dependency())),
    );
    assert!(r.unwrap_err().is_full());
    let (r, _) = drive(
        &clock,
        deadline::with_deadline_at(passed, rate.call(dependency())),
    );
    assert!(r.unwrap_err().is_not_permitted());
    assert_eq!(reached.load(Ordering::SeqCst), 0);
    // Outside a deadline the same layers call it (Resilience4j's behaviour).
    let (r, _) = drive(&clock, limiter.call(dependency()));
    r.unwrap();
    assert_eq!(reached.load(Ordering::SeqCst), 1);
}

#[test]
fn bulkhead_and_rate_limiter_waits_are_cut_to_the_time_left() {
    let clock = ManualClock::at_epoch_millis(0);
    let bulkhead = Bulkhead::new(
        "b",
        BulkheadConfig::builder()
            .max_concurrent_calls(1)
            .max_wait_duration(Duration::from_secs(10))
            .clock(shared(&clock))
            .build()
            .unwrap(),
    );
    let held = bulkhead.try_acquire_permission().unwrap();
    let (r, end) = drive(
        &clock,
        deadline::with_deadline_at(
            Deadline::after(Duration::from_millis(300), shared(&clock)),
            bulkhead.call(async { Ok::<(), String>(()) }),
        ),
    );
    assert!(r.unwrap_err().is_full());
    assert_eq!(end, 300, "maxWaitDuration 10 s cut to the 300 ms left");
    drop(held);

    let clock = ManualClock::at_epoch_millis(0);
    let rate = RateLimiter::new(
        "r",
        RateLimiterConfig::builder()
            .limit_for_period(1)
            .limit_refresh_period(Duration::from_secs(1))
            .timeout_duration(Duration::from_secs(5))
            .clock(shared(&clock))
            .build()
            .unwrap(),
    );
    rate.try_acquire_permission(1).unwrap();
    // The next permit comes in the next cycle, 1 s away: more than the 300 ms left.
    let (r, end) = drive(
        &clock,
        deadline::with_deadline_at(
            Deadline::after(Duration::from_millis(300), shared(&clock)),
            rate.call(async { Ok::<(), String>(()) }),
        ),
    );
    assert!(r.unwrap_err().is_not_permitted());
    assert_eq!(
        end, 0,
        "refused at once, as a wait beyond timeoutDuration is"
    );
    // With 5 s left it waits for the next cycle, as Resilience4j does.
    let (r, end) = drive(
        &clock,
        deadline::with_deadline_at(
            Deadline::after(Duration::from_secs(5), shared(&clock)),
            rate.call(async { Ok::<(), String>(()) }),
        ),
    );
    r.unwrap();
    assert_eq!(end, 1_000);
}

#[test]
fn deadline_event_kind_is_breakers_own() {
    assert_eq!(RetryEventType::DeadlineExceeded.name(), "DEADLINE_EXCEEDED");
    assert_eq!(RetryEventType::BudgetExhausted.name(), "BUDGET_EXHAUSTED");
}

#[allow(dead_code)]
fn _types(_: CallError<()>) {}
