//! Replays the rate-limiter conformance vectors (recorded from the real Resilience4j
//! `AtomicRateLimiter` on a virtual clock) and checks every step: permitted, how long a
//! blocked acquire waited (to the nanosecond: still pending 1 ns before its return time,
//! done at it), reservations, errors, events in order with the call that published them, and
//! every metric.
//!
//! The vectors live in `tests/data/conformance/resilience4j-ratelimiter/` at the repository
//! root. Set `BREAKER_CONFORMANCE_MODULES_DIR` to a folder laid out like it (one subfolder
//! per module) to replay another set.
//!
//! A vector that records one of the Resilience4j defects this crate fixes (a refused acquire
//! that blocked for its timeout, or a `DRAINED` event) is replayed in exact Resilience4j
//! mode; the decision is made from the vector's own steps.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use breaker_core::ratelimiter::{
    RateLimiter, RateLimiterConfig, RateLimiterConfigBuilder, RateLimiterEvent, RequestNotPermitted,
};
use breaker_core::{ManualClock, SignedDuration};
use serde_json::{json, Value};

use common::{
    compare, json_files, modules_dir, modules_dir_overridden, noop_waker, replay_module_vectors,
    step_outcome,
};

const ORIGIN_NS: u64 = 1_700_000_000_000_000_000;

/// The vectors' exception names and their Java superclasses, for `instanceof`.
fn parent(class: &str) -> Option<&'static str> {
    Some(match class {
        "Exception" => "Throwable",
        "IOException" | "TimeoutException" | "RuntimeException" => "Exception",
        "InterruptedIOException" | "FileNotFoundException" => "IOException",
        "SocketTimeoutException" => "InterruptedIOException",
        "IllegalArgumentException" | "IllegalStateException" | "UnsupportedOperationException" => {
            "RuntimeException"
        }
        "NumberFormatException" => "IllegalArgumentException",
        "MaxRetriesExceeded" | "MaxRetriesExceededException" | "BulkheadFullException" => {
            "RuntimeException"
        }
        _ => return None,
    })
}

fn instance_of(class: &str, of: &str) -> bool {
    let mut c = Some(class);
    while let Some(k) = c {
        if k == of {
            return true;
        }
        c = parent(k);
    }
    false
}

/// A Java exception thrown by the harness, by class name.
struct JavaException(String);

fn builder(config: &Value, clock: &ManualClock, exact: bool) -> RateLimiterConfigBuilder {
    let mut b = RateLimiterConfig::builder()
        .clock(Arc::new(clock.clone()))
        .exact_resilience4j(exact);
    for (k, v) in config.as_object().expect("config is an object") {
        let ms = || v.as_i64().map(SignedDuration::from_millis);
        b = match k.as_str() {
            "limitForPeriod" => b.limit_for_period(v.as_i64().unwrap()),
            "limitRefreshPeriod" => b.limit_refresh_period(ms()),
            "timeoutDuration" => b.timeout_duration(ms()),
            "drainPermissionsOnResult" => {
                let list = |key: &str| -> Vec<String> {
                    v[key]
                        .as_array()
                        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
                        .unwrap_or_default()
                };
                let (results, exceptions) = (list("results"), list("exceptions"));
                b.drain_permissions_on_result(move |outcome| match outcome {
                    Ok(v) => v
                        .downcast_ref::<String>()
                        .is_some_and(|s| results.contains(s)),
                    Err(e) => e
                        .downcast_ref::<JavaException>()
                        .is_some_and(|e| exceptions.iter().any(|x| instance_of(&e.0, x))),
                })
            }
            other => panic!("unknown config key {other}"),
        };
    }
    b
}

/// Whether the vector records a defect this crate fixes, read from its steps: an acquire
/// that was refused after blocking (Resilience4j waits out the timeout), or a drain
/// (Resilience4j drains stale permissions and reports `min(permissions, 0)`).
fn needs_exact_mode(case: &Value) -> bool {
    case["steps"].as_array().unwrap().iter().any(|s| {
        let e = &s["expect"];
        let refused_after_wait = s["op"] == "acquire"
            && e["permitted"] == json!(false)
            && e["wait_ns"].as_i64().unwrap_or(0) > 0;
        let drained = e["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|ev| ev["type"] == "DRAINED");
        refused_after_wait || drained
    })
}

type Pending<'a> = Pin<Box<dyn Future<Output = Result<(), RequestNotPermitted>> + 'a>>;

/// A blocked acquire: its future, its expected return time (ns since the origin) and
/// outcome.
struct Blocked<'a> {
    call: u64,
    returns_at: u64,
    permitted: bool,
    future: Pending<'a>,
}

fn poll_once<F: Future + ?Sized>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(&noop_waker()))
}

fn event_json(e: &RateLimiterEvent, call: Option<u64>) -> Value {
    let mut v = json!({"type": e.event_type.name(), "numberOfPermits": e.number_of_permits});
    if let Some(c) = call {
        v["call"] = json!(c);
    }
    v
}

