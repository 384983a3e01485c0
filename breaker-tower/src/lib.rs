//! `tower` Layers for breaker: [`CircuitBreakerLayer`], [`RetryLayer`],
//! [`TimeLimiterLayer`], [`BulkheadLayer`], [`ThreadPoolBulkheadLayer`] and
//! [`RateLimiterLayer`], each built from a registry and a name, for `tower::ServiceBuilder`
//! in front of axum, tonic and hyper services and clients.
//!
//! ```
//! use std::time::Duration;
//! use breaker_core::Registry;
//! use breaker_core::timelimiter::TimeLimiterRegistry;
//! use breaker_tower::{CircuitBreakerLayer, TimeLimiterLayer};
//! use tower::ServiceBuilder;
//!
//! let breakers = Registry::new();
//! let limiters = TimeLimiterRegistry::new();
//! // Outermost first: the breaker records the time limiter's timeouts as failures.
//! let client = ServiceBuilder::new()
//!     .layer(CircuitBreakerLayer::new(&breakers, "inventory"))
//!     .layer(TimeLimiterLayer::new(&limiters, "inventory"))
//!     .service_fn(|_req: http::Request<String>| async {
//!         Ok::<_, std::io::Error>(http::Response::new(String::new()))
//!     });
//! # let _ = client;
//! ```
//!
//! - **Classification**: the circuit breaker judges each result with a [`Classify`]:
//!   [`HttpStatus`] by default (a `5xx` response a failure, a `4xx` ignored, an error by the
//!   breaker's config), [`ByConfig`] for any response (as `CircuitBreaker::call`), or
//!   [`ClassifyFn`]. Every layer but the innermost sees tower's [`BoxError`]: register the
//!   inner service's error type with `ErrorCatalog::register_error` so that the exception
//!   names (`recordExceptions`, `ignoreExceptions`, `retryExceptions`) find it inside the box
//!   and behind tower's own wrapper errors, in any order of the layers.
//! - **Readiness**: `poll_ready` only asks the inner service; permits (breaker, bulkhead,
//!   rate limiter) are taken when the response future is first polled, so a request that is
//!   dropped before it is sent holds nothing, and a response future dropped mid-call gives
//!   its permit back.
//! - **Refusals**: tower's [`BoxError`] by default (downcast to `CallNotPermitted`,
//!   `BulkheadFullException`, `RequestNotPermitted`, `Timeout`); `.service_unavailable()`
//!   answers HTTP `503` with `Retry-After` instead (`504` for a timeout), keeping the inner
//!   error type, so an axum route stays `Infallible`.
//! - **Spans**: `.trace_calls()` runs each call in a span named after the module, with the
//!   instance's `name`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod circuit_breaker;
mod classify;
mod drill;
mod modules;
mod per_host;
mod policy;
mod service;

pub use circuit_breaker::{CircuitBreakerLayer, CircuitBreakerService};
pub use classify::{ByConfig, Classify, ClassifyFn, HttpStatus};
pub use drill::{DrillLayer, DrillService};
pub use modules::{
    BulkheadLayer, ModuleLayer, ModuleService, RateLimiterLayer, RetryLayer,
    ThreadPoolBulkheadLayer, TimeLimiterLayer,
};
pub use per_host::{request_authority, PerHostCircuitBreakerLayer, PerHostCircuitBreakerService};
pub use policy::{refusal_response, BoxError, Errors, Policy, Refusal, ServiceUnavailable};
pub use service::BoxFuture;
