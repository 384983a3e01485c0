//! Issue 23 item 4: what a porter needs to hear. Each input of the issue is a test; the
//! expected values come from Resilience4j's Spring layer (`Common*ConfigurationProperties`)
//! and Spring Boot's binder.

use breaker_config::modules::RetryInterval;
use breaker_config::{ConfigError, Format, Loaded, Loader};
use breaker_core::IntervalFunction;

fn load(yaml: &str) -> Loaded {
    Loader::new()
        .env(Default::default())
        .load_str("application.yml", Format::Yaml, yaml)
        .unwrap()
}

fn error_at<'a>(l: &'a Loaded, key: &str) -> &'a ConfigError {
    l.errors()
        .into_iter()
        .find(|e| e.key == key)
        .unwrap_or_else(|| panic!("no error at {key}: {:?}", l.errors()))
}

/// A map where a value belongs: Spring's binder has no converter from a map to a
/// `java.time.Duration` and fails; the retry must not run with the default 500 ms.
#[test]
fn a_map_where_a_duration_belongs_is_an_error_naming_the_key() {
    let l = load(
        "
resilience4j.retry:
  instances:
    f:
      wait-duration: {seconds: 2s}
",
    );
    let e = error_at(&l, "resilience4j.retry.instances.f.wait-duration");
    assert_eq!(e.value.as_deref(), Some("seconds: 2s"));
    assert!(e.message.contains("java.time.Duration"), "{e}");
    assert_eq!(e.origin.as_ref().map(|o| o.line), Some(5));
    assert!(!l.modules.retry.instances.contains_key("f"));
    assert!(l.warnings.iter().all(|w| !w.key.contains("wait-duration")));
}

/// The same in a circuit breaker.
#[test]
fn a_map_where_a_circuit_breaker_duration_belongs_is_an_error() {
    let l = load("resilience4j.circuitbreaker.instances.a.waitDurationInOpenState: {seconds: 5}\n");
    let e = error_at(
        &l,
        "resilience4j.circuitbreaker.instances.a.waitDurationInOpenState",
    );
    assert!(e.message.contains("java.time.Duration"), "{e}");
    assert!(l.config.errors.contains_key("a"));
}

/// Nested keys under an integer: `java.lang.Integer` has two constructors, so Spring's
/// binder binds nothing there (no error) and the default 100 applies; we warn.
#[test]
fn a_map_where_an_integer_belongs_binds_nothing_with_a_warning() {
    let l = load(
        "resilience4j.circuitbreaker.instances.a:\n  slidingWindowSize: {size: 5}\n  failureRateThreshold: 40\n",
    );
    assert!(l.errors().is_empty(), "{:?}", l.errors());
    assert_eq!(l.config.instances["a"].sliding_window_size.value, 100);
    assert!(
        l.warnings
            .iter()
            .any(|w| w.key.ends_with("slidingWindowSize.size")
                && w.message.contains("takes a single value")),
        "{:?}",
        l.warnings
    );
}

const FLAG_ONLY: &str = "
resilience4j.retry:
  configs:
    default:
      waitDuration: 2s
  instances:
    flagOnly:
      enableExponentialBackoff: true
      exponentialBackoffMultiplier: 2
    withWait:
      waitDuration: 1s
      enableExponentialBackoff: true
      exponentialBackoffMultiplier: 2
";

/// Resilience4j's `configureRetryIntervalFunction` runs only for a block with `waitDuration`:
/// `flagOnly` keeps configs.default's constant 2 s, and both of its flags get a warning;
/// `withWait` gets 1 s x 2 and no warning.
#[test]
fn backoff_flags_without_a_wait_are_warned_about() {
    let l = load(FLAG_ONLY);
    let r = &l.modules.retry.instances;
    assert_eq!(
        r["flagOnly"].interval.value,
        RetryInterval::Function(IntervalFunction::Constant {
            interval_millis: 2000
        })
    );
    assert!(matches!(
        r["withWait"].interval.value,
        RetryInterval::Function(IntervalFunction::Exponential {
            initial_millis: 1000,
            multiplier,
            max_millis: None,
        }) if multiplier == 2.0
    ));
    let keys: Vec<&str> = l.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "resilience4j.retry.instances.flagOnly.enableExponentialBackoff",
            "resilience4j.retry.instances.flagOnly.exponentialBackoffMultiplier",
        ]
    );
    let w = &l.warnings[0];
    assert!(w.message.contains("no effect"), "{w}");
    assert!(w.message.contains("constant 2000 ms"), "{w}");
    assert!(w.message.contains("configs.default"), "{w}");
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `coreThreadPoolSize` above the default `maxThreadPoolSize`: the error names the CPU count
/// (`Runtime.availableProcessors()`, the default maximum) and the rule.
#[test]
fn a_core_size_above_the_cpu_count_names_the_cpu_count() {
    let core = cpus() + 8;
    let l = load(&format!(
        "resilience4j.thread-pool-bulkhead.instances.a.coreThreadPoolSize: {core}\n"
    ));
    let e = error_at(
        &l,
        "resilience4j.thread-pool-bulkhead.instances.a.coreThreadPoolSize",
    );
    assert_eq!(e.value.as_deref(), Some(core.to_string().as_str()));
    assert!(
        e.allowed
            .contains(&format!("defaults to the CPU count: {}", cpus())),
        "{e}"
    );
    assert!(e.allowed.contains("availableProcessors"), "{e}");
    // A maximum set in a config is named with where it is set.
    let l = load(
        "
resilience4j.thread-pool-bulkhead:
  configs:
    default: { maxThreadPoolSize: 3 }
  instances:
    a: { coreThreadPoolSize: 4 }
",
    );
    let e = error_at(
        &l,
        "resilience4j.thread-pool-bulkhead.instances.a.coreThreadPoolSize",
    );
    assert!(
        e.allowed
            .contains("at most maxThreadPoolSize (3, set in configs.default)"),
        "{e}"
    );
}

