//! Replays the bulkhead conformance vectors (recorded from the real Resilience4j
//! `SemaphoreBulkhead`) and checks every step: permitted, errors with their messages, events
//! in order, both metrics, and whether a `changeConfig` is still waiting.
//!
//! The vectors live in `tests/data/conformance/resilience4j-bulkhead/` at the repository
//! root. Set `BREAKER_CONFORMANCE_MODULES_DIR` to a folder laid out like it (one subfolder
//! per module) to replay another set.
//!
//! A vector that completes or releases a call holding no permit records Resilience4j's
//! over-release defect, which this crate fixes; it is replayed in exact Resilience4j mode.
//! The decision is made from the vector's own steps.

mod common;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use breaker_core::bulkhead::{Bulkhead, BulkheadConfig, BulkheadConfigBuilder, BulkheadPermit};
use breaker_core::{ManualClock, SignedDuration};
use serde_json::{json, Value};

use common::{
    compare, json_files, modules_dir, modules_dir_overridden, noop_waker, replay_module_vectors,
    step_outcome,
};

fn builder(config: &Value, clock: &ManualClock, exact: bool) -> BulkheadConfigBuilder {
    let mut b = BulkheadConfig::builder()
        .clock(Arc::new(clock.clone()))
        .exact_resilience4j(exact);
    for (k, v) in config.as_object().expect("config is an object") {
        b = match k.as_str() {
            "maxConcurrentCalls" => b.max_concurrent_calls(v.as_i64().unwrap()),
            "maxWaitDuration" => {
                b.max_wait_duration(SignedDuration::from_millis(v.as_i64().unwrap()))
            }
            "fairCallHandlingStrategyEnabled" => {
                b.fair_call_handling_strategy_enabled(v.as_bool().unwrap())
            }
            other => panic!("unknown config key {other}"),
        };
    }
    b
}

/// Whether the vector completes or releases a call that holds no permit (never admitted,
/// or already completed), which only Resilience4j's unguarded semaphore accepts.
fn needs_exact_mode(case: &Value) -> bool {
    let mut holding = HashSet::new();
    for s in case["steps"].as_array().unwrap() {
        let call = s["call"].as_u64();
        match s["op"].as_str().unwrap() {
            "acquire" | "acquireOrThrow" if s["expect"]["permitted"] == json!(true) => {
                holding.insert(call.unwrap());
            }
            "complete" | "release" if !holding.remove(&call.unwrap()) => return true,
            _ => {}
        }
    }
    false
}

fn replay(case: &Value, exact: bool) -> Result<(), String> {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let config = builder(&case["config"], &clock, exact)
        .build()
        .map_err(|e| format!("config rejected: {e}"))?;
    let bulkhead = Bulkhead::new("backendA", config);
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = events.clone();
    bulkhead.subscribe(move |e| sink.lock().unwrap().push(e.event_type.name().to_string()));
    let mut permits: HashMap<u64, BulkheadPermit<'_>> = HashMap::new();

    for (index, step) in case["steps"].as_array().unwrap().iter().enumerate() {
        clock.set_epoch_millis(1_700_000_000_000 + step["t_ms"].as_u64().unwrap());
        events.lock().unwrap().clear();
        let op = step["op"].as_str().unwrap();
        let expect = &step["expect"];
        let call = step["call"].as_u64();
        let mut diffs = Vec::new();
        let mut error: Option<Value> = None;
        let mut permitted = None;
        match op {
            "acquire" => {
                let r = bulkhead.try_acquire_permission();
                permitted = Some(r.is_ok());
                if let Ok(p) = r {
                    permits.insert(call.unwrap(), p);
                }
            }
            "acquireOrThrow" => {
                // maxWaitDuration is 0 in these vectors: the future resolves on its first poll.
                let fut = pin!(bulkhead.acquire_permission());
                let Poll::Ready(r) = fut.poll(&mut Context::from_waker(&noop_waker())) else {
                    return Err(format!("step {index}: acquire_permission waited"));
                };
                permitted = Some(r.is_ok());
                match r {
                    Ok(p) => {
                        permits.insert(call.unwrap(), p);
                    }
                    Err(e) => {
                        error = Some(
                            json!({"exception": "BulkheadFullException", "message": e.to_string()}),
                        )
                    }
                }
            }
            "complete" => match permits.remove(&call.unwrap()) {
                Some(p) => p.on_complete(),
                None => bulkhead.on_complete(),
            },
            "release" => match permits.remove(&call.unwrap()) {
                Some(p) => p.release(),
                None => bulkhead.release_permission(),
            },
            "changeConfig" => match builder(&step["config"], &clock, exact).build() {
                Ok(c) => bulkhead.change_config(c),
                Err(e) => {
                    error = Some(
                        json!({"exception": "IllegalArgumentException", "message": e.to_string()}),
                    )
                }
            },
            other => return Err(format!("step {index}: unknown op {other}")),
        }
        if expect["permitted"].as_bool() != permitted {
            diffs.push(format!(
                "permitted: expected {}, got {permitted:?}",
                expect["permitted"]
            ));
        }
        let expected_error = expect.get("error").cloned();
        if expected_error != error {
            diffs.push(format!("error: expected {expected_error:?}, got {error:?}"));
        }
        let got_events = json!(events.lock().unwrap().clone());
        compare(&mut diffs, "events", &expect["events"], &got_events);
        let m = bulkhead.metrics();
        let got_metrics = json!({
            "availableConcurrentCalls": m.available_concurrent_calls,
            "maxAllowedConcurrentCalls": m.max_allowed_concurrent_calls,
        });
        compare(&mut diffs, "metrics", &expect["metrics"], &got_metrics);
        let pending = bulkhead.is_config_change_pending();
        if expect["changeConfigPending"].as_bool().unwrap_or(false) != pending {
            diffs.push(format!(
                "changeConfigPending: expected {}, got {pending}",
                expect["changeConfigPending"]
            ));
        }
        step_outcome(index, step, op, call, &diffs)?;
    }
    // Calls still in flight: their permits are returned here.
    for (_, p) in permits.drain() {
        p.release();
    }
    Ok(())
}

#[test]
fn every_bulkhead_vector_reproduces_resilience4j() {
    replay_module_vectors(
        "resilience4j-bulkhead",
        "bulkhead",
        needs_exact_mode,
        replay,
    );
}

#[test]
fn the_repository_holds_every_shipped_bulkhead_vector() {
    if modules_dir_overridden() {
        return;
    }
    // 21 hand-written + 56 generated scenarios.
    assert_eq!(
        json_files(&modules_dir().join("resilience4j-bulkhead"), "").len(),
        77
    );
}
