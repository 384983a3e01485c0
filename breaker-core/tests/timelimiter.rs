//! TimeLimiter on a `ManualClock`: timeouts to the millisecond, Resilience4j's message,
//! events and counters, what `cancelRunningFuture` means for a Rust future, the registry,
//! and the time-limiter config Resilience4j rejects (`resilience4j-invalid-modules/`).

mod common;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use breaker_core::timelimiter::{
    TimeLimiter, TimeLimiterConfig, TimeLimiterError, TimeLimiterEventType, TimeLimiterMetrics,
    TimeLimiterRegistry, Timeout,
};
use breaker_core::{ManualClock, SignedDuration};

use common::poll;

fn limiter(clock: &ManualClock, timeout_ms: i64) -> (TimeLimiter, Arc<Mutex<Vec<String>>>) {
    let l = TimeLimiter::new(
        "backendA",
        TimeLimiterConfig::builder()
            .timeout_duration(SignedDuration::from_millis(timeout_ms))
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap(),
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    l.subscribe(move |e| s.lock().unwrap().push(e.to_string()));
    (l, seen)
}

fn counts(m: TimeLimiterMetrics) -> (u64, u64, u64) {
    (
        m.number_of_successful_calls,
        m.number_of_failed_calls,
        m.number_of_timeout_calls,
    )
}

/// Sets its flag when dropped: shows whether the limited future was cancelled.
struct DropFlag(Arc<AtomicBool>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Pending until the clock reaches `at_ms` (epoch ms), then `result`.
fn ready_at(
    clock: &ManualClock,
    at_ms: u64,
    result: Result<u32, String>,
    dropped: Arc<AtomicBool>,
) -> impl Future<Output = Result<u32, String>> {
    let clock = clock.clone();
    async move {
        let _guard = DropFlag(dropped);
        breaker_core::Clock::sleep_until(&clock, at_ms * 1_000_000).await;
        result
    }
}

#[test]
fn a_ready_future_succeeds_without_a_timer() {
    let clock = ManualClock::at_epoch_millis(0);
    let (l, seen) = limiter(&clock, 1000);
    let r = poll(std::pin::pin!(l.call(async { Ok::<_, String>(7) })));
    assert_eq!(r, Poll::Ready(Ok(7)));
    assert_eq!(clock.pending_sleeps(), 0);
    assert_eq!(
        *seen.lock().unwrap(),
        ["TimeLimiter 'backendA' recorded a successful call."]
    );
    assert_eq!(counts(l.metrics()), (1, 0, 0));
}

#[test]
fn a_slow_call_times_out_to_the_millisecond_and_is_dropped() {
    let clock = ManualClock::at_epoch_millis(0);
    let (l, seen) = limiter(&clock, 1000);
    let dropped = Arc::new(AtomicBool::new(false));
    let mut call = Box::pin(l.call(ready_at(&clock, 5000, Ok(1), Arc::clone(&dropped))));
    assert!(poll(call.as_mut()).is_pending());
    clock.advance(Duration::from_millis(999));
    assert!(poll(call.as_mut()).is_pending());
    assert!(!dropped.load(Ordering::SeqCst));
    clock.advance(Duration::from_millis(1));
    let Poll::Ready(Err(TimeLimiterError::Timeout(t))) = poll(call.as_mut()) else {
        panic!("expected a timeout")
    };
    // cancelRunningFuture: the timed-out future is dropped at once, its work cancelled.
    assert!(dropped.load(Ordering::SeqCst));
    assert_eq!(
        t.to_string(),
        "TimeLimiter 'backendA' recorded a timeout exception."
    );
    assert_eq!(t.time_limiter_name(), "backendA");
    assert_eq!(t.timeout_duration(), Duration::from_secs(1));
    assert_eq!(
        *seen.lock().unwrap(),
        ["TimeLimiter 'backendA' recorded a timeout exception."]
    );
    assert_eq!(counts(l.metrics()), (0, 0, 1));
    drop(call);
    assert_eq!(clock.pending_sleeps(), 0);
}

#[test]
fn a_call_that_finishes_in_time_disarms_its_timer() {
    let clock = ManualClock::at_epoch_millis(0);
    let (l, _) = limiter(&clock, 1000);
    let dropped = Arc::new(AtomicBool::new(false));
    let mut call = Box::pin(l.call(ready_at(&clock, 1000, Ok(3), Arc::clone(&dropped))));
    assert!(poll(call.as_mut()).is_pending());
    // The call's own wait and the time limiter's timer.
    assert_eq!(clock.pending_sleeps(), 2);
    // At exactly the deadline, the call's result wins (it is polled first).
    clock.advance(Duration::from_millis(1000));
    assert_eq!(poll(call.as_mut()), Poll::Ready(Ok(3)));
    assert_eq!(clock.pending_sleeps(), 0);
    assert_eq!(counts(l.metrics()), (1, 0, 0));
}

#[test]
fn an_error_in_time_is_returned_with_an_error_event() {
    let clock = ManualClock::at_epoch_millis(0);
    let (l, seen) = limiter(&clock, 1000);
    let mut call = Box::pin(l.call(ready_at(
        &clock,
        10,
        Err("java.io.IOException: disk".into()),
        Arc::default(),
    )));
    assert!(poll(call.as_mut()).is_pending());
    clock.advance(Duration::from_millis(10));
    assert_eq!(
        poll(call.as_mut()),
        Poll::Ready(Err(TimeLimiterError::Inner(
            "java.io.IOException: disk".to_string()
        )))
    );
    assert_eq!(
        *seen.lock().unwrap(),
        ["TimeLimiter 'backendA' recorded an error: 'java.io.IOException: disk'"]
    );
    assert_eq!(counts(l.metrics()), (0, 1, 0));
}

#[test]
fn an_inner_timeout_counts_as_a_timeout() {
    // Resilience4j: an inner java.util.concurrent.TimeoutException publishes TIMEOUT.
    let clock = ManualClock::at_epoch_millis(0);
    let (outer, seen) = limiter(&clock, 1000);
    let (inner, _) = limiter(&clock, 10);
    let nested = async {
        inner
            .call(std::future::pending::<Result<(), String>>())
            .await
            .map_err(|e| match e {
                TimeLimiterError::Timeout(t) => t,
                TimeLimiterError::Inner(e) => panic!("{e}"),
            })
    };
    let mut call = Box::pin(outer.call(nested));
    assert!(poll(call.as_mut()).is_pending());
    clock.advance(Duration::from_millis(10));
    let r: Poll<Result<(), TimeLimiterError<Timeout>>> = poll(call.as_mut());
    assert!(matches!(r, Poll::Ready(Err(TimeLimiterError::Inner(_)))));
    assert_eq!(
        *seen.lock().unwrap(),
        ["TimeLimiter 'backendA' recorded a timeout exception."]
    );
    assert_eq!(counts(outer.metrics()), (0, 0, 1));
}

#[test]
fn a_zero_timeout_lets_only_ready_futures_through() {
    // Resilience4j: a completed future with a 0 timeout publishes SUCCESS.
    let clock = ManualClock::at_epoch_millis(0);
    let (l, _) = limiter(&clock, 0);
    assert_eq!(
        poll(std::pin::pin!(l.call(async { Ok::<_, String>(1) }))),
        Poll::Ready(Ok(1))
    );
    let pending = std::future::pending::<Result<u32, String>>();
    let r = poll(std::pin::pin!(l.call(pending)));
    assert!(matches!(r, Poll::Ready(Err(TimeLimiterError::Timeout(_)))));
    // A negative timeout (accepted by Resilience4j's builder) behaves as 0.
    let (l, _) = limiter(&clock, -5);
    let r = poll(std::pin::pin!(
        l.call(std::future::pending::<Result<u32, String>>())
    ));
    assert!(matches!(r, Poll::Ready(Err(TimeLimiterError::Timeout(_)))));
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn call_detached_leaves_the_work_running_when_told_not_to_cancel() {
    for cancel in [true, false] {
        let l = TimeLimiter::new(
            "backendA",
            TimeLimiterConfig::builder()
                .timeout_duration(Duration::from_secs(1))
                .cancel_running_future(cancel)
                .build()
                .unwrap(),
        );
        let finished = Arc::new(AtomicBool::new(false));
        let f = Arc::clone(&finished);
        let work = async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            f.store(true, Ordering::SeqCst);
            Ok::<_, String>(())
        };
        let r = l.call_detached(work).await;
        assert!(matches!(r, Err(TimeLimiterError::Timeout(_))));
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(
            finished.load(Ordering::SeqCst),
            !cancel,
            "cancel = {cancel}"
        );
    }
}

#[test]
fn the_registry_gets_creates_and_replaces() {
    let registry = TimeLimiterRegistry::with_default_config(
        TimeLimiterConfig::builder()
            .timeout_duration(Duration::from_secs(3))
            .build()
            .unwrap(),
    );
    let a = registry.time_limiter("a");
    assert!(a.ptr_eq(&registry.time_limiter("a")));
    assert_eq!(a.config().timeout_duration(), Duration::from_secs(3));
    registry.configure_instance(
        "a",
        TimeLimiterConfig::builder()
            .timeout_duration(Duration::from_secs(4))
            .cancel_running_future(false)
            .build()
            .unwrap(),
    );
    assert_eq!(a.config().timeout_duration(), Duration::from_secs(4));
    assert!(!a.config().cancel_running_future());
    assert!(registry
        .time_limiter_with_config_name("b", "missing")
        .is_err());
    registry.enable_event_buffers();
    let _ = poll(std::pin::pin!(a.call(async { Ok::<_, String>(()) })));
    let kept = registry.recent_events("a").unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].event_type, TimeLimiterEventType::Success);
}

#[test]
fn every_invalid_time_limiter_config_is_rejected_with_resilience4j_s_message() {
    let dir = common::modules_dir().join("resilience4j-invalid-modules");
    let files = common::json_files(&dir, "timelimiter_");
    assert!(
        !files.is_empty(),
        "no time-limiter cases in {}",
        dir.display()
    );
    for f in &files {
        let case = common::load(f);
        assert_eq!(case["module"], "timelimiter");
        let mut b = TimeLimiterConfig::builder();
        for (k, v) in case["config"].as_object().unwrap() {
            b = match k.as_str() {
                "timeoutDuration" => {
                    b.timeout_duration_opt(v.as_i64().map(SignedDuration::from_millis))
                }
                "cancelRunningFuture" => b.cancel_running_future(v.as_bool().unwrap()),
                other => panic!("unknown key {other}"),
            };
        }
        let e = b.build().expect_err(case["name"].as_str().unwrap());
        let diffs = common::invalid_config_diffs(&case, &e, true);
        assert!(diffs.is_empty(), "{}: {}", case["name"], diffs.join("; "));
    }
}
