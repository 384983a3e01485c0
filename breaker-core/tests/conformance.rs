//! Replays the Resilience4j conformance vectors (recorded from the real Java state machine on
//! a virtual clock) and checks every step: permitted, state, events in order, error, and
//! every metric.
//!
//! The vectors live in `tests/data/conformance/` at the repository root. Set
//! `BREAKER_CONFORMANCE_DIR` to replay another directory of cases in the same format.
//!
//! The vectors record Resilience4j as it is. Where a vector completes or releases, in
//! HALF_OPEN, a call that an earlier state admitted (a late call, which by default neither
//! decides HALF_OPEN nor frees a trial permit), it is replayed in exact Resilience4j mode
//! (`exact_resilience4j`); the runner reads that from the vector's own steps
//! and expectations ([`late_call_in_half_open`]), never from its name. Every other vector is
//! replayed in both modes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::{
    CircuitBreaker, CircuitBreakerConfig, CircuitBreakerConfigBuilder, EventKind, ManualClock,
    Metrics, Outcome, Permit, SignedDuration, SlidingWindowType, State,
};
use serde_json::Value;

const ORIGIN_MS: u64 = 1_700_000_000_000;

fn cases_dir() -> PathBuf {
    match std::env::var_os("BREAKER_CONFORMANCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/conformance"),
    }
}

/// The circuit breaker's cases: the `resilience4j` and `resilience4j-invalid` folders of a
/// directory laid out like the shared conformance folder (whose other folders hold other
/// modules' vectors), or every case of a directory without them.
fn breaker_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let folders: Vec<PathBuf> = ["resilience4j", "resilience4j-invalid"]
        .iter()
        .map(|f| dir.join(f))
        .filter(|p| p.is_dir())
        .collect();
    if folders.is_empty() {
        json_files(dir, &mut out);
    }
    for f in folders {
        json_files(&f, &mut out);
    }
    out
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if is_other_module(&p) {
                continue;
            }
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

/// The other modules' folders beside the breaker's (`resilience4j-retry/`,
/// `resilience4j-ratelimiter/`, `resilience4j-bulkhead/`, `resilience4j-invalid-modules/`...)
/// have runners of their own.
fn is_other_module(dir: &Path) -> bool {
    dir.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("resilience4j-") && n != "resilience4j-invalid")
}

fn state_of(s: &str) -> State {
    s.parse().unwrap_or_else(|e| panic!("{e}"))
}

fn builder(config: &Value, clock: &ManualClock) -> CircuitBreakerConfigBuilder {
    let mut b = CircuitBreakerConfig::builder().clock(Arc::new(clock.clone()));
    let obj = config.as_object().expect("config is an object");
    for (k, v) in obj {
        let int = || v.as_i64().unwrap_or_else(|| panic!("{k}: not an integer"));
        let float = || v.as_f64().unwrap_or_else(|| panic!("{k}: not a number")) as f32;
        let ms = || SignedDuration::from_millis(int());
        b = match k.as_str() {
            "slidingWindowType" => b.sliding_window_type(match v.as_str().unwrap() {
                "COUNT_BASED" => SlidingWindowType::CountBased,
                "TIME_BASED" => SlidingWindowType::TimeBased,
                other => panic!("slidingWindowType {other}"),
            }),
            "slidingWindowSize" => b.sliding_window_size(int()),
            "minimumNumberOfCalls" => b.minimum_number_of_calls(int()),
            "failureRateThreshold" => b.failure_rate_threshold(float()),
            "slowCallRateThreshold" => b.slow_call_rate_threshold(float()),
            "slowCallDurationThreshold" => b.slow_call_duration_threshold(ms()),
            "waitDurationInOpenState" => b.wait_duration_in_open_state(ms()),
            "permittedNumberOfCallsInHalfOpenState" => {
                b.permitted_number_of_calls_in_half_open_state(int())
            }
            "maxWaitDurationInHalfOpenState" => b.max_wait_duration_in_half_open_state(ms()),
            "transitionToStateAfterWaitDuration" => {
                b.transition_to_state_after_wait_duration(state_of(v.as_str().unwrap()))
            }
            "initialState" => b.initial_state(state_of(v.as_str().unwrap())),
            "automaticTransitionFromOpenToHalfOpenEnabled" => {
                b.automatic_transition_from_open_to_half_open_enabled(v.as_bool().unwrap())
            }
            other => panic!("unknown config key {other}"),
        };
    }
    b
}

