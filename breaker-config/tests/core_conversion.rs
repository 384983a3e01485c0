//! Every resolved fixture instance passes breaker-core's builder, and the core config holds
//! the resolved values.

use std::path::{Path, PathBuf};

use breaker_config::{Format, Loader};
use breaker_core::{ErrorCatalog, IntervalFunction};
use serde_json::Value;

#[test]
fn every_shared_fixture_instance_builds_in_core() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shared");
    let mut built = 0;
    for entry in std::fs::read_dir(&dir).expect("fixtures") {
        let path = entry.expect("entry").path();
        let p = path.to_string_lossy();
        if !p.ends_with(".expected.json") || p.ends_with(".modules.expected.json") {
            continue;
        }
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let files: Vec<PathBuf> = expected["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| dir.join(f.as_str().unwrap()))
            .collect();
        let loaded = Loader::new()
            .env(Default::default())
            .load_files(&files)
            .expect("loads");
        for (name, i) in &loaded.config.instances {
            let core = i
                .to_core_config(&ErrorCatalog::new())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let want = &expected["instances"][name];
            assert_eq!(
                core.sliding_window_size() as i64,
                want["slidingWindowSize"].as_i64().unwrap()
            );
            assert_eq!(
                core.minimum_number_of_calls() as i64,
                want["minimumNumberOfCalls"].as_i64().unwrap()
            );
            assert_eq!(
                core.wait_duration_in_open_state().as_millis() as i64,
                want["waitDurationInOpenState"].as_i64().unwrap()
            );
            assert_eq!(
                core.failure_rate_threshold() as f64,
                want["failureRateThreshold"].as_f64().unwrap()
            );
            let names = |v: &Value| -> Vec<String> {
                v.as_array()
                    .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default()
            };
            assert_eq!(
                core.record_exceptions(),
                names(&want["recordExceptions"]).as_slice()
            );
            assert_eq!(
                core.ignore_exceptions(),
                names(&want["ignoreExceptions"]).as_slice()
            );
            built += 1;
        }
    }
    assert!(built >= 30, "{built}");
}

#[test]
fn wait_policies_reach_core() {
    let yaml = "resilience4j.circuitbreaker.instances:\n  e: { waitDurationInOpenState: 1s, enableExponentialBackoff: true, exponentialBackoffMultiplier: 2, exponentialMaxWaitDurationInOpenState: 5s }\n  r: { waitDurationInOpenState: 2s, enableRandomizedWait: true, randomizedWaitFactor: 0.25 }\n";
    let l = Loader::new()
        .env(Default::default())
        .load_str("w.yml", Format::Yaml, yaml)
        .unwrap();
    let e = l.config.instances["e"]
        .to_core_config(&ErrorCatalog::new())
        .unwrap();
    assert_eq!(
        e.wait_interval_function_in_open_state(),
        &IntervalFunction::Exponential {
            initial_millis: 1000,
            multiplier: 2.0,
            max_millis: Some(5000)
        }
    );
    let r = l.config.instances["r"]
        .to_core_config(&ErrorCatalog::new())
        .unwrap();
    assert_eq!(
        r.wait_interval_function_in_open_state(),
        &IntervalFunction::Randomized {
            interval_millis: 2000,
            randomization_factor: 0.25
        }
    );
}

#[test]
fn core_rejections_become_instance_errors() {
    // Spring accepts a multiplier of 0.5 (> 0); Resilience4j's IntervalFunction needs >= 1.0.
    let yaml = "resilience4j.circuitbreaker.instances.a:\n  waitDurationInOpenState: 1s\n  enableExponentialBackoff: true\n  exponentialBackoffMultiplier: 0.5\n";
    let l = Loader::new()
        .env(Default::default())
        .load_str("m.yml", Format::Yaml, yaml)
        .unwrap();
    let e = &l.config.errors["a"];
    assert_eq!(e.message, "Illegal argument multiplier: 0.5");
    assert_eq!(e.origin.as_ref().map(|o| (o.line, o.column)), Some((2, 28)));
}

#[test]
fn unclaimed_names_are_reported_with_positions() {
    let yaml = "resilience4j.circuitbreaker.instances.a:\n  recordExceptions:\n    - java.io.IOException\n    - com.example.Unknown\n";
    let l = Loader::new()
        .env(Default::default())
        .load_str("u.yml", Format::Yaml, yaml)
        .unwrap();
    #[derive(Debug)]
    struct Io;
    let catalog = ErrorCatalog::new().register_type::<Io>("java.io.IOException");
    let un = l.config.unclaimed_in_catalog(&catalog);
    assert_eq!(un.len(), 1);
    assert_eq!(un[0].name, "com.example.Unknown");
    assert_eq!(
        un[0].to_string(),
        "u.yml:4:7: circuit breaker 'a': recordExceptions names 'com.example.Unknown', which no registered error type claims"
    );
}

