//! Checks that the bulkhead, thread-pool-bulkhead and rate-limiter config builders reject
//! every invalid config of `resilience4j-invalid-modules/` (recorded from the real
//! Resilience4j builders) with Resilience4j's message, naming the invalid property. The
//! folder's `retry_*` and `timelimiter_*` files belong to those modules' runner.
//!
//! Set `BREAKER_CONFORMANCE_MODULES_DIR` to a folder laid out like
//! `tests/data/conformance` (one subfolder per module) to check another set.

use std::path::{Path, PathBuf};

use breaker_core::bulkhead::{BulkheadConfig, ThreadPoolBulkheadConfig};
use breaker_core::ratelimiter::RateLimiterConfig;
use breaker_core::{ConfigError, SignedDuration};
use serde_json::Value;

fn invalid_dir() -> PathBuf {
    match std::env::var_os("BREAKER_CONFORMANCE_MODULES_DIR") {
        Some(d) => PathBuf::from(d).join("resilience4j-invalid-modules"),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/conformance/resilience4j-invalid-modules"),
    }
}

/// A duration in ms, or `None` for JSON `null` (Java's `null`).
fn ms(v: &Value) -> Option<SignedDuration> {
    v.as_i64().map(SignedDuration::from_millis)
}

fn build(module: &str, config: &Value) -> Result<(), ConfigError> {
    let entries = config.as_object().expect("config is an object");
    match module {
        "bulkhead" => {
            let mut b = BulkheadConfig::builder();
            for (k, v) in entries {
                b = match k.as_str() {
                    "maxConcurrentCalls" => b.max_concurrent_calls(v.as_i64().unwrap()),
                    "maxWaitDuration" => b.max_wait_duration(ms(v).unwrap()),
                    "fairCallHandlingStrategyEnabled" => {
                        b.fair_call_handling_strategy_enabled(v.as_bool().unwrap())
                    }
                    other => panic!("unknown bulkhead key {other}"),
                };
            }
            b.build().map(drop)
        }
        "threadpoolbulkhead" => {
            let mut b = ThreadPoolBulkheadConfig::builder();
            for (k, v) in entries {
                b = match k.as_str() {
                    "maxThreadPoolSize" => b.max_thread_pool_size(v.as_i64().unwrap()),
                    "coreThreadPoolSize" => b.core_thread_pool_size(v.as_i64().unwrap()),
                    "queueCapacity" => b.queue_capacity(v.as_i64().unwrap()),
                    "keepAliveDuration" => b.keep_alive_duration(ms(v).unwrap()),
                    other => panic!("unknown thread-pool bulkhead key {other}"),
                };
            }
            b.build().map(drop)
        }
        "ratelimiter" => {
            let mut b = RateLimiterConfig::builder();
            for (k, v) in entries {
                b = match k.as_str() {
                    "limitForPeriod" => b.limit_for_period(v.as_i64().unwrap()),
                    "limitRefreshPeriod" => b.limit_refresh_period(ms(v)),
                    "timeoutDuration" => b.timeout_duration(ms(v)),
                    other => panic!("unknown rate-limiter key {other}"),
                };
            }
            b.build().map(drop)
        }
        other => unreachable!("{other}"),
    }
}

#[test]
fn every_invalid_bulkhead_and_rate_limiter_config_is_rejected_as_in_resilience4j() {
    let dir = invalid_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut checked = std::collections::BTreeMap::<String, usize>::new();
    for f in &files {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let module = case["module"].as_str().unwrap();
        if !matches!(module, "bulkhead" | "threadpoolbulkhead" | "ratelimiter") {
            continue;
        }
        *checked.entry(module.to_string()).or_default() += 1;
        let name = case["name"].as_str().unwrap();
        match build(module, &case["config"]) {
            Ok(()) => failures.push(format!("{name}: accepted")),
            Err(e) => {
                let expected = case["expect_error"].as_str().unwrap();
                if e.to_string() != expected {
                    failures.push(format!(
                        "{name}: message {:?}, expected {expected:?}",
                        e.to_string()
                    ));
                }
                if Some(e.setting()) != case["invalid_property"].as_str() {
                    failures.push(format!(
                        "{name}: setting {}, expected {}",
                        e.setting(),
                        case["invalid_property"]
                    ));
                }
                // Java's null becomes a NullPointerException, reported with the value "null".
                let null = case["expect_exception"] == "NullPointerException";
                if null != (e.value() == "null") {
                    failures.push(format!(
                        "{name}: value {:?} for {}",
                        e.value(),
                        case["expect_exception"]
                    ));
                }
            }
        }
    }
    eprintln!("checked {checked:?} invalid configs from {}", dir.display());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if std::env::var_os("BREAKER_CONFORMANCE_MODULES_DIR").is_none() {
        let counts: Vec<_> = checked.iter().map(|(m, n)| (m.as_str(), *n)).collect();
        assert_eq!(
            counts,
            [
                ("bulkhead", 5),
                ("ratelimiter", 10),
                ("threadpoolbulkhead", 5)
            ]
        );
    }
}
