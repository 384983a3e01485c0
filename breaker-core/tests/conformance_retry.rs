//! Replays the Resilience4j Retry conformance vectors (recorded from the real `RetryImpl`,
//! format in `tests/data/conformance/README.md`) attempt by attempt, and checks every
//! expected value: whether Retry makes another attempt, the wait it asks its clock for (to
//! the millisecond, up to Java's `Long.MAX_VALUE`), the events in order with their attempt counts, throwables and waits,
//! what the call returns or fails with, and the five counters after every attempt. Also
//! checks the retry configs Resilience4j rejects (`resilience4j-invalid-modules/retry_*`).
//!
//! Mode, decided from each vector's own content: a vector whose config or calls exercise a
//! Resilience4j defect this library fixes (see `breaker_core::retry`) is replayed in
//! exact-Resilience4j mode only; every other vector is replayed in both modes, so the
//! default mode is shown to be Resilience4j wherever no fix applies.
//!
//! Randomized waits: the files give the interval Resilience4j draws from; each vector is
//! replayed with a random source that always draws 0 (the wait must be the interval's lower
//! end), one that draws just below 1 (its upper end), and a seeded one (inside it), the
//! last without subscribers, so that unobserved events change nothing.
//!
//! The vectors live in `tests/data/conformance/` at the repository root; set
//! `BREAKER_CONFORMANCE_MODULES_DIR` to a folder laid out like it (one subfolder per module)
//! to replay other cases.

mod common;

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use breaker_core::retry::{
    MaxRetriesExceeded, Retry, RetryConfig, RetryConfigBuilder, RetryError, RetryEvent,
    RetryMetrics, RetryWaitProperties, WaitIntervalError,
};
use breaker_core::{Clock, ConfigError, ErrorCatalog, SignedDuration, Sleep};
use serde_json::{json, Value};

use common::{
    invalid_config_diffs, json_files, load, modules_dir, modules_dir_overridden, noop_waker,
};

const ORIGIN_MS: u64 = 1_700_000_000_000;

// ----- the Java exceptions of the vectors ----------------------------------------------

/// The exception classes of the vectors and their parents (README "Named exceptions"),
/// plus the library's own.
const CLASSES: &[(&str, &str)] = &[
    ("Throwable", ""),
    ("Exception", "Throwable"),
    ("IOException", "Exception"),
    ("InterruptedIOException", "IOException"),
    ("SocketTimeoutException", "InterruptedIOException"),
    ("FileNotFoundException", "IOException"),
    ("TimeoutException", "Exception"),
    ("RuntimeException", "Exception"),
    ("IllegalArgumentException", "RuntimeException"),
    ("NumberFormatException", "IllegalArgumentException"),
    ("IllegalStateException", "RuntimeException"),
    ("UnsupportedOperationException", "RuntimeException"),
    ("MaxRetriesExceededException", "RuntimeException"),
];

/// Java's `instanceof`: `class` is `ancestor` or extends it.
fn is_a(class: &str, ancestor: &str) -> bool {
    let mut c = class;
    loop {
        if c == ancestor {
            return true;
        }
        match CLASSES.iter().find(|(n, _)| *n == c) {
            Some((_, parent)) if !parent.is_empty() => c = parent,
            _ => return false,
        }
    }
}

/// An exception thrown by an attempt: a fresh instance of a named class.
#[derive(Debug, Clone, PartialEq)]
struct JavaException {
    class: String,
    message: String,
}

impl fmt::Display for JavaException {
    /// Java's `Throwable.toString()`: `class: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.class, self.message)
    }
}

