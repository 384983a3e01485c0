//! How `call` classifies outcomes: Resilience4j's recordResult, recordExceptions,
//! ignoreExceptions (spec §1.2, §2.3).

use std::sync::{Arc, Mutex};

use breaker_core::{
    CallError, CircuitBreaker, CircuitBreakerConfig, ErrorCatalog, EventType, Outcome, State,
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

/// An error that borrows: no catalog entry or predicate can name its type.
#[derive(Debug)]
struct Borrowed<'a>(#[allow(dead_code)] &'a str);

#[tokio::test]
async fn an_error_no_name_can_match_is_classified_as_unlisted() {
    let catalog = ErrorCatalog::new().register("HttpServerErrorException", |e: &HttpError| {
        matches!(e, HttpError::Status(500..=599))
    });
    let plain = CircuitBreaker::new("plain", CircuitBreakerConfig::default());
    let ignoring = CircuitBreaker::new(
        "ignoring",
        CircuitBreakerConfig::builder()
            .error_catalog(catalog.clone())
            .ignore_exceptions(["HttpServerErrorException"])
            .build()
            .unwrap(),
    );
    let recording = CircuitBreaker::new(
        "recording",
        CircuitBreakerConfig::builder()
            .error_catalog(catalog)
            .record_exceptions(["HttpServerErrorException"])
            .build()
            .unwrap(),
    );
    // Without settings every error is a failure; an ignore list does not list it (failure);
    // a record list does not list it either (success), as for a 'static error it omits.
    assert_eq!(plain.classify_unnamed_error(), Outcome::Failure);
    assert_eq!(ignoring.classify_unnamed_error(), Outcome::Failure);
    assert_eq!(recording.classify_unnamed_error(), Outcome::Success);
    assert_eq!(
        recording.classify_error(&HttpError::Status(404)),
        Outcome::Success
    );
    assert_eq!(
        recording.classify_error(&HttpError::Status(503)),
        Outcome::Failure
    );
    assert_eq!(
        ignoring.classify_error(&HttpError::Status(503)),
        Outcome::Ignored
    );

    // `call_with` records what the classifier says, for a result that borrows.
    let text = String::from("bad");
    let r: Result<u8, CallError<Borrowed<'_>>> = recording
        .call_with(
            |r: &Result<u8, Borrowed<'_>>| match r {
                Ok(_) => Outcome::Success,
                Err(_) => recording.classify_unnamed_error(),
            },
            async { Err(Borrowed(&text)) },
        )
        .await;
    assert!(r.is_err());
    assert_eq!(recording.metrics().number_of_successful_calls, 1);
}

#[test]
fn values_are_classified_by_the_record_result_predicate_type() {
    let cb = CircuitBreaker::new(
        "values",
        CircuitBreakerConfig::builder()
            .record_result(|v: &u32| *v == 0)
            .build()
            .unwrap(),
    );
    assert_eq!(cb.classify_value(&0u32), Outcome::Failure);
    assert_eq!(cb.classify_value(&1u32), Outcome::Success);
    // Another type is never the predicate's: a success.
    assert_eq!(cb.classify_value(&0u64), Outcome::Success);
}
