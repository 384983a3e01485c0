//! A circuit breaker's `ERROR` / `IGNORED_ERROR` event carries the error as Resilience4j's
//! `getThrowable()` does (issue #24, item 3): its class (the Rust type name) and its message,
//! which the actuator prints as Java's `Throwable.toString()`, `class: message`.

use std::error::Error;
use std::fmt;
use std::sync::{Arc, Mutex};

use breaker_core::{
    CircuitBreaker, CircuitBreakerConfig, ErrorCatalog, EventKind, Outcome, Throwable,
};

type BoxError = Box<dyn Error + Send + Sync>;

/// An error type that shows no message without a `Display` bound at the call site.
#[derive(Debug)]
struct Opaque;

/// A typed error boxed the way tower does it.
#[derive(Debug)]
struct Refused(u16);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "connection refused on port {}", self.0)
    }
}
impl Error for Refused {}

fn breaker(config: CircuitBreakerConfig) -> (CircuitBreaker, Arc<Mutex<Vec<EventKind>>>) {
    let cb = CircuitBreaker::new("backend", config);
    let seen: Arc<Mutex<Vec<EventKind>>> = Arc::default();
    let sink = seen.clone();
    cb.subscribe(move |e| sink.lock().unwrap().push(e.kind.clone()));
    (cb, seen)
}

/// The error of the only event recorded.
fn only_error(seen: &Mutex<Vec<EventKind>>) -> Throwable {
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    match &seen[0] {
        EventKind::Error { error, .. } | EventKind::IgnoredError { error, .. } => {
            error.clone().expect("the event carries the error")
        }
        other => panic!("not an error event: {other:?}"),
    }
}

#[test]
fn io_error_event_has_type_and_message() {
    let (cb, seen) = breaker(CircuitBreakerConfig::default());
    let r: Result<(), _> = cb.call_sync(|| Err(std::io::Error::other("BAM!")));
    assert!(r.is_err());
    let t = only_error(&seen);
    assert_eq!(t.class(), "std::io::error::Error");
    assert_eq!(t.message(), "BAM!");
}

#[test]
fn boxed_error_event_has_the_inner_message() {
    let (cb, seen) = breaker(CircuitBreakerConfig::default());
    let _ = cb.call_sync(|| -> Result<(), BoxError> { Err(Box::new(Refused(8080))) });
    let t = only_error(&seen);
    assert_eq!(t.class(), std::any::type_name::<BoxError>());
    assert_eq!(t.message(), "connection refused on port 8080");
}

#[test]
fn string_error_event_has_the_string() {
    let (cb, seen) = breaker(CircuitBreakerConfig::default());
    let _ = cb.call_sync(|| -> Result<(), String> { Err("payment declined".into()) });
    assert_eq!(only_error(&seen).message(), "payment declined");
}

#[test]
fn error_without_a_visible_message_is_its_class_alone() {
    let (cb, seen) = breaker(CircuitBreakerConfig::default());
    let _ = cb.call_sync(|| -> Result<(), Opaque> { Err(Opaque) });
    let t = only_error(&seen);
    assert_eq!(t.class(), "error_message::Opaque");
    assert_eq!(t.message(), "");
}

#[tokio::test]
async fn async_call_and_ignored_errors_carry_the_message_too() {
    let config = CircuitBreakerConfig::builder()
        .error_catalog(ErrorCatalog::new().register_type::<std::io::Error>("java.io.IOException"))
        .ignore_exceptions(["java.io.IOException"])
        .build()
        .unwrap();
    let (cb, seen) = breaker(config);
    let _ = cb
        .call(async { Err::<(), _>(std::io::Error::other("ignored one")) })
        .await;
    assert!(matches!(
        seen.lock().unwrap()[0],
        EventKind::IgnoredError { .. }
    ));
    assert_eq!(only_error(&seen).message(), "ignored one");
}

#[test]
fn event_to_string_reads_as_resilience4j() {
    let (cb, _) = breaker(CircuitBreakerConfig::default());
    let buffer = cb.attach_event_buffer(4);
    let _ = cb.call_sync(|| Err::<(), _>(std::io::Error::other("BAM!")));
    let text = buffer.events()[0].to_string();
    // Resilience4j: "CircuitBreaker '%s' recorded an error: '%s'. Elapsed time: %s ms", the
    // second `%s` being the throwable's `toString()`.
    assert_eq!(
        text,
        "CircuitBreaker 'backend' recorded an error: 'std::io::error::Error: BAM!'. Elapsed time: 0 ms"
    );
}

#[test]
fn permit_record_result_describes_the_error() {
    let (cb, seen) = breaker(CircuitBreakerConfig::default());
    let permit = cb.try_acquire_permission().unwrap();
    let result: Result<(), BoxError> = Err("upstream 503".into());
    permit.record_result(Outcome::Failure, &result);
    assert_eq!(only_error(&seen).message(), "upstream 503");
}

#[test]
fn permit_record_without_the_error_has_none() {
    let (cb, seen) = breaker(CircuitBreakerConfig::default());
    cb.try_acquire_permission()
        .unwrap()
        .record(Outcome::Failure);
    assert!(matches!(
        seen.lock().unwrap()[0],
        EventKind::Error { error: None, .. }
    ));
}
