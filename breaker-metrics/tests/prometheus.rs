//! The exposition through `metrics-exporter-prometheus` has Resilience4j's series names,
//! tags and values (integration spec §3), computed here from the calls made.

use std::time::Duration;

use breaker_core::bulkhead::{BulkheadConfig, BulkheadRegistry};
use breaker_core::ratelimiter::{RateLimiterConfig, RateLimiterRegistry};
use breaker_core::retry::{RetryConfig, RetryError, RetryRegistry};
use breaker_core::timelimiter::{TimeLimiterConfig, TimeLimiterRegistry};
use breaker_core::{CircuitBreakerConfig, ManualClock, Outcome, Registry};
use breaker_metrics::{recorder_installed, MetricsPublisher};
use metrics_exporter_prometheus::PrometheusBuilder;

/// The value of the series `name{labels}` (labels exactly as printed), if present.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|r| r.strip_prefix(' ')))
        .map(|v| v.trim().parse().unwrap())
}

#[test]
fn no_recorder_means_no_subscription() {
    assert!(!recorder_installed());
    let registry = Registry::new();
    let cb = registry.circuit_breaker("a");
    MetricsPublisher::default().bind(&registry);
    // Unsubscribed: the breaker's first subscription gets id 0, so nothing else subscribed.
    let id = cb.subscribe(|_| {});
    assert!(format!("{id:?}").contains("(0)"), "{id:?}");
}

