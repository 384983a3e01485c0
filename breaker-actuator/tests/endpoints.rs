//! The endpoints over HTTP, against a Spring file: JSON shapes and values of spec §4.3, health
//! of §5 (per-instance opt-in, `allowHealthIndicatorToFail`, aggregation, 503), exposure,
//! the state-changing POST, and the Prometheus exposition.

use std::time::Duration;

use breaker_actuator::{install_prometheus_recorder, Actuator};
use breaker_config::SpringConfig;
use breaker_core::ManualClock;
use serde_json::{json, Value};

const FILE: &str = "spring.application.name: demo
management:
  endpoints.web.exposure.include: '*'
  endpoint.health.show-details: always
  health.circuitbreakers.enabled: true
  health.ratelimiters.enabled: true
  metrics.tags.application: ${spring.application.name}
resilience4j.circuitbreaker:
  configs:
    default: { slidingWindowSize: 4, minimumNumberOfCalls: 4, registerHealthIndicator: true, eventConsumerBufferSize: 5 }
  instances:
    backendA: { baseConfig: default }
    backendB: { baseConfig: default, allowHealthIndicatorToFail: true }
    hidden: { baseConfig: default, registerHealthIndicator: false }
resilience4j.ratelimiter.instances.api:
  limitForPeriod: 2
  limitRefreshPeriod: 60s
  timeoutDuration: 0
  subscribeForEvents: true
  registerHealthIndicator: true
resilience4j.retry.instances.r: { maxAttempts: 2, waitDuration: 0 }
";

async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

