//! Checks that the bulkhead, thread-pool-bulkhead and rate-limiter config builders reject
//! every invalid config of `resilience4j-invalid-modules/` (recorded from the real
//! Resilience4j builders) with Resilience4j's message, naming the invalid property. The
//! folder's `retry_*` and `timelimiter_*` files belong to those modules' runners.
//!
//! Set `BREAKER_CONFORMANCE_MODULES_DIR` to a folder laid out like
//! `tests/data/conformance` (one subfolder per module) to check another set.

mod common;

use breaker_core::bulkhead::{BulkheadConfig, ThreadPoolBulkheadConfig};
use breaker_core::ratelimiter::RateLimiterConfig;
use breaker_core::{ConfigError, SignedDuration};
use serde_json::Value;

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
    let dir = common::modules_dir().join("resilience4j-invalid-modules");
    let files = common::json_files(&dir, "");
    let mut failures = Vec::new();
    let mut checked = std::collections::BTreeMap::<String, usize>::new();
    for f in &files {
        let case = common::load(f);
        let module = case["module"].as_str().unwrap();
        if !matches!(module, "bulkhead" | "threadpoolbulkhead" | "ratelimiter") {
            continue;
        }
        *checked.entry(module.to_string()).or_default() += 1;
        let name = case["name"].as_str().unwrap();
        match build(module, &case["config"]) {
            Ok(()) => failures.push(format!("{name}: accepted")),
            Err(e) => {
                // `Display` is the message the vectors record.
                assert_eq!(e.to_string(), e.message());
                for d in common::invalid_config_diffs(&case, &e, true) {
                    failures.push(format!("{name}: {d}"));
                }
            }
        }
    }
    eprintln!("checked {checked:?} invalid configs from {}", dir.display());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if !common::modules_dir_overridden() {
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
