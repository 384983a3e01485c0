//! Support code for `#[circuit_breaker]`. Not a public API: only the macro's expansion may use
//! these items, and they can change in any release.
//!
//! The traits here exist for their `#[diagnostic::on_unimplemented]` messages: the type checks
//! the macro cannot do itself are phrased as trait bounds, so a mistake reads as an
//! explanation of what to write, on the token the macro pointed the check at.

use core::future::Future;

use crate::{CallError, CallNotPermitted, CircuitBreaker, Registry};

/// The breaker `name` of the global registry (`resilience4rs::global()`), for a call site's cache.
pub fn from_global(name: &'static str) -> CircuitBreaker {
    crate::global::global().circuit_breaker(name)
}

/// The breaker `name` of a given registry (`registry = ...`), for a call site's cache.
pub fn from_registry(registry: &Registry, name: &'static str) -> CircuitBreaker {
    registry.circuit_breaker(name)
}

/// The return type of a protected fn.
#[diagnostic::on_unimplemented(
    message = "`#[circuit_breaker]` needs the fn to return a `Result`, not `{Self}`",
    label = "write `Result<T, YourError>` here",
    note = "the breaker records `Err` as a failure and `Ok` as a success"
)]
pub trait ProtectedOutput {}

impl<T, E> ProtectedOutput for Result<T, E> {}

/// Compiles only when `R` is a `Result`.
#[inline(always)]
pub fn protected_output<R: ProtectedOutput>() {}

/// An error type that can carry a rejected call, needed when there is no fallback.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot represent a call the circuit breaker rejected",
    label = "`{Self}` needs `From<resilience4rs::CallNotPermitted>`",
    note = "without a fallback, a rejected call is returned as the fn's own error: \
            implement `From<resilience4rs::CallNotPermitted>` for `{Self}` (e.g. an enum variant), \
            or add `fallback = \"...\"` to handle it"
)]
pub trait FromNotPermitted: Sized {
    /// Converts the rejection.
    fn from_not_permitted(rejected: CallNotPermitted) -> Self;
}

impl<E: From<CallNotPermitted>> FromNotPermitted for E {
    fn from_not_permitted(rejected: CallNotPermitted) -> Self {
        E::from(rejected)
    }
}

/// The outcome of a protected call without a fallback: the inner error as is, a rejection
/// through `From<CallNotPermitted>`.
#[inline]
pub fn without_fallback<T, E: FromNotPermitted>(outcome: Result<T, CallError<E>>) -> Result<T, E> {
    match outcome {
        Ok(value) => Ok(value),
        Err(CallError::Inner(error)) => Err(error),
        Err(CallError::NotPermitted(rejected)) => Err(E::from_not_permitted(rejected)),
    }
}

/// An argument the fallback receives a copy of.
#[diagnostic::on_unimplemented(
    message = "the fallback needs its own copy of this argument, but `{Self}` is not `Clone`",
    label = "`{Self}` must implement `Clone`",
    note = "the protected call takes the arguments, so the fallback gets clones made before \
            the call: derive or implement `Clone`, pass it as `Arc<..>` or `&..`, or drop the \
            fallback"
)]
pub trait FallbackArg: Sized {
    /// Copies the argument.
    fn copy_for_fallback(&self) -> Self;
}

impl<T: Clone> FallbackArg for T {
    #[inline]
    fn copy_for_fallback(&self) -> Self {
        self.clone()
    }
}

/// Clones an argument (or an owned receiver) for the fallback.
#[inline]
pub fn fallback_arg<T: FallbackArg>(value: &T) -> T {
    value.copy_for_fallback()
}

/// What calling the fallback gives: a future resolving to the protected fn's return type `R`.
#[diagnostic::on_unimplemented(
    message = "the fallback must be an `async fn` returning `{R}`, but calling it gives `{Self}`",
    label = "the fallback must be `async fn ..(<same arguments>, CallError<E>) -> {R}`",
    note = "a fallback takes the protected fn's arguments plus `resilience4rs::CallError<E>` last, \
            is `async`, and returns exactly the protected fn's return type"
)]
pub trait FallbackFuture<R> {
    /// The future.
    type Future: Future<Output = R>;
    /// Unwraps the future.
    fn into_fallback_future(self) -> Self::Future;
}

impl<R, F: Future<Output = R>> FallbackFuture<R> for F {
    type Future = F;
    #[inline]
    fn into_fallback_future(self) -> F {
        self
    }
}

/// Runs the fallback's future, checking its type.
#[inline]
pub fn fallback<R, F: FallbackFuture<R>>(call: F) -> F::Future {
    call.into_fallback_future()
}
