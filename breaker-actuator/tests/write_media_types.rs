//! `POST /actuator/circuitbreakers/{name}` consumes only JSON and the actuator's media types,
//! as Spring Boot's write operations do (`application/vnd.spring-boot.actuator.v3+json`,
//! `...v2+json`, `application/json`): every other `Content-Type`, or none, is a 415 and
//! leaves the breaker's state alone (a page on another site can send `text/plain`, a form
//! or no type without a CORS preflight; it cannot send JSON).

use breaker_actuator::Actuator;
use breaker_core::{Registry, State};
use serde_json::Value;

async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// Posts `{"updateState":"FORCE_OPEN"}` with `content_type` (none when `None`); the status
/// and the JSON body.
async fn force_open(base: &str, content_type: Option<&str>) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/actuator/circuitbreakers/payments"))
        .body(r#"{"updateState":"FORCE_OPEN"}"#);
    if let Some(t) = content_type {
        req = req.header("content-type", t);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_json_and_the_actuator_media_types_change_a_state() {
    let registry = Registry::new();
    let cb = registry.circuit_breaker("payments");
    let base = serve(Actuator::new(registry).allow_state_changes(true).router()).await;

    let refused: [Option<&str>; 6] = [
        Some("text/plain"),
        Some("text/plain;charset=UTF-8"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=xyz"),
        Some("application/octet-stream"),
        None,
    ];
    for t in refused {
        let (status, body) = force_open(&base, t).await;
        assert_eq!(status, 415, "{t:?}: {body}");
        let message = body["error"].as_str().unwrap_or_default();
        assert!(message.contains("application/json"), "{t:?}: {message}");
        assert_eq!(cb.state(), State::Closed, "{t:?} changed the state");
    }

    let accepted = [
        "application/json",
        "application/json;charset=UTF-8",
        "application/vnd.spring-boot.actuator.v3+json",
        "application/vnd.spring-boot.actuator.v2+json",
    ];
    for t in accepted {
        cb.transition_to_closed_state().unwrap();
        let (status, body) = force_open(&base, Some(t)).await;
        assert_eq!(status, 200, "{t}: {body}");
        assert_eq!(body["currentState"], "FORCED_OPEN", "{t}");
        assert_eq!(cb.state(), State::ForcedOpen, "{t}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turned_off_stays_403_whatever_the_type() {
    let registry = Registry::new();
    let cb = registry.circuit_breaker("payments");
    let base = serve(Actuator::new(registry).router()).await;
    for t in [Some("application/json"), Some("text/plain"), None] {
        assert_eq!(force_open(&base, t).await.0, 403, "{t:?}");
    }
    assert_eq!(cb.state(), State::Closed);
}
