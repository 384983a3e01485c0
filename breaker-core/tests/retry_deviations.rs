//! Each Resilience4j Retry defect this library fixes, pinned in both modes: the default mode
//! (the fix) and exact-Resilience4j mode (the defect as recorded from Resilience4j 2.4: the
//! vectors named in each test, and spec §2.3 / §2.10).

mod common;

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use breaker_core::retry::{
    Retry, RetryConfig, RetryConfigBuilder, RetryError, RetryEvent, RetryEventType, RetryMetrics,
};
use breaker_core::SignedDuration;

/// Runs a call whose waits are all 0 ms: it finishes within one poll.
fn run<T, E>(f: impl Future<Output = Result<T, RetryError<E>>>) -> Result<T, RetryError<E>> {
    let waker = common::noop_waker();
    match std::pin::pin!(f).poll(&mut Context::from_waker(&waker)) {
        Poll::Ready(r) => r,
        Poll::Pending => panic!("the call waited"),
    }
}

type Seen = Arc<Mutex<Vec<RetryEvent>>>;

fn retry(b: RetryConfigBuilder, exact: bool) -> (Retry, Seen) {
    let retry = Retry::new(
        "backendA",
        b.exact_resilience4j(exact).build().expect("valid config"),
    );
    let seen: Seen = Arc::default();
    let s = Arc::clone(&seen);
    retry.subscribe(move |e| s.lock().unwrap().push(e.clone()));
    (retry, seen)
}

/// `(type, attempts, last throwable's class)` of each event.
fn events(seen: &Seen) -> Vec<(RetryEventType, u32, Option<String>)> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e.event_type,
                e.number_of_retry_attempts,
                e.last_throwable.as_ref().map(|t| t.class().to_string()),
            )
        })
        .collect()
}

/// `(fNR, fR, sNR, sR, total)`.
fn counts(m: RetryMetrics) -> (u64, u64, u64, u64, u64) {
    (
        m.number_of_failed_calls_without_retry_attempt,
        m.number_of_failed_calls_with_retry_attempt,
        m.number_of_successful_calls_without_retry_attempt,
        m.number_of_successful_calls_with_retry_attempt,
        m.number_of_total_calls,
    )
}

fn always_busy() -> RetryConfigBuilder {
    RetryConfig::builder()
        .wait_duration(Duration::ZERO)
        .retry_on_result(|r: &&str| *r == "BUSY")
}

use RetryEventType::{Error, IgnoredError, Retry as RetryEv};

fn marker() -> Option<String> {
    Some("MaxRetriesExceeded".into())
}
fn mre() -> Option<String> {
    Some("MaxRetriesExceededException".into())
}

/// Q1 (hand_033): `failAfterMaxAttempts` with results exhausted.
#[test]
fn fail_after_max_attempts_counts_the_call_once() {
    for exact in [false, true] {
        let (r, seen) = retry(always_busy().fail_after_max_attempts(true), exact);
        let out = run(r.call(|| async { Ok::<_, String>("BUSY") }));
        let Err(RetryError::MaxRetriesExceeded(e)) = out else {
            panic!("{out:?}")
        };
        assert_eq!(
            e.to_string(),
            "Retry 'backendA' has exhausted all attempts (3)"
        );
        let mut expected = vec![(RetryEv, 1, None), (RetryEv, 2, None), (Error, 3, marker())];
        if exact {
            // The exception is caught by Resilience4j's own loop: a 4th "attempt" fails.
            expected.push((Error, 4, mre()));
            assert_eq!(counts(r.metrics()), (0, 2, 0, 0, 5));
        } else {
            assert_eq!(counts(r.metrics()), (0, 1, 0, 0, 3));
        }
        assert_eq!(events(&seen), expected);
    }
}