/// `configs: {default: {baseConfig: shared}, shared: {...}}`. In the retry, bulkhead,
/// thread-pool-bulkhead, rate-limiter and time-limiter Spring layers a named config without
/// `baseConfig` builds on `configs.default` (`else if (!instanceName.equals(DEFAULT) &&
/// configs.get(DEFAULT) != null)` in each `create*Config`), so building `shared` recurses
/// default -> shared -> default until a StackOverflowError: Spring does not start. The
/// circuit breaker's layer has no such rule and loads it.
fn circular_through_default(section: &str, setting: &str) -> Loaded {
    load(&format!(
        "
resilience4j.{section}:
  configs:
    default: {{ baseConfig: shared }}
    shared: {{ {setting} }}
"
    ))
}

fn assert_refused_through_default(section: &str, setting: &str) {
    let l = circular_through_default(section, setting);
    let e = error_at(&l, &format!("resilience4j.{section}.configs.shared"));
    assert!(
        e.message.contains(
            "Circular reference detected in instance config: default -> shared -> default"
        ),
        "{e}"
    );
    assert!(e.message.contains("has no baseConfig"), "{e}");
    assert!(
        e.message
            .contains(&format!("resilience4j.{section}.configs.default")),
        "{e}"
    );
    let e = error_at(
        &l,
        &format!("resilience4j.{section}.configs.default.baseConfig"),
    );
    assert_eq!(e.value.as_deref(), Some("shared"));
}

#[test]
fn retry_refuses_a_default_built_on_a_config_as_resilience4j_does() {
    assert_refused_through_default("retry", "maxAttempts: 4");
}

#[test]
fn bulkhead_refuses_a_default_built_on_a_config_as_resilience4j_does() {
    assert_refused_through_default("bulkhead", "maxConcurrentCalls: 4");
}

#[test]
fn thread_pool_bulkhead_refuses_a_default_built_on_a_config_as_resilience4j_does() {
    assert_refused_through_default("thread-pool-bulkhead", "queueCapacity: 4");
}

#[test]
fn rate_limiter_refuses_a_default_built_on_a_config_as_resilience4j_does() {
    assert_refused_through_default("ratelimiter", "limitForPeriod: 4");
}

#[test]
fn time_limiter_refuses_a_default_built_on_a_config_as_resilience4j_does() {
    assert_refused_through_default("timelimiter", "timeoutDuration: 4s");
}

/// The circuit breaker's `createCircuitBreakerConfig` builds a named config on the library
/// defaults (no default rule): `default -> shared` is an ordinary chain.
#[test]
fn circuit_breaker_loads_a_default_built_on_a_config() {
    let l = circular_through_default("circuitbreaker", "slidingWindowSize: 4");
    assert!(l.errors().is_empty(), "{:?}", l.errors());
    let d = l.config.default_config.as_ref().unwrap();
    assert_eq!(d.sliding_window_size.value, 4);
}

/// `.nan` and a 229-digit integer: the binder's usual error, with the key, the value as
/// written and the allowed values (not a syntax error, not `1.0E229`).
#[test]
fn nan_and_huge_numbers_are_reported_as_written() {
    let digits = "1".repeat(229);
    let l = load(&format!(
        "
resilience4j.retry.instances:
  a:
    maxAttempts: .nan
  b:
    maxAttempts: {digits}
  c:
    maxAttempts: 1e229
resilience4j.circuitbreaker.instances.d.failureRateThreshold: .nan
"
    ));
    let e = error_at(&l, "resilience4j.retry.instances.a.maxAttempts");
    assert_eq!(e.value.as_deref(), Some(".nan"));
    assert_eq!(e.allowed, "a whole number from 1 to 2147483647");
    assert_eq!(e.origin.as_ref().map(|o| o.line), Some(4));
    let e = error_at(&l, "resilience4j.retry.instances.b.maxAttempts");
    assert_eq!(e.value.as_deref(), Some(digits.as_str()));
    assert!(e.message.contains(&digits), "{e}");
    // A float literal keeps Java's reading of it, as Spring's message would show it.
    let e = error_at(&l, "resilience4j.retry.instances.c.maxAttempts");
    assert_eq!(e.value.as_deref(), Some("1.0E229"));
    let e = error_at(
        &l,
        "resilience4j.circuitbreaker.instances.d.failureRateThreshold",
    );
    assert_eq!(e.value.as_deref(), Some(".nan"));
    assert!(!e.allowed.is_empty());
}
