//! Retry beyond the vectors: waits on the clock to the millisecond, a dropped call stops at
//! once, panics, result consumers and custom intervals, live config replacement, the
//! registry.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use breaker_core::retry::{
    AttemptOutcome, Retry, RetryConfig, RetryError, RetryEvent, RetryEventType, RetryRegistry,
};
use breaker_core::{ErrorCatalog, ManualClock, RegistryError};

use common::poll;

fn clock() -> ManualClock {
    ManualClock::at_epoch_millis(1_700_000_000_000)
}

fn events(retry: &Retry) -> Arc<Mutex<Vec<RetryEvent>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    retry.subscribe(move |e| s.lock().unwrap().push(e.clone()));
    seen
}

fn types(seen: &Mutex<Vec<RetryEvent>>) -> Vec<(RetryEventType, u32)> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|e| (e.event_type, e.number_of_retry_attempts))
        .collect()
}

#[test]
fn waits_run_on_the_clock_to_the_millisecond() {
    let clock = clock();
    let retry = Retry::new(
        "backendA",
        RetryConfig::builder()
            .max_attempts(4)
            .exponential_backoff(Duration::from_millis(100), 2.0, None)
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap(),
    );
    let attempts = AtomicU32::new(0);
    let mut call = Box::pin(retry.call(|| async {
        attempts.fetch_add(1, Ordering::SeqCst);
        Err::<(), _>("boom".to_string())
    }));
    assert!(poll(call.as_mut()).is_pending());
    // Waits of 100, 200 and 400 ms: nothing a millisecond early, the next attempt on time.
    for wait in [100, 200, 400] {
        let before = attempts.load(Ordering::SeqCst);
        assert_eq!(clock.pending_sleeps(), 1);
        clock.advance(Duration::from_millis(wait - 1));
        assert!(poll(call.as_mut()).is_pending());
        assert_eq!(attempts.load(Ordering::SeqCst), before);
        clock.advance(Duration::from_millis(1));
        let r = poll(call.as_mut());
        assert_eq!(attempts.load(Ordering::SeqCst), before + 1);
        if wait == 400 {
            assert_eq!(r, Poll::Ready(Err(RetryError::Inner("boom".to_string()))));
        }
    }
    let m = retry.metrics();
    assert_eq!(m.number_of_failed_calls_with_retry_attempt, 1);
    assert_eq!(m.number_of_total_calls, 4);
}

#[test]
fn a_dropped_call_stops_retrying_at_once() {
    let clock = clock();
    let retry = Retry::new(
        "backendA",
        RetryConfig::builder()
            .max_attempts(5)
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap(),
    );
    let attempts = Arc::new(AtomicU32::new(0));
    let a = Arc::clone(&attempts);
    let mut call = Box::pin(retry.call(move || {
        a.fetch_add(1, Ordering::SeqCst);
        async { Err::<(), _>("boom".to_string()) }
    }));
    assert!(poll(call.as_mut()).is_pending());
    assert_eq!(clock.pending_sleeps(), 1);
    drop(call);
    // The wait is cancelled with the call, and no attempt follows.
    assert_eq!(clock.pending_sleeps(), 0);
    clock.advance(Duration::from_secs(60));
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    // The dropped call counts as nothing but the attempt it made.
    let m = retry.metrics();
    assert_eq!(m.number_of_total_calls, 1);
    assert_eq!(m.number_of_failed_calls_with_retry_attempt, 0);
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn a_call_cancelled_by_the_runtime_makes_no_further_attempt() {
    // The default clock waits on a tokio timer inside a runtime.
    let retry = Retry::new(
        "backendA",
        RetryConfig::builder()
            .wait_duration(Duration::from_secs(1))
            .build()
            .unwrap(),
    );
    let attempts = Arc::new(AtomicU32::new(0));
    let a = Arc::clone(&attempts);
    let call = retry.call(move || {
        a.fetch_add(1, Ordering::SeqCst);
        async { Err::<(), _>("boom".to_string()) }
    });
    let r = tokio::time::timeout(Duration::from_millis(500), call).await;
    assert!(r.is_err(), "the timeout fires during the first wait");
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
}

#[test]
fn a_panicking_attempt_propagates_with_no_event_and_no_count() {
    let retry = Retry::of_defaults("backendA");
    let seen = events(&retry);
    let mut call = Box::pin(retry.call(|| async {
        if true {
            panic!("an Error, not an Exception");
        }
        Ok::<(), String>(())
    }));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| poll(call.as_mut())));
    assert!(r.is_err());
    assert!(seen.lock().unwrap().is_empty());
    assert_eq!(retry.metrics(), Default::default());
}