fn event_string(e: &EventKind) -> String {
    match e {
        EventKind::StateTransition { from, to } => format!("STATE_TRANSITION {from}->{to}"),
        other => other.event_type().name().to_string(),
    }
}

fn metrics_diff(expected: &Value, m: &Metrics) -> Vec<String> {
    let mut diffs = Vec::new();
    let f = |k: &str| expected[k].as_f64().unwrap_or_else(|| panic!("metric {k}")) as f32;
    let i = |k: &str| expected[k].as_u64().unwrap_or_else(|| panic!("metric {k}"));
    let mut check_f = |k: &str, got: f32| {
        if f(k).to_bits() != got.to_bits() {
            diffs.push(format!("{k}: expected {}, got {got}", f(k)));
        }
    };
    check_f("failureRate", m.failure_rate);
    check_f("slowCallRate", m.slow_call_rate);
    for (k, got) in [
        ("numberOfBufferedCalls", m.number_of_buffered_calls as u64),
        ("numberOfFailedCalls", m.number_of_failed_calls as u64),
        (
            "numberOfSuccessfulCalls",
            m.number_of_successful_calls as u64,
        ),
        ("numberOfSlowCalls", m.number_of_slow_calls as u64),
        (
            "numberOfSlowSuccessfulCalls",
            m.number_of_slow_successful_calls as u64,
        ),
        (
            "numberOfSlowFailedCalls",
            m.number_of_slow_failed_calls as u64,
        ),
        ("numberOfNotPermittedCalls", m.number_of_not_permitted_calls),
    ] {
        if i(k) != got {
            diffs.push(format!("{k}: expected {}, got {got}", i(k)));
        }
    }
    diffs
}

/// The `STATE_TRANSITION` events of a step, as `(from, to)`, each with its index in the
/// step's event list.
fn transitions(step: &Value) -> Vec<(usize, State, State)> {
    step["expect"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let (from, to) = e
                .as_str()?
                .strip_prefix("STATE_TRANSITION ")?
                .split_once("->")?;
            Some((i, state_of(from), state_of(to)))
        })
        .collect()
}

/// Whether the vector completes (`success`, `error`, `ignore`) or releases, while HALF_OPEN, a
/// call that an earlier state object admitted: then it needs exact Resilience4j mode.
///
/// Read from the vector alone: every state object gets a number (an episode). A
/// `STATE_TRANSITION` event starts the next one, and so does every `transition` and `reset`
/// step (they always build a new state, even X -> X without an event; counting one too many
/// there only skips numbers). A call belongs to the episode current after its `acquire` step
/// (an OPEN breaker's first trial call is admitted by the HALF_OPEN state it enters). A
/// completion applies to the state current just before its own event: the step's events
/// before it are timers that fired first (for `release`, which publishes nothing, all of them).
fn late_call_in_half_open(case: &Value) -> bool {
    let mut state = case["config"]["initialState"]
        .as_str()
        .map_or(State::Closed, state_of);
    let mut episode = 0u64;
    let mut admitted_in: HashMap<u64, u64> = HashMap::new();
    for step in case["steps"].as_array().unwrap() {
        let op = step["op"].as_str().unwrap();
        let events = transitions(step);
        let own_event = step["expect"]["events"]
            .as_array()
            .unwrap()
            .iter()
            .position(|e| !e.as_str().unwrap().starts_with("STATE_TRANSITION "));
        let mut applied_at = (state, episode);
        for (n, (i, _, to)) in events.iter().enumerate() {
            if matches!(op, "success" | "error" | "ignore" | "release")
                && own_event.is_none_or(|own| *i < own)
            {
                applied_at = (*to, episode + n as u64 + 1);
            }
        }
        episode += events.len() as u64;
        if matches!(op, "transition" | "reset") {
            episode += 1;
        }
        let call = step["call"].as_u64();
        match op {
            "acquire" if step["expect"]["permitted"].as_bool() == Some(true) => {
                admitted_in.insert(call.unwrap(), episode);
            }
            "success" | "error" | "ignore" | "release" => {
                let (at_state, at_episode) = applied_at;
                if at_state == State::HalfOpen && admitted_in[&call.unwrap()] != at_episode {
                    return true;
                }
            }
            _ => {}
        }
        state = state_of(step["expect"]["state"].as_str().unwrap());
    }
    false
}