fn replay(case: &Value, exact: bool) -> Result<(), String> {
    let clock = ManualClock::default();
    clock.set_epoch_nanos(ORIGIN_NS);
    let config = builder(&case["config"], &clock, exact)
        .build()
        .map_err(|e| format!("config rejected: {e}"))?;
    let limiter = RateLimiter::new("backendA", config);
    let raw: Arc<Mutex<Vec<RateLimiterEvent>>> = Arc::default();
    let sink = raw.clone();
    limiter.subscribe(move |e| sink.lock().unwrap().push(e.clone()));
    let take_events = |call: Option<u64>| -> Vec<Value> {
        raw.lock()
            .unwrap()
            .drain(..)
            .map(|e| event_json(&e, call))
            .collect()
    };
    let mut blocked: Vec<Blocked<'_>> = Vec::new();
    let mut now = ORIGIN_NS;

    for (index, step) in case["steps"].as_array().unwrap().iter().enumerate() {
        let t_ns = ORIGIN_NS + step["t_ms"].as_u64().unwrap() * 1_000_000;
        let op = step["op"].as_str().unwrap();
        let expect = &step["expect"];
        let call = step["call"].as_u64();
        let mut diffs = Vec::new();
        let mut events = Vec::new();

        // Blocked acquires due by this step return first, earliest first, ties by call.
        blocked.sort_by_key(|b| (b.returns_at, b.call));
        while blocked.first().is_some_and(|b| b.returns_at <= t_ns) {
            let mut b = blocked.remove(0);
            if b.returns_at > now {
                now = b.returns_at - 1;
                clock.set_epoch_nanos(now);
                if poll_once(b.future.as_mut()).is_ready() {
                    diffs.push(format!("call {} returned 1 ns early", b.call));
                }
            }
            now = b.returns_at;
            clock.set_epoch_nanos(now);
            match poll_once(b.future.as_mut()) {
                Poll::Ready(r) if r.is_ok() == b.permitted => {}
                Poll::Ready(r) => diffs.push(format!(
                    "call {}: expected permitted {}, got {}",
                    b.call,
                    b.permitted,
                    r.is_ok()
                )),
                Poll::Pending => {
                    diffs.push(format!("call {} still blocked at its return time", b.call))
                }
            }
            events.extend(take_events(Some(b.call)));
        }
        now = now.max(t_ns);
        clock.set_epoch_nanos(now);

        let permits = step["permits"].as_u64().map(|p| p as u32);
        let mut error: Option<Value> = None;
        match op {
            "acquire" => {
                let mut future: Pending<'_> =
                    Box::pin(limiter.acquire_permission(permits.unwrap()));
                let expected_permitted = expect["permitted"].as_bool().unwrap();
                let expected_wait = expect["wait_ns"].as_u64().unwrap();
                match poll_once(future.as_mut()) {
                    Poll::Ready(r) => {
                        if expected_wait != 0 {
                            diffs.push(format!(
                                "returned at once, expected a wait of {expected_wait} ns"
                            ));
                        }
                        if r.is_ok() != expected_permitted {
                            diffs.push(format!(
                                "permitted: expected {expected_permitted}, got {}",
                                r.is_ok()
                            ));
                        }
                    }
                    Poll::Pending => {
                        if expected_wait == 0 {
                            diffs.push("blocked, expected to return at once".into());
                        } else {
                            blocked.push(Blocked {
                                call: call.unwrap(),
                                returns_at: now + expected_wait,
                                permitted: expected_permitted,
                                future,
                            });
                        }
                    }
                }
                events.extend(take_events(call));
            }
            "reserve" => {
                let got = match limiter.reserve_permission(permits.unwrap()) {
                    Ok(d) => d.as_nanos() as i64,
                    Err(_) => -1,
                };
                let expected = expect["reservation_ns"].as_i64().unwrap();
                if got != expected {
                    diffs.push(format!("reservation_ns: expected {expected}, got {got}"));
                }
                events.extend(take_events(call));
            }
            "drain" => limiter.drain_permissions(),
            "result" => limiter.on_result(&step["value"].as_str().unwrap().to_string()),
            "error" => limiter.on_error(&JavaException(
                step["exception"].as_str().unwrap().to_string(),
            )),
            "success" => limiter.on_success(),
            "changeTimeoutDuration" => {
                let d = step["timeoutDuration"]
                    .as_i64()
                    .map(SignedDuration::from_millis);
                if let Err(e) = limiter.change_timeout_duration(d) {
                    error = Some(json!({"message": e.to_string()}));
                }
            }
            "changeLimitForPeriod" => {
                if let Err(e) =
                    limiter.change_limit_for_period(step["limitForPeriod"].as_i64().unwrap())
                {
                    error = Some(json!({"message": e.to_string()}));
                }
            }
            "advance" => {}
            other => return Err(format!("step {index}: unknown op {other}")),
        }
        events.extend(take_events(None));

        let expected_error = expect
            .get("error")
            .map(|e| json!({"message": e["message"]}));
        if expected_error != error {
            diffs.push(format!("error: expected {expected_error:?}, got {error:?}"));
        }
        compare(
            &mut diffs,
            "events",
            &expect["events"],
            &Value::Array(events),
        );
        let m = limiter.metrics();
        let got_metrics = json!({
            "availablePermissions": m.available_permissions,
            "numberOfWaitingThreads": m.number_of_waiting_threads,
            "nanosToWait": m.nanos_to_wait,
            "cycle": m.cycle,
        });
        compare(&mut diffs, "metrics", &expect["metrics"], &got_metrics);
        step_outcome(index, step, op, call, &diffs)?;
    }
    if let Some(b) = blocked.first() {
        return Err(format!("call {} still blocked at the end", b.call));
    }
    Ok(())
}

#[test]
fn every_rate_limiter_vector_reproduces_resilience4j() {
    replay_module_vectors(
        "resilience4j-ratelimiter",
        "rate-limiter",
        needs_exact_mode,
        replay,
    );
}

#[test]
fn the_repository_holds_every_shipped_rate_limiter_vector() {
    if modules_dir_overridden() {
        return;
    }
    // 31 hand-written + 105 generated scenarios.
    assert_eq!(
        json_files(&modules_dir().join("resilience4j-ratelimiter"), "").len(),
        136
    );
}
