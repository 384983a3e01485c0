//! Live reload: all or nothing, state kept, changes reported, file watching through atomic
//! saves and ConfigMap-style symlink swaps.

use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use breaker_config::{LiveConfig, Loader, RegistryFromFile, RegistryLoadError, ReloadEvent};
use breaker_core::{ErrorCatalog, Registry, State};

const V1: &str = "
resilience4j:
  circuitbreaker:
    configs:
      default:
        slidingWindowSize: 2
        minimumNumberOfCalls: 2
        waitDurationInOpenState: 5s
    instances:
      paymentService:
        failure-rate-threshold: 50
      inventory:
        baseConfig: default
";

fn live(dir: &Path, text: &str) -> LiveConfig {
    let path = dir.join("application.yml");
    fs::write(&path, text).unwrap();
    LiveConfig::load(
        &[&path],
        Loader::new().env(Default::default()),
        ErrorCatalog::new(),
    )
    .unwrap()
}

fn trip(registry: &Registry, name: &str) {
    let cb = registry.circuit_breaker(name);
    for _ in 0..2 {
        cb.try_acquire_permission().unwrap().on_error();
    }
    assert_eq!(cb.state(), State::Open);
}

#[test]
fn reload_applies_new_values_and_keeps_state() {
    let dir = tempfile::tempdir().unwrap();
    let live = live(dir.path(), V1);
    let registry = live.registry().clone();
    let cached = registry.circuit_breaker("paymentService");
    assert_eq!(
        cached.config().wait_duration_in_open_state(),
        Duration::from_secs(5)
    );
    trip(&registry, "paymentService");

    fs::write(dir.path().join("application.yml"), V1.replace("5s", "2s")).unwrap();
    let report = live.reload().unwrap();

    // The handle taken before the reload sees the new wait; the breaker is still OPEN with
    // the window that tripped it.
    assert_eq!(
        cached.config().wait_duration_in_open_state(),
        Duration::from_secs(2)
    );
    assert_eq!(cached.state(), State::Open);
    assert_eq!(cached.metrics().number_of_failed_calls, 2);
    let changed: Vec<String> = report.changes.iter().map(ToString::to_string).collect();
    assert!(
        changed.contains(&"paymentService.waitDurationInOpenState: 5000 -> 2000".to_string()),
        "{changed:?}"
    );
    assert!(changed.contains(&"inventory.waitDurationInOpenState: 5000 -> 2000".to_string()));
    assert!(changed.contains(&"default.waitDurationInOpenState: 5000 -> 2000".to_string()));
    assert!(live.last_reload_error().is_none());
}

#[test]
fn an_invalid_file_changes_nothing_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let live = live(dir.path(), V1);
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let e = events.clone();
    live.on_reload(move |ev| {
        e.lock().unwrap().push(match ev {
            ReloadEvent::Applied(r) => format!("applied: {r}"),
            ReloadEvent::Failed(err) => format!("failed: {err}"),
        })
    });
    // One good change (inventory) and one bad one (paymentService): all or nothing.
    let bad = V1
        .replace("failure-rate-threshold: 50", "failure-rate-threshold: 150")
        .replace(
            "baseConfig: default",
            "baseConfig: default\n        slidingWindowSize: 7",
        );
    fs::write(dir.path().join("application.yml"), bad).unwrap();
    let err = live.reload().unwrap_err();
    let RegistryLoadError::Invalid(errors) = &err else {
        panic!("expected invalid settings, got {err}")
    };
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].message,
        "failureRateThreshold must be between 1 and 100."
    );
    assert!(err.to_string().contains("application.yml:"), "{err}");

    let registry = live.registry();
    assert_eq!(
        registry
            .circuit_breaker("paymentService")
            .config()
            .failure_rate_threshold(),
        50.0
    );
    assert_eq!(
        registry
            .circuit_breaker("inventory")
            .config()
            .sliding_window_size(),
        2
    );
    assert_eq!(live.last_reload_error(), Some(err));
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 1);
    assert!(
        events[0].starts_with("failed: 1 invalid circuit-breaker setting"),
        "{events:?}"
    );

    // Fixing the file clears the error.
    fs::write(dir.path().join("application.yml"), V1).unwrap();
    assert!(live.reload().unwrap().is_empty());
    assert!(live.last_reload_error().is_none());
}