/// Replays one scenario; returns the first difference found. Without `with_events` nobody
/// subscribes (the breaker then takes its quiet fast paths) and events are not compared.
/// `exact` selects exact Resilience4j mode for late calls in HALF_OPEN.
fn replay(case: &Value, with_events: bool, exact: bool) -> Result<(), String> {
    let clock = ManualClock::at_epoch_millis(ORIGIN_MS);
    let config = builder(&case["config"], &clock)
        .exact_resilience4j(exact)
        .build()
        .map_err(|e| format!("config rejected: {e}"))?;
    let cb = CircuitBreaker::new("conformance", config);
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = events.clone();
    if with_events {
        cb.subscribe(move |e| sink.lock().unwrap().push(event_string(&e.kind)));
    }
    let mut permits: HashMap<u64, Permit<'_>> = HashMap::new();

    for (index, step) in case["steps"].as_array().unwrap().iter().enumerate() {
        let t = step["t_ms"].as_u64().unwrap();
        clock.set_epoch_millis(ORIGIN_MS + t);
        events.lock().unwrap().clear();
        let op = step["op"].as_str().unwrap();
        let expect = &step["expect"];
        let call = step["call"].as_u64();
        let mut diffs = Vec::new();
        let mut error = None;
        match op {
            "acquire" => {
                let r = cb.try_acquire_permission();
                let permitted = r.is_ok();
                if let Ok(p) = r {
                    permits.insert(call.unwrap(), p);
                }
                if expect["permitted"].as_bool() != Some(permitted) {
                    diffs.push(format!(
                        "permitted: expected {}, got {permitted}",
                        expect["permitted"]
                    ));
                }
            }
            "success" | "error" | "ignore" => {
                let p = permits
                    .remove(&call.unwrap())
                    .ok_or_else(|| format!("step {index}: no permit for call {call:?}"))?;
                p.record(match op {
                    "success" => Outcome::Success,
                    "error" => Outcome::Failure,
                    _ => Outcome::Ignored,
                });
            }
            "release" => {
                let p = permits
                    .remove(&call.unwrap())
                    .ok_or_else(|| format!("step {index}: no permit for call {call:?}"))?;
                p.release();
            }
            "transition" => {
                let to = state_of(step["to"].as_str().unwrap());
                if cb.transition_to(to).is_err() {
                    error = Some("ILLEGAL_STATE_TRANSITION");
                }
            }
            "reset" => cb.reset(),
            other => return Err(format!("step {index}: unknown op {other}")),
        }
        let expected_error = expect["error"].as_str();
        if expected_error != error {
            diffs.push(format!("error: expected {expected_error:?}, got {error:?}"));
        }
        let state = cb.state();
        let expected_state = state_of(expect["state"].as_str().unwrap());
        if state != expected_state {
            diffs.push(format!("state: expected {expected_state}, got {state}"));
        }
        diffs.extend(metrics_diff(&expect["metrics"], &cb.metrics()));
        let got_events = events.lock().unwrap().clone();
        let expected_events: Vec<String> = expect["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap().to_string())
            .collect();
        if with_events && got_events != expected_events {
            diffs.push(format!(
                "events: expected {expected_events:?}, got {got_events:?}"
            ));
        }
        if !diffs.is_empty() {
            return Err(format!(
                "step {index} (t_ms={t}, op={op}{}): {}",
                call.map(|c| format!(", call={c}")).unwrap_or_default(),
                diffs.join("; ")
            ));
        }
    }
    // Permits still held (calls that never complete) are dropped here; that must not panic.
    drop(permits);
    Ok(())
}

fn check_invalid(case: &Value) -> Result<(), String> {
    let clock = ManualClock::at_epoch_millis(ORIGIN_MS);
    match builder(&case["config"], &clock).build() {
        Ok(_) => Err("config accepted, expected it to be rejected".into()),
        Err(e) => {
            let mut diffs = Vec::new();
            if e.to_string() != case["expect_error"].as_str().unwrap() {
                diffs.push(format!(
                    "message: expected {:?}, got {:?}",
                    case["expect_error"].as_str().unwrap(),
                    e.to_string()
                ));
            }
            if Some(e.setting()) != case["invalid_property"].as_str() {
                diffs.push(format!(
                    "setting: expected {}, got {}",
                    case["invalid_property"],
                    e.setting()
                ));
            }
            if diffs.is_empty() {
                Ok(())
            } else {
                Err(diffs.join("; "))
            }
        }
    }
}

#[test]
fn every_conformance_case_reproduces_resilience4j() {
    let dir = cases_dir();
    let files = breaker_files(&dir);
    assert!(!files.is_empty(), "no cases in {}", dir.display());
    let mut failures = Vec::new();
    let (mut valid, mut invalid, mut exact, mut exact_differs) = (0, 0, 0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let case: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let name = case["name"].as_str().unwrap_or("?").to_string();
        let r = if case.get("expect_error").is_some() {
            invalid += 1;
            check_invalid(&case)
        } else {
            valid += 1;
            let late = late_call_in_half_open(&case);
            let modes: &[bool] = if late {
                exact += 1;
                // Resilience4j's own results need its rule; the default must differ somewhere
                // (else the vector would not have needed it).
                if replay(&case, true, false).is_err() {
                    exact_differs += 1;
                }
                &[true]
            } else {
                &[false, true]
            };
            modes.iter().try_for_each(|&mode| {
                let label = if mode { "exact mode" } else { "default mode" };
                replay(&case, true, mode)
                    .map_err(|e| format!("{label}: {e}"))
                    .and_then(|()| {
                        replay(&case, false, mode)
                            .map_err(|e| format!("{label}, without subscribers: {e}"))
                    })
            })
        };
        if let Err(e) = r {
            failures.push(format!("{name}: {e}"));
        }
    }
    eprintln!(
        "replayed {valid} scenarios and {invalid} invalid configs from {}; {exact} scenarios \
         complete a late call in HALF_OPEN and ran in exact Resilience4j mode ({exact_differs} \
         of them give other results in the default mode), the rest in both modes",
        dir.display()
    );
    if std::env::var_os("BREAKER_CONFORMANCE_DIR").is_none() {
        // The shipped vectors exercise both modes.
        assert!(
            exact > 0 && exact < valid,
            "{exact} of {valid} in exact mode"
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from Resilience4j:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn the_repository_holds_every_shipped_vector() {
    if std::env::var_os("BREAKER_CONFORMANCE_DIR").is_some() {
        return;
    }
    let files = breaker_files(&cases_dir());
    // 65 hand-written + 300 generated scenarios, 18 invalid configs.
    assert_eq!(files.len(), 365 + 18);
    let _ = Duration::ZERO;
}
