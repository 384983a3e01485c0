//! `/actuator/drills` (issue #28): listed when the actuator has drills; `POST
//! /actuator/drills/{name}` starts and stops a drill only when allowed (403 otherwise) and
//! only with a JSON body (415 otherwise), as the state POST.

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use breaker_actuator::Actuator;
use breaker_core::drill::{DrillErrorKind, DrillRegistry, Injection, Rejection};
use breaker_core::{ManualClock, Registry};
use serde_json::Value;
use tower::ServiceExt;

async fn send(
    router: &axum::Router,
    method: &str,
    path: &str,
    ct: Option<&str>,
    body: &str,
) -> (u16, Value) {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(t) = ct {
        req = req.header("content-type", t);
    }
    let response = router
        .clone()
        .oneshot(req.body(Body::from(body.to_owned())).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

const START: &str = r#"{"fault": "error", "error": "timeout", "calls": 1}"#;

#[tokio::test]
async fn drills_start_and_stop_through_the_endpoint_only_when_allowed() {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let drills = DrillRegistry::with_clock(Arc::new(clock));
    let off = Actuator::new(Registry::new())
        .drills(drills.clone())
        .router();
    let (status, _) = send(
        &off,
        "POST",
        "/actuator/drills/payments",
        Some("application/json"),
        START,
    )
    .await;
    assert_eq!(status, 403);
    assert!(!drills.any());

    let on = Actuator::new(Registry::new())
        .drills(drills.clone())
        .allow_drill_changes(true)
        .router();
    for ct in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let (status, _) = send(&on, "POST", "/actuator/drills/payments", ct, START).await;
        assert_eq!(status, 415, "{ct:?}");
    }
    let (status, _) = send(
        &on,
        "POST",
        "/actuator/drills/payments",
        Some("application/json"),
        r#"{"fault": "melt"}"#,
    )
    .await;
    assert_eq!(status, 400);
    let (status, _) = send(
        &on,
        "POST",
        "/actuator/drills/payments",
        Some("application/json"),
        r#"{"fault": "hang", "percentage": 150}"#,
    )
    .await;
    assert_eq!(status, 400, "out of range");
    assert!(!drills.any());

    let (status, body) = send(
        &on,
        "POST",
        "/actuator/drills/payments",
        Some("application/json"),
        START,
    )
    .await;
    assert_eq!((status, &body["started"]), (200, &Value::Bool(true)));
    let (_, list) = send(&on, "GET", "/actuator/drills", None, "").await;
    assert_eq!(list["drills"]["payments"]["active"], true);
    assert_eq!(list["drills"]["payments"]["fault"], "error");
    assert_eq!(
        drills.decide("payments"),
        Injection::Error(DrillErrorKind::Rejection(Rejection::Timeout))
    );
    let (_, list) = send(&on, "GET", "/actuator/drills", None, "").await;
    assert_eq!(list["drills"]["payments"]["injectedErrors"], 1);
    assert_eq!(
        list["drills"]["payments"]["active"], false,
        "its one call is used"
    );

    let (status, body) = send(
        &on,
        "POST",
        "/actuator/drills/payments",
        Some("application/json"),
        r#"{"stop": true}"#,
    )
    .await;
    assert_eq!((status, &body["stopped"]), (200, &Value::Bool(true)));
    assert!(!drills.any());
}

#[tokio::test]
async fn no_drills_no_endpoint() {
    let router = Actuator::new(Registry::new()).router();
    let (status, _) = send(&router, "GET", "/actuator/drills", None, "").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn health_marks_an_instance_under_drill() {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let drills = DrillRegistry::with_clock(Arc::new(clock));
    let registry = breaker_config::SpringConfig::yaml(
        "resilience4j.circuitbreaker.configs.default.registerHealthIndicator: true\n\
         resilience4j.circuitbreaker.instances.payments.slidingWindowSize: 10\n\
         resilience4j.circuitbreaker.instances.ledger.slidingWindowSize: 10\n",
    )
    .registry()
    .unwrap();
    let router = Actuator::new(registry).drills(drills.clone()).router();
    let fault = breaker_core::drill::Fault::Hang;
    drills
        .start("payments", breaker_core::drill::DrillConfig::new(fault))
        .unwrap();
    let (_, health) = send(&router, "GET", "/actuator/health", None, "").await;
    let cbs = &health["components"]["circuitBreakers"]["details"];
    assert_eq!(cbs["payments"]["details"]["underDrill"], true, "{health}");
    assert!(
        cbs["ledger"]["details"].get("underDrill").is_none(),
        "{health}"
    );
    drills.stop("payments");
    let (_, health) = send(&router, "GET", "/actuator/health", None, "").await;
    let cbs = &health["components"]["circuitBreakers"]["details"];
    assert!(
        cbs["payments"]["details"].get("underDrill").is_none(),
        "{health}"
    );
}