async fn get(url: &str) -> (u16, String) {
    let r = reqwest::get(url).await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

async fn get_json(url: &str) -> (u16, Value) {
    let (s, t) = get(url).await;
    (
        s,
        serde_json::from_str(&t).unwrap_or_else(|e| panic!("{url}: {e}: {t}")),
    )
}

async fn post(url: &str, body: &str) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let s = r.status().as_u16();
    (s, serde_json::from_str(&r.text().await.unwrap()).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoints_read_like_resilience4j() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    std::fs::write(&path, FILE).unwrap();
    // 2024-01-02T03:04:05.120Z
    let clock = ManualClock::at_epoch_millis(1_704_164_645_120);
    let live = SpringConfig::file(&path)
        .clock(clock.clone())
        .live()
        .unwrap();
    let handle = install_prometheus_recorder(&live.management()).unwrap();
    let actuator = Actuator::from_live(&live).prometheus(handle);
    let base = serve(actuator.clone().allow_state_changes(true).router()).await;
    let read_only = serve(actuator.router()).await;

    // backendA and backendB: 2 successes, 2 failures (io errors through call_sync) = 50 %:
    // OPEN. One rejected call each.
    for name in ["backendA", "backendB"] {
        let cb = live.registry().circuit_breaker(name);
        for fail in [false, false, true, true] {
            clock.advance(Duration::from_millis(10));
            let _ = cb.call_sync(|| {
                clock.advance(Duration::from_millis(12));
                if fail {
                    Err(std::io::Error::other("BAM!"))
                } else {
                    Ok(())
                }
            });
        }
        assert!(cb.try_acquire_permission().is_err());
    }

    let (status, body) = get_json(&format!("{base}/actuator/circuitbreakers")).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["circuitBreakers"]["backendA"],
        json!({
            "failureRate": "50.0%",
            "slowCallRate": "0.0%",
            "failureRateThreshold": "50.0%",
            "slowCallRateThreshold": "100.0%",
            "bufferedCalls": 4,
            "failedCalls": 2,
            "slowCalls": 0,
            "slowFailedCalls": 0,
            "notPermittedCalls": 1,
            "state": "OPEN"
        })
    );
    assert_eq!(body["circuitBreakers"]["hidden"]["failureRate"], "-1.0%");
    let keys: Vec<&String> = body["circuitBreakers"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["backendA", "backendB", "hidden"]);

    // Health: backendA OPEN -> CIRCUIT_OPEN (does not count), backendB OPEN with
    // allowHealthIndicatorToFail -> DOWN, so the component and the whole are DOWN: 503.
    let (status, h) = get_json(&format!("{base}/actuator/health")).await;
    assert_eq!(status, 503, "{h}");
    assert_eq!(h["status"], "DOWN");
    let cbs = &h["components"]["circuitBreakers"];
    assert_eq!(cbs["status"], "DOWN");
    assert_eq!(cbs["details"]["backendA"]["status"], "CIRCUIT_OPEN");
    assert_eq!(cbs["details"]["backendB"]["status"], "DOWN");
    assert!(cbs["details"].get("hidden").is_none(), "{h}");
    assert_eq!(
        cbs["details"]["backendA"]["details"],
        json!({
            "failureRate": "50.0%", "failureRateThreshold": "50.0%",
            "slowCallRate": "0.0%", "slowCallRateThreshold": "100.0%",
            "bufferedCalls": 4, "slowCalls": 0, "slowFailedCalls": 0,
            "failedCalls": 2, "notPermittedCalls": 1, "state": "OPEN"
        })
    );
    assert_eq!(h["components"]["ping"], json!({"status": "UP"}));
    assert_eq!(
        h["components"]["rateLimiters"],
        json!({"status": "UP", "details": {"api": {"status": "UP", "details": {"availablePermissions": 2, "numberOfWaitingThreads": 0}}}})
    );
    let (status, one) = get_json(&format!("{base}/actuator/health/circuitBreakers/backendA")).await;
    assert_eq!((status, &one["status"]), (200, &json!("CIRCUIT_OPEN")));

    // Events: the last 5 of backendA (eventConsumerBufferSize: 5).
    let (_, ev) = get_json(&format!("{base}/actuator/circuitbreakerevents/backendA")).await;
    let types: Vec<&str> = ev["circuitBreakerEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "ERROR",
            "ERROR",
            "FAILURE_RATE_EXCEEDED",
            "STATE_TRANSITION",
            "NOT_PERMITTED"
        ]
    );
    assert_eq!(
        ev["circuitBreakerEvents"][0],
        json!({
            "circuitBreakerName": "backendA",
            "type": "ERROR",
            // Each call: 10 ms idle, then 12 ms long. The third ends 66 ms after the start.
            "creationTime": "2024-01-02T03:04:05.186Z",
            // `Throwable.toString()`: class, colon, message (the class is the Rust type).
            "errorMessage": "std::io::error::Error: BAM!",
            "durationInMs": 12,
            "stateTransition": null
        })
    );
    let (_, st) = get_json(&format!(
        "{base}/actuator/circuitbreakerevents/backendA/state_transition"
    ))
    .await;
    assert_eq!(
        st,
        json!({"circuitBreakerEvents": [{
            "circuitBreakerName": "backendA", "type": "STATE_TRANSITION",
            "creationTime": "2024-01-02T03:04:05.208Z",
            "errorMessage": null, "durationInMs": null, "stateTransition": "CLOSED_TO_OPEN"
        }]})
    );
    let (_, all) = get_json(&format!("{base}/actuator/circuitbreakerevents")).await;
    let times: Vec<&str> = all["circuitBreakerEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["creationTime"].as_str().unwrap())
        .collect();
    assert_eq!(times.len(), 10);
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "sorted by time: {times:?}"
    );
    assert_eq!(
        get_json(&format!("{base}/actuator/circuitbreakerevents/nobody")).await,
        (200, json!({"circuitBreakerEvents": []}))
    );
    assert_eq!(
        get(&format!(
            "{base}/actuator/circuitbreakerevents/backendA/bogus"
        ))
        .await
        .0,
        400
    );

    // The other modules' lists and events.
    assert_eq!(
        get_json(&format!("{base}/actuator/retries")).await.1,
        json!({"retries": ["r"]})
    );
    assert_eq!(
        get_json(&format!("{base}/actuator/ratelimiters")).await.1,
        json!({"rateLimiters": ["api"]})
    );
    let limiter = live.module_registries().rate_limiter.rate_limiter("api");
    limiter.try_acquire_permission(1).unwrap();
    assert_eq!(
        get_json(&format!("{base}/actuator/ratelimiterevents/api"))
            .await
            .1,
        json!({"rateLimiterEvents": [{"rateLimiterName": "api", "type": "SUCCESSFUL_ACQUIRE", "creationTime": "2024-01-02T03:04:05.296Z"}]})
    );
    assert_eq!(
        get_json(&format!("{base}/actuator/bulkheads")).await.1,
        json!({"bulkheads": []})
    );

    // The state change: off on the read-only router, 404 for an unknown name (nothing
    // created), 400 for a bad body, then FORCE_OPEN.
    let url = |b: &str, n: &str| format!("{b}/actuator/circuitbreakers/{n}");
    assert_eq!(
        post(&url(&read_only, "backendA"), r#"{"updateState":"CLOSE"}"#)
            .await
            .0,
        403
    );
    assert_eq!(
        post(&url(&base, "nope"), r#"{"updateState":"CLOSE"}"#)
            .await
            .0,
        404
    );
    assert!(live.registry().find("nope").is_none());
    assert_eq!(
        post(&url(&base, "backendA"), r#"{"updateState":"HALF_OPEN"}"#)
            .await
            .0,
        400
    );
    assert_eq!(
        post(&url(&base, "backendA"), r#"{"updateState":"FORCE_OPEN"}"#).await,
        (
            200,
            json!({"circuitBreakerName": "backendA", "currentState": "FORCED_OPEN", "message": "backendA state has been changed successfully"})
        )
    );

    // Prometheus: the state gauge with the application tag, the timer by kind.
    let (status, text) = get(&format!("{base}/actuator/prometheus")).await;
    assert_eq!(status, 200);
    for line in [
        "resilience4j_circuitbreaker_state{application=\"demo\",name=\"backendA\",state=\"forced_open\"} 1",
        "resilience4j_circuitbreaker_state{application=\"demo\",name=\"backendB\",state=\"open\"} 1",
        "resilience4j_circuitbreaker_calls_seconds_count{application=\"demo\",kind=\"failed\",name=\"backendA\"} 2",
        "resilience4j_circuitbreaker_calls_seconds_count{application=\"demo\",kind=\"successful\",name=\"backendB\"} 2",
        "resilience4j_circuitbreaker_not_permitted_calls_total{application=\"demo\",kind=\"not_permitted\",name=\"backendB\"} 1",
        "resilience4j_retry_calls_total{application=\"demo\",kind=\"failed_with_retry\",name=\"r\"} 0",
        "resilience4j_ratelimiter_available_permissions{application=\"demo\",name=\"api\"} 1",
    ] {
        assert!(text.lines().any(|l| l == line), "no line {line} in\n{text}");
    }

    // Discovery.
    let (_, links) = get_json(&format!("{base}/actuator")).await;
    let host = base.trim_start_matches("http://");
    assert_eq!(
        links["_links"]["health"]["href"],
        format!("http://{host}/actuator/health")
    );
}

#[tokio::test]
async fn spring_defaults_expose_only_health_without_details() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    std::fs::write(
        &path,
        "resilience4j.circuitbreaker.instances.a.registerHealthIndicator: true\n",
    )
    .unwrap();
    let live = SpringConfig::file(&path).live().unwrap();
    let base = serve(Actuator::from_live(&live).router()).await;
    assert_eq!(
        get_json(&format!("{base}/actuator/health")).await,
        (200, json!({"status": "UP"}))
    );
    assert_eq!(
        get(&format!("{base}/actuator/circuitbreakers")).await.0,
        404
    );
    assert_eq!(get(&format!("{base}/actuator/prometheus")).await.0, 404);
}