#[test]
fn the_result_consumer_sees_each_retried_result_but_the_last() {
    // Resilience4j: results x1, x2, x3 with max 3 -> the consumer sees 1:x1 and 2:x2.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let retry = Retry::new(
        "backendA",
        RetryConfig::builder()
            .wait_duration(Duration::ZERO)
            .retry_on_result(|_: &String| true)
            .consume_result_before_retry_attempt(move |n, r: &String| {
                s.lock().unwrap().push(format!("{n}:{r}"));
            })
            .build()
            .unwrap(),
    );
    let n = AtomicU32::new(0);
    let r = poll(std::pin::pin!(retry.call(|| async {
        Ok::<_, String>(format!("x{}", n.fetch_add(1, Ordering::SeqCst) + 1))
    })));
    assert_eq!(r, Poll::Ready(Ok("x3".to_string())));
    assert_eq!(*seen.lock().unwrap(), ["1:x1", "2:x2"]);
}

#[test]
fn a_custom_interval_sees_what_the_attempt_produced() {
    // Resilience4j's shouldUseBackoffBiFunctionWhenRetryWithResult: "Await 100",
    // "Await 200", then "Hello world" waits 100 + 200 ms; an error waits 7 ms.
    let clock = clock();
    let retry = Retry::new(
        "backendA",
        RetryConfig::builder()
            .retry_on_result(|r: &String| r.starts_with("Await"))
            .interval_bi_function(|_, outcome| match outcome {
                AttemptOutcome::Result(r) => r
                    .downcast_ref::<String>()
                    .and_then(|s| s.strip_prefix("Await "))
                    .and_then(|ms| ms.parse().ok())
                    .unwrap_or(-1),
                AttemptOutcome::Error(_) => 7,
            })
            .max_attempts(4)
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap(),
    );
    let script = Mutex::new(vec![
        Ok("Hello world".to_string()),
        Err("boom".to_string()),
        Ok("Await 200".to_string()),
        Ok("Await 100".to_string()),
    ]);
    let mut call = Box::pin(retry.call(|| {
        let next = script.lock().unwrap().pop().unwrap();
        async move { next }
    }));
    let mut waited = Vec::new();
    loop {
        let before = breaker_core::Clock::now_nanos(&clock);
        if let Poll::Ready(r) = poll(call.as_mut()) {
            assert_eq!(r, Ok("Hello world".to_string()));
            break;
        }
        let deadline = clock.next_sleep_deadline().unwrap();
        waited.push((deadline - before) / 1_000_000);
        clock.set_epoch_nanos(deadline);
    }
    assert_eq!(waited, [100, 200, 7]);
}

#[test]
fn a_replaced_config_applies_from_the_next_call() {
    let clock = clock();
    let config = |max: i64| {
        RetryConfig::builder()
            .max_attempts(max)
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap()
    };
    let retry = Retry::new("backendA", config(2));
    let attempts = AtomicU32::new(0);
    let failing = || async {
        attempts.fetch_add(1, Ordering::SeqCst);
        Err::<(), _>("boom".to_string())
    };
    let mut running = Box::pin(retry.call(failing));
    assert!(poll(running.as_mut()).is_pending());
    retry.replace_config(config(5));
    clock.advance(Duration::from_millis(500));
    // The running call keeps maxAttempts 2.
    assert!(poll(running.as_mut()).is_ready());
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    assert_eq!(retry.config().max_attempts(), 5);
    assert_eq!(retry.metrics().number_of_failed_calls_with_retry_attempt, 1);
}

