//! Issue 23 item 1: a name registered once in the `ErrorCatalog` matches that error wherever
//! it travels: the value, the library's typed wrappers, tower's `BoxError`, an
//! `Arc<dyn Error>`, and the `source()` of a wrapper the catalog does not know; a wrapper it
//! does know is judged as itself (Java matches the class of the thrown exception).

use std::error::Error;
use std::fmt;
use std::sync::Arc;

use breaker_core::retry::RetryError;
use breaker_core::{CallError, CircuitBreaker, CircuitBreakerConfig, ErrorCatalog, Outcome};

#[derive(Debug, Clone, PartialEq)]
enum ApiError {
    Server,
    NotFound,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}
impl Error for ApiError {}

/// A wrapper the catalog does not know (as tower's `Elapsed` or buffer errors are).
#[derive(Debug)]
struct Wrapped(Box<dyn Error + Send + Sync>);

impl fmt::Display for Wrapped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("wrapped")
    }
}
impl Error for Wrapped {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.0)
    }
}

/// A wrapper the catalog knows under its own name.
#[derive(Debug)]
struct Gateway(ApiError);

impl fmt::Display for Gateway {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("gateway")
    }
}
impl Error for Gateway {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.0)
    }
}

type BoxError = Box<dyn Error + Send + Sync>;

const SERVER: &str = "com.example.ServerError";
const NOT_FOUND: &str = "com.example.NotFound";

fn catalog() -> ErrorCatalog {
    ErrorCatalog::new()
        .register_error(SERVER, |e: &ApiError| *e == ApiError::Server)
        .register_error(NOT_FOUND, |e: &ApiError| *e == ApiError::NotFound)
}

fn names(n: &[&str]) -> Vec<String> {
    n.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_value_and_the_librarys_typed_wrappers_match() {
    let c = catalog();
    assert!(c.matches_any(&names(&[SERVER]), &ApiError::Server));
    assert!(!c.matches_any(&names(&[SERVER]), &ApiError::NotFound));
    let call: CallError<ApiError> = CallError::Inner(ApiError::NotFound);
    assert!(c.matches_any(&names(&[NOT_FOUND]), &call));
    assert!(!c.matches_any(&names(&[SERVER]), &call));
    let retry: RetryError<ApiError> = RetryError::Inner(ApiError::Server);
    assert!(c.matches_any(&names(&[SERVER]), &retry));
    // A wrapper's own rejection is not the fn's error.
    let open = CircuitBreaker::new("open", CircuitBreakerConfig::default());
    open.transition_to_open_state().unwrap();
    let rejected = open.try_acquire_permission().unwrap_err();
    let refused: CallError<ApiError> = CallError::NotPermitted(rejected);
    assert!(!c.matches_any(&names(&[SERVER, NOT_FOUND]), &refused));
}

#[test]
fn a_boxed_error_matches_in_every_box_tower_and_std_use() {
    let c = catalog();
    let server = names(&[SERVER]);
    let b: BoxError = Box::new(ApiError::Server);
    assert!(c.matches_any(&server, &b));
    let b: Box<dyn Error + Send> = Box::new(ApiError::Server);
    assert!(c.matches_any(&server, &b));
    let b: Box<dyn Error> = Box::new(ApiError::Server);
    assert!(c.matches_any(&server, &b));
    let a: Arc<dyn Error + Send + Sync> = Arc::new(ApiError::Server);
    assert!(c.matches_any(&server, &a));
    let b: BoxError = Box::new(ApiError::NotFound);
    assert!(!c.matches_any(&server, &b));
    assert!(c.matches_any(&names(&[NOT_FOUND]), &b));
}

#[test]
fn a_source_behind_unknown_wrappers_matches_at_any_depth() {
    let c = catalog();
    let mut e: BoxError = Box::new(ApiError::NotFound);
    for _ in 0..5 {
        e = Box::new(Wrapped(e));
    }
    assert!(c.matches_any(&names(&[NOT_FOUND]), &e));
    assert!(!c.matches_any(&names(&[SERVER]), &e));
    // The library's own wrappers are Errors with sources too.
    let call: BoxError = Box::new(CallError::Inner(ApiError::Server));
    assert!(c.matches_any(&names(&[SERVER]), &call));
    // Deeper than the 32-link bound: not looked at.
    let mut deep: BoxError = Box::new(ApiError::NotFound);
    for _ in 0..40 {
        deep = Box::new(Wrapped(deep));
    }
    assert!(!c.matches_any(&names(&[NOT_FOUND]), &deep));
}

#[test]
fn a_known_wrapper_is_judged_as_itself_not_by_its_source() {
    let c = catalog().register_error_type::<Gateway>("com.example.GatewayException");
    let e: BoxError = Box::new(Gateway(ApiError::NotFound));
    assert!(c.matches_any(&names(&["com.example.GatewayException"]), &e));
    assert!(!c.matches_any(&names(&[NOT_FOUND]), &e));
    assert!(!c.matches_any(&names(&[NOT_FOUND]), &Gateway(ApiError::NotFound)));
}

#[test]
fn register_sees_the_value_and_typed_wrappers_but_cannot_look_into_a_box() {
    // Rust can downcast a `dyn Error` only to a type known to implement Error there.
    let c = ErrorCatalog::new().register_type::<ApiError>(SERVER);
    assert!(c.matches_any(&names(&[SERVER]), &ApiError::Server));
    assert!(c.matches_any(&names(&[SERVER]), &CallError::Inner(ApiError::Server)));
    let b: BoxError = Box::new(ApiError::Server);
    assert!(!c.matches_any(&names(&[SERVER]), &b));
    // Registering the same type as an error too adds the chain view.
    let c = c.register_error_type::<ApiError>("other");
    assert!(c.matches_any(&names(&[SERVER]), &b));
}

#[test]
fn a_breaker_classifies_a_boxed_error_by_the_names_of_its_content() {
    let config = CircuitBreakerConfig::builder()
        .record_exceptions([SERVER])
        .ignore_exceptions([NOT_FOUND])
        .error_catalog(catalog())
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("boxed", config);
    let server: BoxError = Box::new(Wrapped(Box::new(ApiError::Server)));
    let not_found: BoxError = Box::new(ApiError::NotFound);
    let other: BoxError = "connection reset".into();
    assert_eq!(cb.classify_error(&server), Outcome::Failure);
    assert_eq!(cb.classify_error(&not_found), Outcome::Ignored);
    // recordExceptions set: an error that is not listed is a success (Resilience4j).
    assert_eq!(cb.classify_error(&other), Outcome::Success);
}
