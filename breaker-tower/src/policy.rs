//! What a layered service returns when its module refuses a call: an error
//! ([`Errors`], the default, tower's `BoxError` convention) or, for HTTP services, a response
//! ([`ServiceUnavailable`]: `503` with `Retry-After`, `504` for a timeout).

use std::time::Duration;

use breaker_core::bulkhead::BulkheadFullException;
use breaker_core::ratelimiter::RequestNotPermitted;
use breaker_core::CallNotPermitted;

/// tower's boxed error.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A module's refusal to run a call.
pub trait Refusal: std::error::Error + Send + Sync + 'static {
    /// When a retry may succeed, for `Retry-After`; `None` when unknown.
    fn retry_after(&self) -> Option<Duration> {
        None
    }
    /// The HTTP status that answers it: 503, or 504 for a timeout.
    fn status(&self) -> u16 {
        503
    }
}

impl Refusal for CallNotPermitted {
    fn retry_after(&self) -> Option<Duration> {
        CallNotPermitted::retry_after(self)
    }
}
impl Refusal for BulkheadFullException {}
impl Refusal for RequestNotPermitted {}
impl Refusal for breaker_core::timelimiter::Timeout {
    fn status(&self) -> u16 {
        504
    }
}

/// How a service maps its inner service's results and a refusal.
pub trait Policy<Res, E>: Clone + Send + Sync + 'static {
    /// The service's error.
    type Error: Send + 'static;
    /// The inner service's own result.
    fn inner(result: Result<Res, E>) -> Result<Res, Self::Error> {
        result.map_err(Self::error)
    }
    /// The inner service's own error (also from `poll_ready`).
    fn error(e: E) -> Self::Error;
    /// A refused call.
    fn refused<R: Refusal>(refusal: R) -> Result<Res, Self::Error>;
}

/// Refusals and the inner service's errors become tower's [`BoxError`]; downcast it to
/// `CallNotPermitted`, `BulkheadFullException`, `RequestNotPermitted` or `Timeout` to tell
/// them apart. The default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Errors;

impl<Res, E: Into<BoxError>> Policy<Res, E> for Errors {
    type Error = BoxError;
    fn error(e: E) -> BoxError {
        e.into()
    }
    fn refused<R: Refusal>(refusal: R) -> Result<Res, BoxError> {
        Err(Box::new(refusal))
    }
}

/// For HTTP services: a refused call is answered `503 Service Unavailable`, with
/// `Retry-After` (whole seconds, rounded up) when the module knows when to retry (an OPEN
/// breaker's remaining wait), and a timeout `504 Gateway Timeout`; the inner service's errors
/// pass through unchanged, so an axum route keeps its `Infallible` error.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServiceUnavailable;

impl<B: Default, E: Send + 'static> Policy<http::Response<B>, E> for ServiceUnavailable {
    type Error = E;
    fn error(e: E) -> E {
        e
    }
    fn refused<R: Refusal>(refusal: R) -> Result<http::Response<B>, E> {
        Ok(refusal_response(&refusal))
    }
}

/// The response that answers `refusal`: its status, `Retry-After` when known, empty body.
pub fn refusal_response<B: Default, R: Refusal>(refusal: &R) -> http::Response<B> {
    let mut r = http::Response::new(B::default());
    *r.status_mut() = http::StatusCode::from_u16(refusal.status())
        .unwrap_or(http::StatusCode::SERVICE_UNAVAILABLE);
    if let Some(after) = refusal.retry_after() {
        let secs = after.as_secs() + u64::from(after.subsec_nanos() > 0);
        r.headers_mut().insert(
            http::header::RETRY_AFTER,
            http::HeaderValue::from(secs.max(1)),
        );
    }
    r
}