#[test]
fn errors_are_classified_through_the_catalog() {
    #[derive(Debug, PartialEq)]
    enum ApiError {
        Io,
        BadRequest,
    }
    impl std::fmt::Display for ApiError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{self:?}")
        }
    }
    let catalog = ErrorCatalog::new()
        .register("java.io.IOException", |e: &ApiError| *e == ApiError::Io)
        .register(
            "org.springframework.web.client.HttpClientErrorException",
            |e: &ApiError| *e == ApiError::BadRequest,
        );
    let retry = Retry::new(
        "backendA",
        RetryConfig::builder()
            .wait_duration(Duration::ZERO)
            .error_catalog(catalog)
            .retry_exceptions(["java.io.IOException"])
            .build()
            .unwrap(),
    );
    let seen = events(&retry);
    let calls = AtomicU32::new(0);
    let r = poll(std::pin::pin!(retry.call(|| async {
        match calls.fetch_add(1, Ordering::SeqCst) {
            0 => Err(ApiError::Io),
            _ => Err::<(), _>(ApiError::BadRequest),
        }
    })));
    assert_eq!(r, Poll::Ready(Err(RetryError::Inner(ApiError::BadRequest))));
    assert_eq!(
        types(&seen),
        [
            (RetryEventType::Retry, 1),
            (RetryEventType::IgnoredError, 0)
        ]
    );
    let last = seen.lock().unwrap()[1].last_throwable.clone().unwrap();
    assert_eq!(last.message(), "BadRequest");
    assert!(last.class().ends_with("ApiError"));
    // Resilience4j's naming: an error that is not retried counts "without retry" even after
    // a retry.
    assert_eq!(
        retry.metrics().number_of_failed_calls_without_retry_attempt,
        1
    );
}

#[test]
fn the_registry_gets_creates_replaces_and_removes() {
    let registry =
        RetryRegistry::with_default_config(RetryConfig::builder().max_attempts(4).build().unwrap());
    registry
        .add_configuration(
            "shared",
            RetryConfig::builder().max_attempts(7).build().unwrap(),
        )
        .unwrap();
    assert_eq!(
        registry.add_configuration("default", RetryConfig::default()),
        Err(RegistryError::DefaultIsReserved)
    );
    let a = registry.retry("a");
    assert!(a.ptr_eq(&registry.retry("a")));
    assert_eq!(a.config().max_attempts(), 4);
    let b = registry.retry_with_config_name("b", "shared").unwrap();
    assert_eq!(b.config().max_attempts(), 7);
    // An existing retry wins over the config passed.
    assert!(registry
        .retry_with_config("b", RetryConfig::default())
        .ptr_eq(&b));
    assert_eq!(
        registry
            .retry_with_config_name("c", "unknownConfig")
            .unwrap_err()
            .to_string(),
        "Configuration with name 'unknownConfig' does not exist"
    );
    // A live instance's config is replaced in place; followers of the default follow it.
    assert!(registry.replace_config("b", RetryConfig::builder().max_attempts(2).build().unwrap()));
    assert_eq!(b.config().max_attempts(), 2);
    registry.set_default_config(RetryConfig::builder().max_attempts(6).build().unwrap());
    assert_eq!(a.config().max_attempts(), 6);
    assert_eq!(b.config().max_attempts(), 2);
    assert_eq!(
        registry
            .all()
            .iter()
            .map(|r| r.name().to_string())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert!(registry.remove("a").unwrap().ptr_eq(&a));
    assert!(registry.find("a").is_none());
    assert!(!registry.retry("a").ptr_eq(&a));
}

#[test]
fn the_registry_keeps_recent_events_per_instance() {
    let registry = RetryRegistry::with_default_config(
        RetryConfig::builder()
            .wait_duration(Duration::ZERO)
            .build()
            .unwrap(),
    );
    registry.set_event_consumer_buffer_size("a", 2);
    registry.enable_event_buffers();
    let a = registry.retry("a");
    let r = poll(std::pin::pin!(
        a.call(|| async { Err::<(), _>("boom".to_string()) })
    ));
    assert!(matches!(r, Poll::Ready(Err(RetryError::Inner(_)))));
    let kept: Vec<(RetryEventType, u32)> = registry
        .recent_events("a")
        .unwrap()
        .iter()
        .map(|e| (e.event_type, e.number_of_retry_attempts))
        .collect();
    // RETRY(1), RETRY(2), ERROR(3); the buffer keeps the last two.
    assert_eq!(
        kept,
        [(RetryEventType::Retry, 2), (RetryEventType::Error, 3)]
    );
}