/// Q1 where the exception is not retryable (hand_045): IGNORED_ERROR and a
/// "failed without retry" in exact mode only.
#[test]
fn fail_after_max_attempts_with_a_retry_list_adds_no_ignored_error() {
    for exact in [false, true] {
        let (r, seen) = retry(
            always_busy()
                .fail_after_max_attempts(true)
                .retry_exceptions(["java.io.IOException"]),
            exact,
        );
        assert!(run(r.call(|| async { Ok::<_, String>("BUSY") })).is_err());
        let mut expected = vec![(RetryEv, 1, None), (RetryEv, 2, None), (Error, 3, marker())];
        if exact {
            expected.push((IgnoredError, 0, mre()));
            assert_eq!(counts(r.metrics()), (1, 1, 0, 0, 5));
        } else {
            assert_eq!(counts(r.metrics()), (0, 1, 0, 0, 3));
        }
        assert_eq!(events(&seen), expected);
    }
}

/// Q2 (hand_032): results exhausted count the last attempt once in numberOfTotalCalls.
#[test]
fn total_calls_count_each_attempt_once() {
    for exact in [false, true] {
        let (r, _) = retry(always_busy(), exact);
        assert_eq!(
            run(r.call(|| async { Ok::<_, String>("BUSY") })).unwrap(),
            "BUSY"
        );
        let total = if exact { 4 } else { 3 };
        assert_eq!(counts(r.metrics()), (0, 1, 0, 0, total));
    }
}

fn negative_multiplier() -> RetryConfigBuilder {
    // Builder only (Spring rejects multipliers <= 0): waits 100, -200, ...
    RetryConfig::builder().max_attempts(4).exponential_backoff(
        Duration::from_millis(100),
        -2.0,
        None,
    )
}