/// Every class name matches its instances and its subclasses' instances, the vectors'
/// exceptions as well as the retry's own errors (which Resilience4j's loop classifies too).
fn catalog() -> ErrorCatalog {
    let mut c = ErrorCatalog::new();
    for (name, _) in CLASSES {
        c = c
            .register(*name, move |e: &JavaException| is_a(&e.class, name))
            .register(*name, move |_: &MaxRetriesExceeded| {
                is_a(MaxRetriesExceeded::JAVA_CLASS, name)
            })
            .register(*name, move |w: &WaitIntervalError| {
                is_a(w.exception(), name)
            });
    }
    c
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// The builder calls Resilience4j's Spring layer makes for `config` (README "config").
fn builder(config: &Value) -> RetryConfigBuilder {
    let get = |k: &str| config.get(k).filter(|v| !v.is_null());
    let ms = |k: &str| get(k).map(|v| SignedDuration::from_millis(v.as_i64().unwrap()));
    let wait = RetryWaitProperties {
        wait_duration: ms("waitDuration"),
        enable_exponential_backoff: get("enableExponentialBackoff").map(|v| v.as_bool().unwrap()),
        exponential_backoff_multiplier: get("exponentialBackoffMultiplier")
            .map(|v| v.as_f64().unwrap()),
        exponential_max_wait_duration: ms("exponentialMaxWaitDuration"),
        enable_randomized_wait: get("enableRandomizedWait").map(|v| v.as_bool().unwrap()),
        randomized_wait_factor: get("randomizedWaitFactor").map(|v| v.as_f64().unwrap()),
    };
    let mut b = RetryConfig::builder()
        .error_catalog(catalog())
        .wait_properties(&wait);
    for (k, v) in config.as_object().expect("config is an object") {
        b = match k.as_str() {
            "maxAttempts" => b.max_attempts(v.as_i64().unwrap()),
            "retryExceptionPredicate" => {
                // The predicate class: true iff the exception's exact class is listed.
                let listed = strings(v);
                b.retry_on_exception(move |e: &JavaException| listed.contains(&e.class))
            }
            "ignoreExceptions" => b.ignore_exceptions(strings(v)),
            "retryExceptions" => b.retry_exceptions(strings(v)),
            "resultPredicate" => {
                let listed = strings(v);
                b.retry_on_result(move |r: &String| listed.contains(r))
            }
            "failAfterMaxAttempts" => b.fail_after_max_attempts(v.as_bool().unwrap()),
            "waitDuration"
            | "enableExponentialBackoff"
            | "exponentialBackoffMultiplier"
            | "exponentialMaxWaitDuration"
            | "enableRandomizedWait"
            | "randomizedWaitFactor" => b,
            other => panic!("unknown config key {other}"),
        };
    }
    b
}

// ----- which mode a vector needs --------------------------------------------------------

/// The steps of each call, in order.
fn calls(case: &Value) -> Vec<Vec<&Value>> {
    let mut out: Vec<Vec<&Value>> = Vec::new();
    let mut current = None;
    for s in case["steps"].as_array().unwrap() {
        let call = s["call"].as_i64().unwrap();
        if current != Some(call) {
            out.push(Vec::new());
            current = Some(call);
        }
        out.last_mut().unwrap().push(s);
    }
    out
}

/// Whether the vector records behaviour that differs from this library's default mode: a
/// call whose results ran out (Resilience4j counts its last attempt twice, and with
/// `failAfterMaxAttempts` the whole call twice), a negative multiplier (negative intervals),
/// or a config the default builder rejects although Resilience4j runs it (the initial
/// interval of a capped backoff, which Resilience4j checks only at the first retry).
fn records_a_resilience4j_defect(case: &Value) -> bool {
    let config = &case["config"];
    if config["exponentialBackoffMultiplier"]
        .as_f64()
        .is_some_and(|m| m < 0.0)
    {
        return true;
    }
    if builder(config).build().is_err() {
        return true;
    }
    let retried: Vec<String> = config
        .get("resultPredicate")
        .map(strings)
        .unwrap_or_default();
    calls(case).iter().any(|steps| {
        let last = steps.last().unwrap();
        last["outcome"]["return"]
            .as_str()
            .is_some_and(|v| retried.iter().any(|r| r == v))
    })
}

// ----- driving a call attempt by attempt ------------------------------------------------

/// Pending once, then ready: each attempt yields to the test before it returns.
#[derive(Default)]
struct YieldOnce(bool);
impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

/// A clock that records every wait Retry asks for; each wait ends at the next poll.
#[derive(Debug, Default)]
struct RecordingClock {
    waits: Mutex<Vec<Duration>>,
}

impl Clock for RecordingClock {
    fn now_nanos(&self) -> u64 {
        ORIGIN_MS * 1_000_000
    }
    fn sleep(&self, duration: Duration) -> Sleep {
        self.waits.lock().unwrap().push(duration);
        Sleep::from_future(YieldOnce::default())
    }
}

#[derive(Default)]
struct Script {
    outcomes: VecDeque<Result<String, JavaException>>,
    started: usize,
    beyond_the_file: bool,
}

#[derive(Clone, Copy, Debug)]
enum Draw {
    Lowest,
    Highest,
    Seeded,
}

fn throwable_json(t: &Option<breaker_core::Throwable>) -> Value {
    match t {
        None => Value::Null,
        Some(t) if t.class() == std::any::type_name::<JavaException>() => {
            let (class, message) = t.message().split_once(": ").unwrap();
            json!({"class": class, "message": message})
        }
        Some(t) => json!({"class": t.class(), "message": t.message()}),
    }
}

fn metrics_json(m: RetryMetrics) -> Value {
    json!({
        "numberOfSuccessfulCallsWithoutRetryAttempt": m.number_of_successful_calls_without_retry_attempt,
        "numberOfFailedCallsWithoutRetryAttempt": m.number_of_failed_calls_without_retry_attempt,
        "numberOfSuccessfulCallsWithRetryAttempt": m.number_of_successful_calls_with_retry_attempt,
        "numberOfFailedCallsWithRetryAttempt": m.number_of_failed_calls_with_retry_attempt,
        "numberOfTotalCalls": m.number_of_total_calls,
    })
}

fn result_json(r: &Result<String, RetryError<JavaException>>) -> Value {
    match r {
        Ok(v) => json!({"returned": v}),
        Err(RetryError::Inner(e)) => json!({"thrown": e.class, "message": e.message}),
        Err(RetryError::MaxRetriesExceeded(m)) => {
            json!({"thrown": MaxRetriesExceeded::JAVA_CLASS, "message": m.to_string()})
        }
        Err(RetryError::WaitInterval(w)) => {
            json!({"thrown": w.exception(), "message": w.message()})
        }
    }
}

/// Whether `actual` ms satisfies an expected wait: an exact value, or the `{min, max}`
/// interval of a randomized wait, whose lower end the lowest draw must hit and whose upper
/// end the highest draw must hit.
fn wait_matches(expected: &Value, actual: u64, draw: Draw) -> bool {
    if let Some(v) = expected.as_u64() {
        return v == actual;
    }
    let (min, max) = (
        expected["min"].as_u64().unwrap(),
        expected["max"].as_u64().unwrap(),
    );
    match draw {
        Draw::Lowest => actual == min,
        Draw::Highest => actual == max,
        Draw::Seeded => (min..=max).contains(&actual),
    }
}

fn events_match(expected: &Value, actual: &[RetryEvent], draw: Draw) -> bool {
    let expected = expected.as_array().unwrap();
    expected.len() == actual.len()
        && expected.iter().zip(actual).all(|(e, a)| {
            let wait_ok = match (e.get("waitInterval_ms"), a.wait_interval) {
                (Some(w), Some(d)) => wait_matches(w, d.as_millis() as u64, draw),
                (None, None) => true,
                _ => false,
            };
            e["type"].as_str() == Some(a.event_type.name())
                && e["numberOfAttempts"].as_u64() == Some(a.number_of_retry_attempts as u64)
                && e["lastThrowable"] == throwable_json(&a.last_throwable)
                && wait_ok
        })
}

fn describe(events: &[RetryEvent]) -> Value {
    Value::Array(
        events
            .iter()
            .map(|a| {
                let mut v = json!({
                    "type": a.event_type.name(),
                    "numberOfAttempts": a.number_of_retry_attempts,
                    "lastThrowable": throwable_json(&a.last_throwable),
                });
                if let Some(w) = a.wait_interval {
                    v["waitInterval_ms"] = json!(w.as_millis() as u64);
                }
                v
            })
            .collect(),
    )
}

/// Replays `case` on a fresh retry; `Err` describes the first difference.
fn replay(case: &Value, exact: bool, draw: Draw, subscribed: bool) -> Result<(), String> {
    let clock = Arc::new(RecordingClock::default());
    let random: Arc<dyn breaker_core::RandomSource> = match draw {
        Draw::Lowest => Arc::new(|| 0.0),
        Draw::Highest => Arc::new(|| 1.0 - 1e-12),
        Draw::Seeded => {
            let rng = Mutex::new(fastrand::Rng::with_seed(7));
            Arc::new(move || rng.lock().unwrap().f64())
        }
    };
    let config = builder(&case["config"])
        .clock(clock.clone())
        .random_source(random)
        .exact_resilience4j(exact)
        .build()
        .map_err(|e| format!("config rejected: {e}"))?;
    let retry = Retry::new("backendA", config);
    let seen = Arc::new(Mutex::new(Vec::<RetryEvent>::new()));
    if subscribed {
        let s = Arc::clone(&seen);
        retry.subscribe(move |e| s.lock().unwrap().push(e.clone()));
    }
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);

    for steps in calls(case) {
        let call = steps[0]["call"].as_i64().unwrap();
        let script = Arc::new(Mutex::new(Script::default()));
        for s in &steps {
            let o = &s["outcome"];
            script
                .lock()
                .unwrap()
                .outcomes
                .push_back(match o.get("throw") {
                    Some(class) => Err(JavaException {
                        class: class.as_str().unwrap().to_string(),
                        message: format!("call {call} attempt {}", s["attempt"]),
                    }),
                    None => Ok(o["return"].as_str().unwrap().to_string()),
                });
        }
        let theirs = Arc::clone(&script);
        let attempt = move || {
            let s = Arc::clone(&theirs);
            s.lock().unwrap().started += 1;
            async move {
                YieldOnce::default().await;
                let mut s = s.lock().unwrap();
                s.outcomes.pop_front().unwrap_or_else(|| {
                    s.beyond_the_file = true;
                    Ok("<beyond the file>".to_string())
                })
            }
        };
        let mut fut = Box::pin(retry.call(attempt));
        if fut.as_mut().poll(&mut cx).is_ready() {
            return Err(format!(
                "call {call}: finished before its first attempt returned"
            ));
        }
        for (i, step) in steps.iter().enumerate() {
            let at = format!("call {call} attempt {}", i + 1);
            let expect = &step["expect"];
            seen.lock().unwrap().clear();
            let polled = fut.as_mut().poll(&mut cx);
            let metrics = metrics_json(retry.metrics());
            let events = std::mem::take(&mut *seen.lock().unwrap());
            if script.lock().unwrap().beyond_the_file {
                return Err(format!(
                    "{at}: Retry asked for more attempts than the file holds"
                ));
            }
            let retried = expect["retry"].as_bool().unwrap();
            match (&polled, retried) {
                (Poll::Ready(r), false) => {
                    if result_json(r) != expect["result"] {
                        return Err(format!(
                            "{at}: result: expected {}, got {}",
                            expect["result"],
                            result_json(r)
                        ));
                    }
                }
                (Poll::Pending, true) => {
                    let next_started = script.lock().unwrap().started == i + 2;
                    let requested = clock.waits.lock().unwrap().pop();
                    let wait = match (next_started, requested) {
                        // No wait at all: the next attempt started at once.
                        (true, None) => 0,
                        (false, Some(d)) if d.as_nanos() % 1_000_000 == 0 => d.as_millis(),
                        (started, d) => {
                            return Err(format!(
                                "{at}: next attempt started: {started}, wait requested: {d:?}"
                            ))
                        }
                    };
                    let wait = u64::try_from(wait).map_err(|_| format!("{at}: wait {wait}"))?;
                    if !wait_matches(&expect["wait_ms"], wait, draw) {
                        return Err(format!(
                            "{at}: wait {wait} ms, expected {} ({draw:?} draw)",
                            expect["wait_ms"]
                        ));
                    }
                    if wait > 0 {
                        let _ = fut.as_mut().poll(&mut cx);
                        if script.lock().unwrap().started != i + 2 {
                            return Err(format!("{at}: no next attempt when the wait ended"));
                        }
                    }
                }
                (Poll::Ready(r), true) => {
                    return Err(format!(
                        "{at}: finished with {} where Resilience4j retries",
                        result_json(r)
                    ))
                }
                (Poll::Pending, false) => {
                    return Err(format!("{at}: retries where Resilience4j finishes"))
                }
            }
            if subscribed && !events_match(&expect["events"], &events, draw) {
                return Err(format!(
                    "{at}: events: expected {}, got {}",
                    expect["events"],
                    describe(&events)
                ));
            }
            if metrics != expect["metrics"] {
                return Err(format!(
                    "{at}: metrics: expected {}, got {metrics}",
                    expect["metrics"]
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn every_retry_vector_reproduces_resilience4j() {
    let dir = modules_dir().join("resilience4j-retry");
    let files = json_files(&dir, "");
    assert!(!files.is_empty(), "no cases in {}", dir.display());
    let mut failures = Vec::new();
    let (mut exact_only, mut both) = (0, 0);
    for f in &files {
        let case = load(f);
        let name = case["name"].as_str().unwrap_or("?").to_string();
        let modes: &[bool] = if records_a_resilience4j_defect(&case) {
            exact_only += 1;
            &[true]
        } else {
            both += 1;
            &[true, false]
        };
        for &exact in modes {
            let mode = if exact { "exact mode" } else { "default mode" };
            let r = replay(&case, exact, Draw::Lowest, true)
                .and_then(|()| replay(&case, exact, Draw::Highest, true))
                .and_then(|()| replay(&case, exact, Draw::Seeded, false))
                .map_err(|e| format!("{name} ({mode}): {e}"));
            if let Err(e) = r {
                failures.push(e);
            }
        }
    }
    eprintln!(
        "replayed {} retry vectors from {}: {both} in both modes, {exact_only} in exact-Resilience4j mode only",
        files.len(),
        dir.display()
    );
    assert!(
        failures.is_empty(),
        "{} replays differ from Resilience4j:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn check_invalid(case: &Value) -> Result<(), String> {
    let err: ConfigError = match builder(&case["config"]).build() {
        Ok(_) => return Err("accepted".into()),
        Err(e) => e,
    };
    let diffs = invalid_config_diffs(case, &err, true);
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("; "))
    }
}

#[test]
fn every_invalid_retry_config_is_rejected_with_resilience4j_s_message() {
    let dir = modules_dir().join("resilience4j-invalid-modules");
    let files = json_files(&dir, "retry_");
    assert!(!files.is_empty(), "no retry cases in {}", dir.display());
    let mut failures = Vec::new();
    for f in &files {
        let case = load(f);
        assert_eq!(case["module"], "retry", "{}", f.display());
        if let Err(e) = check_invalid(&case) {
            failures.push(format!("{}: {e}", case["name"]));
        }
    }
    eprintln!("checked {} invalid retry configs", files.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_repository_holds_every_shipped_retry_vector() {
    if modules_dir_overridden() {
        return;
    }
    let dir = modules_dir();
    // 47 hand-written + 105 generated scenarios; 12 invalid retry configs.
    assert_eq!(json_files(&dir.join("resilience4j-retry"), "").len(), 152);
    assert_eq!(
        json_files(&dir.join("resilience4j-invalid-modules"), "retry_").len(),
        12
    );
}

#[test]
fn the_mode_rule_reads_the_vectors_content() {
    let case = |config: Value, outcomes: &[Value]| {
        let steps: Vec<Value> = outcomes
            .iter()
            .enumerate()
            .map(|(i, o)| json!({"call": 1, "attempt": i + 1, "outcome": o}))
            .collect();
        json!({"config": config, "steps": steps})
    };
    let busy = json!({"return": "BUSY"});
    let ok = json!({"return": "OK"});
    let io = json!({"throw": "IOException"});
    // Results that run out: exact mode.
    assert!(records_a_resilience4j_defect(&case(
        json!({"resultPredicate": ["BUSY"]}),
        &[busy.clone(), busy.clone(), busy.clone()]
    )));
    // Results retried, then a success: both modes.
    assert!(!records_a_resilience4j_defect(&case(
        json!({"resultPredicate": ["BUSY"]}),
        &[busy, ok.clone()]
    )));
    // A negative multiplier, and a capped backoff from 0 ms: exact mode.
    assert!(records_a_resilience4j_defect(&case(
        json!({"waitDuration": 100, "enableExponentialBackoff": true, "exponentialBackoffMultiplier": -2.0}),
        &[io.clone(), io.clone()]
    )));
    assert!(records_a_resilience4j_defect(&case(
        json!({"waitDuration": 0, "enableExponentialBackoff": true, "exponentialBackoffMultiplier": 2.0, "exponentialMaxWaitDuration": 1000}),
        &[io]
    )));
    assert!(!records_a_resilience4j_defect(&case(json!({}), &[ok])));
}

#[test]
fn the_java_hierarchy_matches_subclasses() {
    assert!(is_a("SocketTimeoutException", "IOException"));
    assert!(is_a("NumberFormatException", "RuntimeException"));
    assert!(!is_a("IOException", "RuntimeException"));
    assert!(is_a("MaxRetriesExceededException", "Exception"));
    let c = catalog();
    let e = JavaException {
        class: "FileNotFoundException".into(),
        message: String::new(),
    };
    assert!(c.matches_any(&["IOException".to_string()], &e));
    assert!(!c.matches_any(&["RuntimeException".to_string()], &e));
}
