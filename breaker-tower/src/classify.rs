//! How a circuit breaker judges a response: [`HttpStatus`] (the default), [`ByConfig`], or
//! any function ([`ClassifyFn`]).

use std::any::Any;

use breaker_core::{CircuitBreaker, Outcome};

/// Decides whether a call's result is a success, a failure or ignored.
pub trait Classify<Res, E>: Clone + Send + Sync + 'static {
    /// The outcome of `result`, for the breaker `breaker` (whose config says how errors are
    /// classified: `recordExceptions`, `ignoreExceptions`).
    fn classify(&self, breaker: &CircuitBreaker, result: &Result<Res, E>) -> Outcome;
}

/// For HTTP: a `5xx` response is a failure, a `4xx` is ignored (the caller's mistake says
/// nothing about the service), anything else a success; an error (no response: connection
/// refused, timeout) is classified by the breaker's config (every error a failure unless
/// `recordExceptions` / `ignoreExceptions` say otherwise).
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpStatus;

impl<B: 'static, E: Any> Classify<http::Response<B>, E> for HttpStatus {
    fn classify(&self, breaker: &CircuitBreaker, result: &Result<http::Response<B>, E>) -> Outcome {
        match result {
            Ok(r) if r.status().is_server_error() => Outcome::Failure,
            Ok(r) if r.status().is_client_error() => Outcome::Ignored,
            Ok(_) => Outcome::Success,
            Err(_) => breaker.classify(result),
        }
    }
}

/// Any response: `Ok` is judged by the config's `recordResult` predicate (a success without
/// one), `Err` by its exception settings, exactly as `CircuitBreaker::call` judges.
#[derive(Debug, Clone, Copy, Default)]
pub struct ByConfig;

impl<Res: Any, E: Any> Classify<Res, E> for ByConfig {
    fn classify(&self, breaker: &CircuitBreaker, result: &Result<Res, E>) -> Outcome {
        breaker.classify(result)
    }
}

/// A function of the result.
#[derive(Debug, Clone, Copy)]
pub struct ClassifyFn<F>(pub F);

impl<Res, E, F> Classify<Res, E> for ClassifyFn<F>
where
    F: Fn(&Result<Res, E>) -> Outcome + Clone + Send + Sync + 'static,
{
    fn classify(&self, _: &CircuitBreaker, result: &Result<Res, E>) -> Outcome {
        (self.0)(result)
    }
}