#[test]
fn unchanged_files_are_not_reloaded() {
    let dir = tempfile::tempdir().unwrap();
    let live = live(dir.path(), V1);
    assert_eq!(live.reload_if_changed().unwrap(), None);
    fs::write(
        dir.path().join("application.yml"),
        format!("{V1}\n# a comment\n"),
    )
    .unwrap();
    let report = live.reload_if_changed().unwrap().expect("content changed");
    assert!(report.is_empty(), "a comment changes no setting: {report}");
}

#[test]
fn instances_added_and_removed_by_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let live = live(dir.path(), V1);
    let text = V1.replace(
        "      inventory:\n        baseConfig: default\n",
        "      shipping:\n        slidingWindowSize: 9\n",
    );
    fs::write(dir.path().join("application.yml"), text).unwrap();
    let report = live.reload().unwrap();
    assert_eq!(report.added, vec!["shipping".to_string()]);
    assert_eq!(report.removed, vec!["inventory".to_string()]);
    let registry = live.registry();
    assert_eq!(
        registry
            .find("shipping")
            .unwrap()
            .config()
            .sliding_window_size(),
        9
    );
    // A removed instance keeps running with the default config.
    assert_eq!(
        registry
            .find("inventory")
            .unwrap()
            .config()
            .sliding_window_size(),
        2
    );
}

fn wait_until(mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn the_watcher_sees_an_atomic_rename_save() {
    let dir = tempfile::tempdir().unwrap();
    let live = live(dir.path(), V1);
    let _watch = live.watch(Duration::from_millis(50)).unwrap();
    let cb = live.registry().circuit_breaker("paymentService");
    // Save the way editors do: write a temporary file, rename it over the original.
    let tmp = dir.path().join(".application.yml.swp");
    fs::write(&tmp, V1.replace("5s", "3s")).unwrap();
    fs::rename(&tmp, dir.path().join("application.yml")).unwrap();
    assert!(
        wait_until(|| cb.config().wait_duration_in_open_state() == Duration::from_secs(3)),
        "the watcher never applied the saved file"
    );
}

#[cfg(unix)]
#[test]
fn the_watcher_sees_a_configmap_symlink_swap() {
    use std::os::unix::fs::symlink;
    // Kubernetes lays a ConfigMap out as application.yml -> ..data/application.yml and
    // ..data -> ..2026_11_29_v1; an update creates a new version directory and renames a new
    // ..data symlink over the old one.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("v1")).unwrap();
    fs::write(d.join("v1/application.yml"), V1).unwrap();
    symlink("v1", d.join("..data")).unwrap();
    symlink("..data/application.yml", d.join("application.yml")).unwrap();
    let live = LiveConfig::load(
        &[d.join("application.yml")],
        Loader::new().env(Default::default()),
        ErrorCatalog::new(),
    )
    .unwrap();
    let _watch = live.watch(Duration::from_millis(50)).unwrap();
    let cb = live.registry().circuit_breaker("paymentService");

    fs::create_dir(d.join("v2")).unwrap();
    fs::write(d.join("v2/application.yml"), V1.replace("5s", "4s")).unwrap();
    symlink("v2", d.join("..data_tmp")).unwrap();
    fs::rename(d.join("..data_tmp"), d.join("..data")).unwrap();
    assert!(
        wait_until(|| cb.config().wait_duration_in_open_state() == Duration::from_secs(4)),
        "the watcher never applied the swapped ConfigMap"
    );
}

#[test]
fn registry_from_file_creates_instances_eagerly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    fs::write(&path, V1).unwrap();
    let registry = Registry::from_file(&path).unwrap();
    let names: Vec<String> = registry
        .all()
        .iter()
        .map(|b| b.name().to_string())
        .collect();
    assert_eq!(names, ["inventory", "paymentService"]);
    // A name not listed gets configs.default.
    let other = registry.circuit_breaker("annotatedElsewhere");
    assert_eq!(other.config().sliding_window_size(), 2);
    assert_eq!(
        other.config().wait_duration_in_open_state(),
        Duration::from_secs(5)
    );

    let missing = Registry::from_file(dir.path().join("nope.yml")).unwrap_err();
    assert!(matches!(missing, RegistryLoadError::Load(_)), "{missing}");
}

#[test]
fn event_consumer_buffer_size_reaches_the_registry() {
    let registry = Registry::from_yaml_str(
        "resilience4j.circuitbreaker.instances.small:\n  eventConsumerBufferSize: 3\n",
    )
    .unwrap();
    registry.enable_event_buffers();
    let cb = registry.circuit_breaker("small");
    for _ in 0..5 {
        cb.try_acquire_permission().unwrap().on_success();
    }
    assert_eq!(registry.recent_events("small").unwrap().len(), 3);
}