#[test]
fn every_module_reads_like_micrometer() {
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let _guard = metrics::set_default_local_recorder(&recorder);
    assert!(recorder_installed());

    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let breakers = Registry::with_default_config(
        CircuitBreakerConfig::builder()
            .sliding_window_size(4)
            .minimum_number_of_calls(4)
            .clock(std::sync::Arc::new(clock.clone()))
            .build()
            .unwrap(),
    );
    let retries = RetryRegistry::with_default_config(
        RetryConfig::builder()
            .max_attempts(2)
            .wait_duration(Duration::ZERO)
            .build()
            .unwrap(),
    );
    let limiters = TimeLimiterRegistry::with_default_config(
        TimeLimiterConfig::builder()
            .timeout_duration(Duration::from_millis(50))
            .build()
            .unwrap(),
    );
    let bulkheads = BulkheadRegistry::with_default_config(
        BulkheadConfig::builder()
            .max_concurrent_calls(3)
            .build()
            .unwrap(),
    );
    let rate_limiters = RateLimiterRegistry::with_default_config(
        RateLimiterConfig::builder()
            .limit_for_period(10)
            .limit_refresh_period(Duration::from_secs(60))
            .build()
            .unwrap(),
    );
    let publisher = MetricsPublisher::new([("application", "checkout")]);
    publisher
        .bind(&breakers)
        .bind_tagged(&retries, [("team", "payments")])
        .bind(&limiters)
        .bind(&bulkheads)
        .bind(&rate_limiters);

    // Circuit breaker: 2 successes of 10 ms and 30 ms, 2 failures of 20 ms each: 50 % of
    // 4 calls opens it; then 3 rejections and one ignored error before... (none: OPEN).
    let cb = breakers.circuit_breaker("backendA");
    for (ms, outcome) in [
        (10, Outcome::Success),
        (20, Outcome::Failure),
        (30, Outcome::Success),
        (20, Outcome::Failure),
    ] {
        let p = cb.try_acquire_permission().unwrap();
        p.record_with_duration(outcome, Duration::from_millis(ms));
    }
    for _ in 0..3 {
        assert!(cb.try_acquire_permission().is_err());
    }

    // Retry: one success at once, one after a retry, one exhausted (2 attempts).
    let retry = retries.retry("backendA");
    let rt = tokio_like_block_on();
    rt(Box::pin(async {
        let _: Result<u32, RetryError<String>> = retry.call(|| async { Ok(1) }).await;
        let mut n = 0;
        let _: Result<u32, RetryError<String>> = retry
            .call(|| {
                n += 1;
                let first = n == 1;
                async move {
                    if first {
                        Err("boom".to_string())
                    } else {
                        Ok(2)
                    }
                }
            })
            .await;
        let _: Result<u32, RetryError<String>> =
            retry.call(|| async { Err("down".to_string()) }).await;
    }));

    // Bulkhead: one permit held of 3. Rate limiter: 4 of 10 permits taken.
    let bulkhead = bulkheads.bulkhead("inventory");
    let _held = bulkhead.try_acquire_permission().unwrap();
    let limiter = rate_limiters.rate_limiter("api");
    for _ in 0..4 {
        limiter.try_acquire_permission(1).unwrap();
    }
    let _tl = limiters.time_limiter("slow");

    publisher.refresh();
    let text = handle.render();
    let v = |s: &str| value(&text, s).unwrap_or_else(|| panic!("no {s} in\n{text}"));

    assert!(
        text.contains("# HELP resilience4j_circuitbreaker_state The states of the circuit breaker"),
        "{text}"
    );
    assert!(
        text.contains("# TYPE resilience4j_circuitbreaker_state gauge"),
        "{text}"
    );
    let state = |s: &str| {
        v(&format!(
        "resilience4j_circuitbreaker_state{{application=\"checkout\",name=\"backendA\",state=\"{s}\"}}"
    ))
    };
    assert_eq!(state("open"), 1.0);
    for s in [
        "closed",
        "half_open",
        "disabled",
        "forced_open",
        "metrics_only",
    ] {
        assert_eq!(state(s), 0.0, "{s}");
    }
    let cbk = |m: &str, kind: &str| {
        v(&format!(
            "resilience4j_circuitbreaker_{m}{{application=\"checkout\",kind=\"{kind}\",name=\"backendA\"}}"
        ))
    };
    assert_eq!(cbk("buffered_calls", "failed"), 2.0);
    assert_eq!(cbk("buffered_calls", "successful"), 2.0);
    assert_eq!(cbk("slow_calls", "failed"), 0.0);
    assert_eq!(cbk("calls_seconds_count", "successful"), 2.0);
    assert!((cbk("calls_seconds_sum", "successful") - 0.040).abs() < 1e-9);
    assert_eq!(cbk("calls_seconds_count", "failed"), 2.0);
    assert!((cbk("calls_seconds_sum", "failed") - 0.040).abs() < 1e-9);
    assert!((cbk("calls_seconds_max", "successful") - 0.030).abs() < 1e-9);
    assert_eq!(cbk("not_permitted_calls_total", "not_permitted"), 3.0);
    assert!(
        text.contains("# TYPE resilience4j_circuitbreaker_not_permitted_calls_total counter"),
        "{text}"
    );
    assert_eq!(
        v("resilience4j_circuitbreaker_failure_rate{application=\"checkout\",name=\"backendA\"}"),
        50.0
    );
    assert_eq!(
        v("resilience4j_circuitbreaker_slow_call_rate{application=\"checkout\",name=\"backendA\"}"),
        0.0
    );

    let retry_kind = |k: &str| {
        v(&format!(
            "resilience4j_retry_calls_total{{application=\"checkout\",kind=\"{k}\",name=\"backendA\",team=\"payments\"}}"
        ))
    };
    assert_eq!(retry_kind("successful_without_retry"), 1.0);
    assert_eq!(retry_kind("successful_with_retry"), 1.0);
    assert_eq!(retry_kind("failed_without_retry"), 0.0);
    assert_eq!(retry_kind("failed_with_retry"), 1.0);

    for k in ["successful", "failed", "timeout"] {
        assert_eq!(
            v(&format!(
                "resilience4j_timelimiter_calls_total{{application=\"checkout\",kind=\"{k}\",name=\"slow\"}}"
            )),
            0.0
        );
    }
    assert_eq!(
        v("resilience4j_bulkhead_available_concurrent_calls{application=\"checkout\",name=\"inventory\"}"),
        2.0
    );
    assert_eq!(
        v("resilience4j_bulkhead_max_allowed_concurrent_calls{application=\"checkout\",name=\"inventory\"}"),
        3.0
    );
    assert_eq!(
        v("resilience4j_ratelimiter_available_permissions{application=\"checkout\",name=\"api\"}"),
        6.0
    );
    assert_eq!(
        v("resilience4j_ratelimiter_waiting_threads{application=\"checkout\",name=\"api\"}"),
        0.0
    );

    // A breaker created later gets its meters too; a removed one stops being refreshed.
    breakers.circuit_breaker("late");
    publisher.refresh();
    let text = handle.render();
    assert_eq!(
        value(&text, "resilience4j_circuitbreaker_state{application=\"checkout\",name=\"late\",state=\"closed\"}"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        value(
            &text,
            "resilience4j_circuitbreaker_failure_rate{application=\"checkout\",name=\"late\"}"
        ),
        Some(-1.0),
        "below the minimum number of calls: {text}"
    );
}

/// A minimal executor for futures that never wait (retry waits are zero here).
fn tokio_like_block_on() -> impl Fn(std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>) {
    |mut f| {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        loop {
            if f.as_mut().poll(&mut cx).is_ready() {
                return;
            }
        }
    }
}
