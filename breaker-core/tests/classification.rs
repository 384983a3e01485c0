//! How `call` classifies outcomes: Resilience4j's recordResult, recordExceptions,
//! ignoreExceptions (spec §1.2, §2.3).

use std::sync::{Arc, Mutex};

use breaker_core::{
    CallError, CircuitBreaker, CircuitBreakerConfig, ErrorCatalog, EventType, State,
};

#[derive(Debug, PartialEq)]
enum HttpError {
    Status(u16),
}

fn events(cb: &CircuitBreaker) -> Arc<Mutex<Vec<EventType>>> {
    let seen: Arc<Mutex<Vec<EventType>>> = Arc::default();
    let s = seen.clone();
    cb.subscribe(move |e| s.lock().unwrap().push(e.event_type()));
    seen
}

#[test]
fn a_result_accepted_by_record_result_is_a_failure_but_still_returned() {
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(2)
        .minimum_number_of_calls(2)
        .record_result(|body: &String| body.contains("maintenance"))
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("results", config);
    let seen = events(&cb);
    let r: Result<String, CallError<HttpError>> =
        cb.call_sync(|| Ok("down for maintenance".into()));
    assert_eq!(r.unwrap(), "down for maintenance");
    let r: Result<String, CallError<HttpError>> = cb.call_sync(|| Ok("ok".into()));
    assert_eq!(r.unwrap(), "ok");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            EventType::Error,
            EventType::Success,
            EventType::FailureRateExceeded,
            EventType::StateTransition
        ]
    );
    assert_eq!(cb.state(), State::Open);
}

#[test]
fn ignored_errors_are_neither_and_unlisted_errors_are_successes() {
    let catalog = ErrorCatalog::new()
        .register("HttpServerErrorException", |e: &HttpError| {
            matches!(e, HttpError::Status(500..=599))
        })
        .register("HttpClientErrorException", |e: &HttpError| {
            matches!(e, HttpError::Status(400..=499))
        });
    let config = CircuitBreakerConfig::builder()
        .error_catalog(catalog)
        .record_exceptions(["HttpServerErrorException"])
        .ignore_exceptions(["HttpClientErrorException"])
        .sliding_window_size(10)
        .minimum_number_of_calls(10)
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("http", config);
    let seen = events(&cb);
    for status in [404, 503, 302] {
        let _: Result<(), CallError<HttpError>> = cb.call_sync(|| Err(HttpError::Status(status)));
    }
    // 404 ignored; 503 recorded as a failure; 302 is listed nowhere: a success.
    assert_eq!(
        *seen.lock().unwrap(),
        [
            EventType::IgnoredError,
            EventType::Error,
            EventType::Success
        ]
    );
    let m = cb.metrics();
    assert_eq!(m.number_of_buffered_calls, 2);
    assert_eq!(m.number_of_failed_calls, 1);
    assert_eq!(m.number_of_successful_calls, 1);
}