const WITH_EXCEPTIONS: &str = "
resilience4j.circuitbreaker:
  configs:
    default:
      recordExceptions:
        - java.io.IOException
  instances:
    a: { minimumNumberOfCalls: 10 }
    b:
      ignoreExceptions: com.acme.LegacySoapFault
";

#[derive(Debug)]
enum AppError {
    Io,
    Parse,
}

#[test]
fn exception_names_nothing_claims_are_refused_with_where_they_are() {
    let err = Registry::from_yaml_str(WITH_EXCEPTIONS).unwrap_err();
    let RegistryLoadError::UnclaimedExceptionNames(names) = &err else {
        panic!("expected unclaimed names, got {err}")
    };
    // java.io.IOException is inherited by a, b and the default config: one place in the file.
    let text = err.to_string();
    assert!(
        text.starts_with(
            "2 exception names in recordExceptions / ignoreExceptions answer to no Rust error"
        ),
        "{text}"
    );
    assert!(
        text.contains("application.yml:6:11: 'java.io.IOException'"),
        "{text}"
    );
    assert!(
        text.contains("application.yml:10:25: 'com.acme.LegacySoapFault'"),
        "{text}"
    );
    assert!(names.len() >= 2);
}

#[test]
fn a_catalog_binds_the_names_and_acknowledge_accepts_java_only_ones() {
    let catalog = ErrorCatalog::new()
        .register("java.io.IOException", |e: &AppError| {
            matches!(e, AppError::Io)
        })
        .acknowledge("com.acme.LegacySoapFault");
    let loaded = Loader::new()
        .env(Default::default())
        .load_str(
            "application.yml",
            breaker_config::Format::Yaml,
            WITH_EXCEPTIONS,
        )
        .unwrap();
    let registry = breaker_config::registry_from_loaded(&loaded, &catalog).unwrap();
    let a = registry.find("a").unwrap();
    // recordExceptions lists IOException only: it is a failure, anything else a success.
    assert_eq!(
        a.classify::<(), _>(&Err(AppError::Io)),
        breaker_core::Outcome::Failure
    );
    assert_eq!(
        a.classify::<(), _>(&Err(AppError::Parse)),
        breaker_core::Outcome::Success
    );
}

#[test]
fn a_bad_value_in_another_section_keeps_every_section() {
    let v1 = format!(
        "{V1}
  retry:
    instances:
      paymentService:
        maxAttempts: 4
  ratelimiter:
    instances:
      paymentService:
        limitForPeriod: 10
"
    );
    let dir = tempfile::tempdir().unwrap();
    let live = live(dir.path(), &v1);
    let attempts = |live: &LiveConfig| {
        live.modules().retry.instances["paymentService"]
            .max_attempts
            .value
    };
    assert_eq!(attempts(&live), 4);
    // Listed instances are created eagerly in the module registries, as Spring does.
    let retry = live
        .module_registries()
        .retry
        .find("paymentService")
        .expect("created eagerly");
    let limiter = live
        .module_registries()
        .rate_limiter
        .find("paymentService")
        .expect("created eagerly");
    assert_eq!(retry.config().max_attempts(), 4);
    assert_eq!(limiter.config().limit_for_period(), 10);

    // A good breaker change and a good rate-limiter change, with a retry value Spring refuses:
    // nothing is applied.
    let bad = v1
        .replace("failure-rate-threshold: 50", "failure-rate-threshold: 60")
        .replace("limitForPeriod: 10", "limitForPeriod: 20")
        .replace("maxAttempts: 4", "maxAttempts: 0");
    fs::write(dir.path().join("application.yml"), &bad).unwrap();
    let err = live.reload().unwrap_err();
    let RegistryLoadError::Invalid(errors) = &err else {
        panic!("expected invalid settings, got {err}")
    };
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].message,
        "maxAttempts must be greater than or equal to 1."
    );
    assert_eq!(
        errors[0].key,
        "resilience4j.retry.instances.paymentService.maxAttempts"
    );
    assert!(err.to_string().starts_with("1 invalid setting:"), "{err}");
    let cb = live.registry().circuit_breaker("paymentService");
    assert_eq!(cb.config().failure_rate_threshold(), 50.0);
    assert_eq!(attempts(&live), 4);
    let modules = live.modules();
    assert_eq!(
        modules.rate_limiter.instances["paymentService"]
            .limit_for_period
            .value,
        10
    );
    assert_eq!(retry.config().max_attempts(), 4);
    assert_eq!(limiter.config().limit_for_period(), 10);

    // Fixed: everything applies at once, and the report names the module settings.
    let good = bad.replace("maxAttempts: 0", "maxAttempts: 5");
    fs::write(dir.path().join("application.yml"), good).unwrap();
    let report = live.reload().unwrap();
    let changed: Vec<String> = report.changes.iter().map(ToString::to_string).collect();
    for change in [
        "retry:paymentService.maxAttempts: 4 -> 5",
        "ratelimiter:paymentService.limitForPeriod: 10 -> 20",
        "paymentService.failureRateThreshold: 50.0 -> 60.0",
    ] {
        assert!(changed.contains(&change.to_string()), "{changed:?}");
    }
    assert_eq!(attempts(&live), 5);
    // The handles taken before the reloads see the new configs.
    assert_eq!(retry.config().max_attempts(), 5);
    assert_eq!(limiter.config().limit_for_period(), 20);
}

