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

/// Log lines written by the `fmt` subscriber.
#[derive(Clone, Default)]
struct Lines(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_state_change_through_the_actuator_says_so() {
    let lines = Lines::default();
    let w = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || w.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let registry = Registry::new();
    let cb = registry.circuit_breaker("payments");
    let router = Actuator::new(registry).allow_state_changes(true).router();
    // In process, on this thread, so that the thread's subscriber sees the handler's events.
    use tower::ServiceExt;
    let request = axum::http::Request::post("/actuator/circuitbreakers/payments")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(r#"{"updateState":"FORCE_OPEN"}"#))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(cb.state(), State::ForcedOpen);
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("breaker::actuator"))
        .unwrap_or_else(|| panic!("no actuator line in\n{text}"));
    assert!(line.contains(" WARN "), "{line}");
    assert!(
        line.contains(
            "CircuitBreaker 'payments' changed state from CLOSED to FORCED_OPEN through the actuator"
        ),
        "{line}"
    );
    assert!(line.contains("updateState FORCE_OPEN"), "{line}");

    // A refused request logs nothing.
    let request = axum::http::Request::post("/actuator/circuitbreakers/payments")
        .header("content-type", "text/plain")
        .body(axum::body::Body::from(r#"{"updateState":"CLOSE"}"#))
        .unwrap();
    assert_eq!(
        router.oneshot(request).await.unwrap().status().as_u16(),
        415
    );
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    assert_eq!(text.matches("breaker::actuator").count(), 1, "{text}");
}
