use super::*;
use crate::config::SignedDuration;
use crate::retry::{RetryConfigBuilder, RetryWaitProperties};

#[test]
fn max_attempts_beyond_java_s_int_are_rejected() {
    let e = RetryConfig::builder()
        .max_attempts(i64::from(i32::MAX) + 1)
        .build()
        .unwrap_err();
    assert_eq!(
        e.message(),
        "maxAttempts must be at most 2147483647, but was 2147483648"
    );
    assert_eq!((e.setting(), e.value()), ("maxAttempts", "2147483648"));
    assert!(RetryConfig::builder()
        .max_attempts(i64::from(i32::MAX))
        .build()
        .is_ok());
}

fn waits(c: &RetryConfig, n: u32) -> Vec<i64> {
    (1..=n)
        .map(|a| c.interval_millis(a, AttemptOutcome::Error(&())).unwrap())
        .collect()
}

#[test]
fn defaults_are_resilience4j_defaults() {
    let c = RetryConfig::default();
    assert_eq!(c.max_attempts(), 3);
    assert_eq!(c.wait_duration(), Some(Duration::from_millis(500)));
    assert!(!c.fail_after_max_attempts());
    assert!(c.writable_stack_trace_enabled());
    assert!(c.is_retryable(&"any error"));
    assert!(!c.is_retry_result(&"any result"));
    assert_eq!(waits(&c, 3), [500, 500, 500]);
}

#[test]
fn wait_duration_zero_and_sub_millisecond_are_accepted() {
    let c = RetryConfig::builder()
        .wait_duration(Duration::from_micros(999))
        .build()
        .unwrap();
    assert_eq!(waits(&c, 2), [0, 0]);
}

#[test]
fn the_last_interval_setting_wins() {
    let c = RetryConfig::builder()
        .interval_bi_function(|_, _| 7)
        .wait_duration(Duration::from_millis(5))
        .build()
        .unwrap();
    assert_eq!(waits(&c, 1), [5]);
    let c = RetryConfig::builder()
        .wait_duration(Duration::from_millis(5))
        .interval_bi_function(|a, _| a as i64 * 100)
        .build()
        .unwrap();
    assert_eq!(waits(&c, 3), [100, 200, 300]);
    assert!(c.interval_function().is_none());
}

#[test]
fn lists_replace_and_the_predicate_is_kept_from_a_base() {
    let catalog = ErrorCatalog::new()
        .register("IOException", |e: &&str| *e == "io")
        .register("IllegalStateException", |e: &&str| *e == "state");
    let base = RetryConfig::builder()
        .error_catalog(catalog)
        .retry_exceptions(["IOException"])
        .retry_on_exception(|e: &&str| *e == "special")
        .build()
        .unwrap();
    assert!(base.is_retryable(&"io"));
    assert!(!base.is_retryable(&"state"));
    let derived = base
        .to_builder()
        .retry_exceptions(["IllegalStateException"])
        .build()
        .unwrap();
    assert!(!derived.is_retryable(&"io"));
    assert!(derived.is_retryable(&"state"));
    assert!(derived.is_retryable(&"special"));
    let ignoring = derived
        .to_builder()
        .ignore_exceptions(["IllegalStateException"])
        .build()
        .unwrap();
    assert!(!ignoring.is_retryable(&"state"));
}

#[test]
fn spring_mapping_drops_what_resilience4j_drops() {
    let ms = SignedDuration::from_millis;
    let build = |p: RetryWaitProperties| {
        RetryConfig::builder()
            .wait_properties(&p)
            .random_source(Arc::new(|| 0.0))
            .build()
            .unwrap()
    };
    // A max without a multiplier is ignored: 1000, 1500, 2250, 3375.
    let c = build(RetryWaitProperties {
        wait_duration: Some(ms(1000)),
        enable_exponential_backoff: Some(true),
        exponential_max_wait_duration: Some(ms(1500)),
        ..Default::default()
    });
    assert_eq!(waits(&c, 4), [1000, 1500, 2250, 3375]);
    // Flags without waitDuration change nothing: the 500 ms default stays.
    let c = build(RetryWaitProperties {
        enable_exponential_backoff: Some(true),
        exponential_backoff_multiplier: Some(2.0),
        ..Default::default()
    });
    assert_eq!(waits(&c, 3), [500, 500, 500]);
    // Both flags, multiplier and max but no factor: the max is ignored, factor 0.5
    // (r = 0 gives the lower bound: 1000 * 4 * 0.5 = 2000 at attempt 3).
    let c = build(RetryWaitProperties {
        wait_duration: Some(ms(1000)),
        enable_exponential_backoff: Some(true),
        enable_randomized_wait: Some(true),
        exponential_backoff_multiplier: Some(2.0),
        exponential_max_wait_duration: Some(ms(1500)),
        ..Default::default()
    });
    assert_eq!(waits(&c, 3), [500, 1000, 2000]);
}

#[test]
fn validation_messages_are_resilience4j_messages() {
    let err = |b: RetryConfigBuilder| {
        let e = b.build().unwrap_err();
        (e.setting(), e.to_string())
    };
    assert_eq!(
        err(RetryConfig::builder().max_attempts(0)),
        (
            "maxAttempts",
            "maxAttempts must be greater than or equal to 1".into()
        )
    );
    assert_eq!(
        err(RetryConfig::builder().wait_duration(SignedDuration::from_millis(-1))),
        (
            "waitDuration",
            "waitDuration must be a positive value".into()
        )
    );
    assert_eq!(
        err(RetryConfig::builder().randomized_wait(Duration::from_millis(500), 1.5)),
        (
            "randomizedWaitFactor",
            "Illegal argument randomizationFactor: 1.5".into()
        )
    );
    assert_eq!(
        err(RetryConfig::builder().exponential_backoff(
            Duration::from_millis(100),
            2.0,
            Some(SignedDuration::from_millis(-5))
        )),
        (
            "exponentialMaxWaitDuration",
            "Illegal argument interval: -5 millis is less than 1".into()
        )
    );
}