/// Q4 on the error path (hand_013): a negative interval ends the call, counted as failed.
#[test]
fn a_negative_interval_after_an_error_counts_the_call_as_failed() {
    for exact in [false, true] {
        let clock = breaker_core::ManualClock::at_epoch_millis(0);
        let (r, seen) = retry(negative_multiplier().clock(Arc::new(clock.clone())), exact);
        let n = AtomicU32::new(0);
        let waker = common::noop_waker();
        let mut call = Box::pin(r.call(|| async {
            Err::<(), _>(format!("attempt {}", n.fetch_add(1, Ordering::SeqCst) + 1))
        }));
        assert!(call
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        clock.advance(Duration::from_millis(100));
        let out = call.as_mut().poll(&mut Context::from_waker(&waker));
        assert_eq!(
            out,
            Poll::Ready(Err(RetryError::Inner("attempt 2".to_string())))
        );
        let string = Some(std::any::type_name::<String>().to_string());
        assert_eq!(
            events(&seen),
            [(RetryEv, 1, string.clone()), (Error, 2, string)]
        );
        let failed_with_retry = if exact { 0 } else { 1 };
        assert_eq!(counts(r.metrics()), (0, failed_with_retry, 0, 0, 2));
    }
}

/// Q4 / Q8 on the result path (hand_047): Resilience4j's failed sleep becomes an
/// IllegalStateException retried by its own loop; here the results simply count as
/// exhausted.
#[test]
fn a_negative_interval_after_a_result_ends_the_call_with_that_result() {
    let clock = breaker_core::ManualClock::at_epoch_millis(0);
    let b = || {
        negative_multiplier()
            .max_attempts(5)
            .retry_on_result(|r: &&str| *r == "BUSY")
            .clock(Arc::new(clock.clone()))
    };
    let waker = common::noop_waker();
    let mut cx = Context::from_waker(&waker);

    let (r, seen) = retry(b(), false);
    let mut call = Box::pin(r.call(|| async { Ok::<_, String>("BUSY") }));
    assert!(call.as_mut().poll(&mut cx).is_pending());
    clock.advance(Duration::from_millis(100));
    assert_eq!(call.as_mut().poll(&mut cx), Poll::Ready(Ok("BUSY")));
    assert_eq!(events(&seen), [(RetryEv, 1, None), (Error, 2, marker())]);
    assert_eq!(counts(r.metrics()), (0, 1, 0, 0, 2));

    let (r, seen) = retry(b(), true);
    let mut call = Box::pin(r.call(|| async { Ok::<_, String>("BUSY") }));
    let ise = Some("IllegalStateException".to_string());
    assert!(call.as_mut().poll(&mut cx).is_pending());
    clock.advance(Duration::from_millis(100));
    assert!(call.as_mut().poll(&mut cx).is_pending());
    assert_eq!(
        events(&seen),
        [
            (RetryEv, 1, None),
            (Error, 2, None),
            (RetryEv, 3, ise.clone())
        ]
    );
    // The counter runs ahead of the real attempts: the third one waits interval(3) = 400.
    clock.advance(Duration::from_millis(400));
    let Poll::Ready(Err(RetryError::WaitInterval(e))) = call.as_mut().poll(&mut cx) else {
        panic!("expected Resilience4j's IllegalStateException")
    };
    assert_eq!(e.exception(), "IllegalStateException");
    assert_eq!(
        e.to_string(),
        "Unexpected exception during retry wait interval"
    );
    assert_eq!(events(&seen)[3..], [(Error, 4, None), (Error, 5, ise)]);
    assert_eq!(counts(r.metrics()), (0, 1, 0, 0, 5));
}

/// Q10 (hand_015): the initial interval of a capped exponential backoff.
#[test]
fn a_capped_backoff_from_zero_is_rejected_when_built() {
    let b = || {
        RetryConfig::builder().exponential_backoff(
            SignedDuration::from_millis(0),
            2.0,
            Some(SignedDuration::from_millis(1000)),
        )
    };
    let e = b().build().unwrap_err();
    assert_eq!(e.setting(), "waitDuration");
    assert_eq!(
        e.to_string(),
        "Illegal argument interval: 0 millis is less than 1"
    );
    // Resilience4j builds it and fails the first retried call instead of returning its
    // error, with no event.
    let (r, seen) = retry(b(), true);
    let out = run(r.call(|| async { Err::<(), _>("boom".to_string()) }));
    let Err(RetryError::WaitInterval(e)) = out else {
        panic!("{out:?}")
    };
    assert_eq!(e.exception(), "IllegalArgumentException");
    assert_eq!(
        e.to_string(),
        "Illegal argument interval: 0 millis is less than 1"
    );
    assert!(events(&seen).is_empty());
    assert_eq!(counts(r.metrics()), (0, 0, 0, 0, 1));
}

/// Q6: a subscriber's panic.
#[test]
fn a_panicking_subscriber_does_not_change_the_call() {
    for exact in [false, true] {
        let r = Retry::new(
            "backendA",
            RetryConfig::builder()
                .wait_duration(Duration::ZERO)
                .exact_resilience4j(exact)
                .build()
                .unwrap(),
        );
        r.subscribe(|e| {
            if e.event_type == RetryEventType::Retry {
                panic!("subscriber bug");
            }
        });
        let n = AtomicU32::new(0);
        let call = || {
            run(r.call(|| async {
                match n.fetch_add(1, Ordering::SeqCst) {
                    0 => Err("boom".to_string()),
                    _ => Ok(1),
                }
            }))
        };
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call));
        if exact {
            // Resilience4j lets the consumer's exception replace the call's outcome.
            assert!(out.is_err());
            assert_eq!(n.load(Ordering::SeqCst), 1);
        } else {
            assert_eq!(out.unwrap(), Ok(1));
            assert_eq!(r.metrics().number_of_successful_calls_with_retry_attempt, 1);
        }
    }
}

/// Kept as Resilience4j does: `maxAttempts: 1` counts a failure as "failed with retry"
/// (hand_004), in both modes.
#[test]
fn max_attempts_one_still_counts_failed_with_retry() {
    for exact in [false, true] {
        let (r, seen) = retry(RetryConfig::builder().max_attempts(1), exact);
        assert!(run(r.call(|| async { Err::<(), _>("boom".to_string()) })).is_err());
        assert_eq!(events(&seen).len(), 1);
        assert_eq!(counts(r.metrics()), (0, 1, 0, 0, 1));
    }
}