#[test]
fn module_registries_hold_every_section_of_a_shared_file() {
    // 02: retries with a shared config, time limiters, bulkheads, thread-pool bulkheads and
    // rate limiters with configs.default (values from 02.modules.expected.json).
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/shared/02_r4j_boot3_testsuite_backends_alias.yml");
    let catalog = [
        "java.io.IOException",
        "feign.FeignException",
        "java.lang.IllegalArgumentException",
        "io.github.resilience4j.springboot3.circuitbreaker.IgnoredException",
        "io.github.resilience4j.springboot3.circuitbreaker.RecordedException",
    ]
    .into_iter()
    .fold(ErrorCatalog::new(), ErrorCatalog::acknowledge);
    let live = LiveConfig::load(&[&path], Loader::new().env(Default::default()), catalog).unwrap();
    let m = live.module_registries();
    let c = m.retry.find("retryBackendC").unwrap().config();
    assert_eq!(c.max_attempts(), 3);
    assert_eq!(
        c.interval_function(),
        Some(&breaker_core::IntervalFunction::Exponential {
            initial_millis: 100,
            multiplier: 2.0,
            max_millis: Some(222)
        })
    );
    assert_eq!(c.retry_exceptions(), ["java.lang.IllegalArgumentException"]);
    assert_eq!(
        m.retry
            .find("retryBackendA")
            .unwrap()
            .config()
            .max_attempts(),
        4
    );
    let t = m.time_limiter.find("backendA").unwrap().config();
    assert_eq!(t.timeout_duration(), Duration::from_secs(5));
    assert!(!t.cancel_running_future());
    let b = m.bulkhead.find("backendA").unwrap().config();
    assert_eq!(b.max_concurrent_calls(), 1);
    assert_eq!(b.max_wait_duration(), Duration::from_millis(10));
    let p = m.thread_pool_bulkhead.find("backendD").unwrap().config();
    let sizes = (
        p.max_thread_pool_size(),
        p.core_thread_pool_size(),
        p.queue_capacity(),
    );
    assert_eq!(sizes, (1, 1, 1));
    assert_eq!(p.keep_alive_duration(), Duration::from_secs(1));
    let r = m.rate_limiter.find("backendB").unwrap().config();
    assert_eq!(r.limit_for_period(), 100);
    assert_eq!(r.limit_refresh_period(), Duration::from_millis(500));
    assert_eq!(r.timeout_duration(), Duration::from_secs(3));
    // A name not listed gets configs.default.
    let unlisted = m.rate_limiter.rate_limiter("unlisted").config();
    assert_eq!(unlisted.limit_for_period(), 10);
    assert_eq!(
        m.bulkhead
            .bulkhead("unlisted")
            .config()
            .max_concurrent_calls(),
        2
    );
}

#[test]
fn an_unclaimed_retry_exception_name_is_refused_with_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    let text = "resilience4j.retry.instances.a:\n  retryExceptions: [java.io.IOException]\n";
    fs::write(&path, text).unwrap();
    let loader = Loader::new().env(Default::default());
    let err = LiveConfig::load(&[&path], loader, ErrorCatalog::new()).unwrap_err();
    let RegistryLoadError::UnclaimedExceptionNames(names) = &err else {
        panic!("expected unclaimed names, got {err}")
    };
    assert_eq!(names.len(), 1);
    assert_eq!(
        names[0].to_string(),
        format!(
            "{}:2:21: retry 'a': retryExceptions names 'java.io.IOException', which no registered error type claims",
            path.display()
        )
    );
}
