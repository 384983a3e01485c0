//! What the breaker records for each kind of return type: `'static` types are classified by
//! `recordResult`, `recordExceptions` and `ignoreExceptions`; a borrowed `Ok` type can never be
//! the type a `recordResult` predicate names (so its values are successes), and a borrowed
//! error matches no exception name (a failure without a record list, else a success).
use std::sync::LazyLock;

use resilience4rs::{
    circuit_breaker, CallNotPermitted, CircuitBreakerConfig, ErrorCatalog, Registry,
};

#[derive(Debug, PartialEq)]
pub enum SvcError {
    Timeout,
    NotFound,
    Rejected,
}

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError::Rejected
    }
}

#[derive(Debug, PartialEq)]
pub struct Borrowed<'a>(pub &'a str);

impl From<CallNotPermitted> for Borrowed<'_> {
    fn from(_: CallNotPermitted) -> Self {
        Borrowed("rejected")
    }
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    let catalog = ErrorCatalog::new()
        .register("java.util.concurrent.TimeoutException", |e: &SvcError| {
            *e == SvcError::Timeout
        })
        .register("java.util.NoSuchElementException", |e: &SvcError| {
            *e == SvcError::NotFound
        });
    let ignoring = CircuitBreakerConfig::builder()
        .ignore_exceptions(["java.util.NoSuchElementException"])
        .record_result(|v: &u32| *v == 0)
        .error_catalog(catalog.clone())
        .build()
        .unwrap();
    let recording = CircuitBreakerConfig::builder()
        .record_exceptions(["java.util.concurrent.TimeoutException"])
        .error_catalog(catalog)
        .build()
        .unwrap();
    let registry = Registry::new();
    registry.configure_instance("ignoring", ignoring.clone());
    registry.configure_instance("ignoring-borrowed", ignoring);
    registry.configure_instance("recording-borrowed", recording);
    registry
});

#[circuit_breaker(name = "ignoring", registry = REGISTRY)]
async fn owned(value: u32, error: Option<SvcError>) -> Result<u32, SvcError> {
    match error {
        Some(e) => Err(e),
        None => Ok(value),
    }
}

#[circuit_breaker(name = "ignoring-borrowed", registry = REGISTRY)]
async fn borrowed_ok<'a>(value: &'a u32, error: Option<SvcError>) -> Result<&'a u32, SvcError> {
    match error {
        Some(e) => Err(e),
        None => Ok(value),
    }
}

#[circuit_breaker(name = "recording-borrowed", registry = REGISTRY)]
async fn borrowed_err(text: &str) -> Result<u32, Borrowed<'_>> {
    text.parse().map_err(|_| Borrowed(text))
}

fn counts(name: &str) -> (u32, u32) {
    let m = REGISTRY.circuit_breaker(name).metrics();
    (m.number_of_successful_calls, m.number_of_failed_calls)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        // 'static: recordResult(0) is a failure, NotFound is ignored, Timeout is a failure.
        assert_eq!(owned(0, None).await, Ok(0));
        assert_eq!(owned(1, None).await, Ok(1));
        assert_eq!(owned(1, Some(SvcError::NotFound)).await, Err(SvcError::NotFound));
        assert_eq!(owned(1, Some(SvcError::Timeout)).await, Err(SvcError::Timeout));
        assert_eq!(counts("ignoring"), (1, 2));

        // Borrowed Ok: `&0` is not the `u32` the predicate names, so it is a success; the
        // 'static error is still classified by name.
        assert_eq!(borrowed_ok(&0, None).await, Ok(&0));
        assert_eq!(borrowed_ok(&1, Some(SvcError::NotFound)).await, Err(SvcError::NotFound));
        assert_eq!(borrowed_ok(&1, Some(SvcError::Timeout)).await, Err(SvcError::Timeout));
        assert_eq!(counts("ignoring-borrowed"), (1, 1));

        // Borrowed error with a record list: it is not a TimeoutException, so a success.
        assert_eq!(borrowed_err("x").await, Err(Borrowed("x")));
        assert_eq!(borrowed_err("2").await, Ok(2));
        assert_eq!(counts("recording-borrowed"), (2, 0));
    });
}