/// Every module instance of every shared fixture converts into breaker-core's config, and
/// the core config holds the values of `NN.modules.expected.json`.
#[test]
fn every_shared_fixture_module_instance_builds_in_core() {
    use std::time::Duration;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shared");
    let ms = |v: &Value| Duration::from_nanos((v.as_f64().unwrap() * 1e6).round() as u64);
    let mut built = 0;
    for entry in std::fs::read_dir(&dir).expect("fixtures") {
        let path = entry.expect("entry").path();
        if !path.to_string_lossy().ends_with(".modules.expected.json") {
            continue;
        }
        let want: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let files: Vec<PathBuf> = want["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| dir.join(f.as_str().unwrap()))
            .collect();
        let loaded = Loader::new()
            .env(Default::default())
            .load_files(&files)
            .unwrap();
        let m = &loaded.modules;
        for (name, r) in &m.retry.instances {
            let c = r.to_core_config(&ErrorCatalog::new()).unwrap();
            let w = &want["retry"]["instances"][name];
            assert_eq!(
                i64::from(c.max_attempts()),
                w["maxAttempts"].as_i64().unwrap()
            );
            assert_eq!(
                c.fail_after_max_attempts(),
                w["failAfterMaxAttempts"] == true
            );
            if let Some(wait) = w["waitDuration"].as_f64() {
                assert_eq!(c.wait_duration(), Some(ms(&Value::from(wait))), "{name}");
            }
            built += 1;
        }
        for (name, r) in &m.time_limiter.instances {
            let c = r.to_core_config().unwrap();
            let w = &want["timelimiter"]["instances"][name];
            assert_eq!(c.timeout_duration(), ms(&w["timeoutDuration"]));
            assert_eq!(c.cancel_running_future(), w["cancelRunningFuture"] == true);
            built += 1;
        }
        for (name, r) in &m.bulkhead.instances {
            let c = r.to_core_config().unwrap();
            let w = &want["bulkhead"]["instances"][name];
            assert_eq!(
                i64::from(c.max_concurrent_calls()),
                w["maxConcurrentCalls"].as_i64().unwrap()
            );
            assert_eq!(c.max_wait_duration(), ms(&w["maxWaitDuration"]));
            built += 1;
        }
        for (name, r) in &m.thread_pool_bulkhead.instances {
            let c = r.to_core_config().unwrap();
            let w = &want["threadpoolbulkhead"]["instances"][name];
            if let Some(max) = w["maxThreadPoolSize"].as_i64() {
                assert_eq!(i64::from(c.max_thread_pool_size()), max);
            }
            if let Some(core) = w["coreThreadPoolSize"].as_i64() {
                assert_eq!(i64::from(c.core_thread_pool_size()), core);
            }
            assert_eq!(
                i64::from(c.queue_capacity()),
                w["queueCapacity"].as_i64().unwrap()
            );
            assert_eq!(c.keep_alive_duration(), ms(&w["keepAliveDuration"]));
            built += 1;
        }
        for (name, r) in &m.rate_limiter.instances {
            let c = r.to_core_config().unwrap();
            let w = &want["ratelimiter"]["instances"][name];
            assert_eq!(
                i64::from(c.limit_for_period()),
                w["limitForPeriod"].as_i64().unwrap()
            );
            assert_eq!(c.limit_refresh_period(), ms(&w["limitRefreshPeriod"]));
            assert_eq!(c.timeout_duration(), ms(&w["timeoutDuration"]));
            built += 1;
        }
    }
    assert!(built >= 70, "only {built} module instances");
}

/// Configs built for the module registries run on the clock given (a `ManualClock` in tests).
#[test]
fn module_configs_take_the_clock_given() {
    use std::sync::Arc;
    let yaml = "
resilience4j.ratelimiter.instances.api: { limitForPeriod: 1, limitRefreshPeriod: 1s }
resilience4j.retry.instances.api: { maxAttempts: 2 }
";
    let loaded = Loader::new()
        .env(Default::default())
        .load_str("application.yml", Format::Yaml, yaml)
        .unwrap();
    let clock: Arc<dyn breaker_core::Clock> = Arc::new(breaker_core::ManualClock::at_epoch_millis(
        1_700_000_000_000,
    ));
    let c = breaker_config::modules::module_core_configs_with_clock(
        &loaded,
        &ErrorCatalog::new(),
        Some(&clock),
    )
    .unwrap();
    let (_, limiter) = &c.rate_limiter.instances[0];
    assert!(Arc::ptr_eq(limiter.clock(), &clock));
    assert!(Arc::ptr_eq(c.retry.instances[0].1.clock(), &clock));
    assert!(Arc::ptr_eq(c.retry.default_config.clock(), &clock));
    // Without one, the system clock.
    let c = breaker_config::modules::module_core_configs(&loaded, &ErrorCatalog::new()).unwrap();
    assert!(!Arc::ptr_eq(c.rate_limiter.instances[0].1.clock(), &clock));
}
