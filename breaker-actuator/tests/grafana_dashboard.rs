//! The shipped Grafana dashboard (docs/grafana/breaker-dashboard.json) works against a Rust
//! service (issue 24): every metric name its queries and variables use is a series of
//! `/actuator/prometheus` with all five modules bound and driven, its variables read
//! `resilience4j_*` series (never `jvm_info`, which a Rust service does not have), and it
//! covers the circuit breaker, retry, time limiter, bulkhead, thread-pool bulkhead and rate
//! limiter.

use std::collections::BTreeSet;
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use breaker_actuator::{install_prometheus_recorder, Actuator};
use breaker_config::SpringConfig;
use serde_json::Value;
use tower::ServiceExt;

const DASHBOARD: &str = include_str!("../../docs/grafana/breaker-dashboard.json");

const FILE: &str = "spring.application.name: demo
management:
  endpoints.web.exposure.include: '*'
  metrics.tags.application: ${spring.application.name}
resilience4j:
  circuitbreaker.instances.payments: { slidingWindowSize: 2, minimumNumberOfCalls: 2 }
  retry.instances.payments: { maxAttempts: 2, waitDuration: 0 }
  timelimiter.instances.payments: { timeoutDuration: 1s }
  bulkhead.instances.payments: { maxConcurrentCalls: 3 }
  thread-pool-bulkhead.instances.reports: { coreThreadPoolSize: 1, maxThreadPoolSize: 1, queueCapacity: 2 }
  ratelimiter.instances.payments: { limitForPeriod: 1, limitRefreshPeriod: 60s, timeoutDuration: 0 }
";

/// Every `resilience4j_*` metric name in `text` (a PromQL expression or `label_values`
/// query); a regex such as `resilience4j_.+` names none.
fn metric_names(text: &str, into: &mut BTreeSet<String>) {
    let mut rest = text;
    while let Some(i) = rest.find("resilience4j_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        if end > "resilience4j_".len() {
            into.insert(tail[..end].to_string());
        }
        rest = &tail[end..];
    }
}

/// The queries of every panel (rows included) and variable.
fn queries(d: &Value) -> (Vec<String>, Vec<String>) {
    fn panels(list: &Value, out: &mut Vec<String>) {
        for p in list.as_array().into_iter().flatten() {
            for t in p["targets"].as_array().into_iter().flatten() {
                out.push(t["expr"].as_str().unwrap().to_string());
            }
            panels(&p["panels"], out);
        }
    }
    let mut exprs = Vec::new();
    panels(&d["panels"], &mut exprs);
    let vars = d["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["type"] == "query")
        .map(|v| match &v["query"] {
            Value::String(q) => q.clone(),
            q => q["query"].as_str().unwrap().to_string(),
        })
        .collect();
    (exprs, vars)
}

async fn scrape() -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    std::fs::write(&path, FILE).unwrap();
    let live = SpringConfig::file(&path).live().unwrap();
    let handle = install_prometheus_recorder(&live.management()).unwrap();
    let router = Actuator::from_live(&live).prometheus(handle).router();

    // Drive every module once, so that every meter has seen a call.
    let m = live.module_registries();
    let cb = live.registry().circuit_breaker("payments");
    cb.call(async { Ok::<_, std::io::Error>(()) })
        .await
        .unwrap();
    let _ = cb
        .call(async { Err::<(), _>(std::io::Error::other("down")) })
        .await;
    let _ = cb
        .call(async { Err::<(), _>(std::io::Error::other("down")) })
        .await;
    assert!(cb
        .call(async { Ok::<_, std::io::Error>(()) })
        .await
        .is_err());
    let retry = m.retry.retry("payments");
    let _ = retry
        .call(|| async { Err::<(), _>(std::io::Error::other("down")) })
        .await;
    let tl = m.time_limiter.time_limiter("payments");
    tl.call(async { Ok::<_, std::io::Error>(()) })
        .await
        .unwrap();
    let bh = m.bulkhead.bulkhead("payments");
    bh.call(async { Ok::<_, std::io::Error>(()) })
        .await
        .unwrap();
    let tp = m.thread_pool_bulkhead.bulkhead("reports");
    tp.call(async { Ok::<_, std::io::Error>(()) })
        .await
        .unwrap();
    let rl = m.rate_limiter.rate_limiter("payments");
    rl.call(async { Ok::<_, std::io::Error>(()) })
        .await
        .unwrap();
    assert!(rl
        .call(async { Ok::<_, std::io::Error>(()) })
        .await
        .is_err());
    tokio::time::sleep(Duration::from_millis(10)).await;

    let request = Request::get("/actuator/prometheus")
        .body(Body::empty())
        .unwrap();
    let response = router.oneshot(request).await.unwrap();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    String::from_utf8(body.to_vec()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_the_dashboard_queries_is_in_a_scrape() {
    let d: Value = serde_json::from_str(DASHBOARD).unwrap();
    let (exprs, vars) = queries(&d);
    assert!(exprs.len() >= 20, "{} panel queries", exprs.len());
    let mut used = BTreeSet::new();
    for q in exprs.iter().chain(&vars) {
        metric_names(q, &mut used);
    }

    let text = scrape().await;
    let scraped: BTreeSet<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split(['{', ' ']).next().unwrap())
        .collect();
    let missing: Vec<&String> = used
        .iter()
        .filter(|n| !scraped.contains(n.as_str()))
        .collect();
    assert!(missing.is_empty(), "not in the scrape: {missing:?}\n{text}");

    // All five modules (and the thread-pool bulkhead) have panels.
    for module in [
        "resilience4j_circuitbreaker_",
        "resilience4j_retry_",
        "resilience4j_timelimiter_",
        "resilience4j_bulkhead_available_concurrent_calls",
        "resilience4j_bulkhead_queue_depth",
        "resilience4j_ratelimiter_",
    ] {
        assert!(
            used.iter().any(|n| n.starts_with(module)),
            "no panel reads {module}"
        );
    }
    // The variables' `application` is the scrape's `management.metrics.tags.application`.
    assert!(text.contains("application=\"demo\""), "{text}");
}

#[test]
fn variables_read_resilience4j_series_never_jvm_info() {
    let d: Value = serde_json::from_str(DASHBOARD).unwrap();
    let (exprs, vars) = queries(&d);
    assert!(vars.len() >= 7, "{vars:?}");
    for v in &vars {
        assert!(v.contains("resilience4j_"), "{v}");
        assert!(!v.contains("jvm_"), "{v}");
    }
    for e in &exprs {
        assert!(!e.contains("jvm_"), "{e}");
        // Every panel follows the application variable.
        assert!(e.contains("application=~\"$application\""), "{e}");
    }
    // Every variable a panel uses is defined.
    let defined: BTreeSet<&str> = d["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    for e in &exprs {
        for part in e.split('$').skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.starts_with("__") {
                assert!(defined.contains(name.as_str()), "${name} in {e}");
            }
        }
    }
}
