//! The circuit breaker's part of `#[circuit_breaker]`: finding the breaker, running the
//! protected future through it, and returning a rejection without a fallback.

use core::any::Any;
use core::future::Future;
use core::ops::Deref;
use std::sync::OnceLock;

use super::Witness;
use crate::{CallError, CallNotPermitted, CircuitBreaker, Outcome, Registry};

/// The breaker `name` of the global registry (`resilience4rs::global()`).
#[inline]
pub fn from_global(name: &str) -> CircuitBreaker {
    crate::global::global().circuit_breaker(name)
}

/// The breaker `name` of `registry` (`registry = ...`).
#[inline]
pub fn from_registry(registry: &Registry, name: &str) -> CircuitBreaker {
    registry.circuit_breaker(name)
}

/// The global registry, for [`named`].
#[inline]
pub fn global_registry() -> &'static Registry {
    crate::global::global()
}

/// A breaker handle: the one cached at the call site, or one looked up for this call.
pub enum Handle {
    /// The call site's cached handle.
    Cached(&'static CircuitBreaker),
    /// A handle looked up for this call.
    Owned(CircuitBreaker),
}

impl Deref for Handle {
    type Target = CircuitBreaker;
    #[inline(always)]
    fn deref(&self) -> &CircuitBreaker {
        match self {
            Handle::Cached(b) => b,
            Handle::Owned(b) => b,
        }
    }
}

/// A call site's cached breaker for a `name = <expression>`: the handle and the address
/// and length of the name it was looked up by.
pub struct NamedCell {
    cell: OnceLock<(usize, usize, CircuitBreaker)>,
}

impl NamedCell {
    /// An empty cell, for a `static`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        NamedCell {
            cell: OnceLock::new(),
        }
    }
}

/// The breaker for a `name = <expression>` in a static registry: the call site caches the
/// first one it looks up, and uses it whenever the expression gives the same name again (a
/// const: the same address, so no string comparison). A different name (`Self::NAME` in a
/// trait's default method, shared by every impl) is looked up for this call, so every name
/// gets its own breaker.
#[inline]
pub fn named(
    cell: &'static NamedCell,
    name: &str,
    registry: impl FnOnce() -> &'static Registry,
) -> Handle {
    let key = (name.as_ptr() as usize, name.len());
    let registry = match cell.cell.get() {
        Some((ptr, len, cached)) if (*ptr, *len) == key || cached.name() == name => {
            return Handle::Cached(cached);
        }
        Some(_) => return Handle::Owned(registry().circuit_breaker(name)),
        None => registry(),
    };
    let (_, _, cached) = cell
        .cell
        .get_or_init(|| (key.0, key.1, registry.circuit_breaker(name)));
    if cached.name() == name {
        Handle::Cached(cached)
    } else {
        Handle::Owned(registry.circuit_breaker(name))
    }
}

type Ok<W> = <W as Witness>::Ok;
type Err<W> = <W as Witness>::Err;

// The classifiers. The expansion calls one inside a closure it writes in place, so the
// `'static` bounds that classification by type needs are checked once, in that closure's
// body, on the `Ok` type's token (an opaque or generic classifier type would carry the bounds
// to every place its type goes), and the closure, a zero-sized type, inlines.

/// Classifies `Ok` values (`recordResult`) and errors (`recordExceptions`,
/// `ignoreExceptions`, ...) by type: both must be `'static`.
#[inline(always)]
pub fn by_type<T: Any, E: Any>(breaker: &CircuitBreaker, result: &Result<T, E>) -> Outcome {
    breaker.classify(result)
}

/// For an `Ok` type that is not `'static` (borrowed data, a generic `T`): its values are
/// successes, since no `recordResult` predicate can name such a type.
#[inline(always)]
pub fn unnamed_ok<T, E: Any>(breaker: &CircuitBreaker, result: &Result<T, E>) -> Outcome {
    match result {
        Ok(_) => Outcome::Success,
        Err(e) => breaker.classify_error(e),
    }
}

/// For an error type that is not `'static`: no exception name or predicate can match it
/// (see [`CircuitBreaker::classify_unnamed_error`]).
#[inline(always)]
pub fn unnamed_err<T: Any, E>(breaker: &CircuitBreaker, result: &Result<T, E>) -> Outcome {
    match result {
        Ok(v) => breaker.classify_value(v),
        Err(_) => breaker.classify_unnamed_error(),
    }
}

/// For `Ok` and error types that are both not `'static`.
#[inline(always)]
pub fn unnamed<T, E>(breaker: &CircuitBreaker, result: &Result<T, E>) -> Outcome {
    match result {
        Ok(_) => Outcome::Success,
        Err(_) => breaker.classify_unnamed_error(),
    }
}

/// Runs `future` through `breaker`, classifying its result with `classify`. `checked` is
/// `<R as ProtectedOutput>::checked()` for the fn's return type `R`. Not an `async fn`: the
/// future is `call_with`'s own, with no state machine around it.
#[inline(always)]
pub fn call<'b, W, C, F>(
    _checked: W,
    classify: C,
    breaker: &'b CircuitBreaker,
    future: F,
) -> impl Future<Output = W::Outcome<CallError<Err<W>>>> + use<'b, W, C, F>
where
    W: Witness<
        Output = Result<Ok<W>, Err<W>>,
        Outcome<CallError<Err<W>>> = Result<Ok<W>, CallError<Err<W>>>,
    >,
    C: Fn(&CircuitBreaker, &Result<Ok<W>, Err<W>>) -> Outcome,
    F: Future<Output = W::Output>,
{
    // A drill of this breaker stands in for the protected future, inside the breaker.
    let future = super::drill::single(breaker, future);
    breaker.call_with(move |r| classify(breaker, r), future)
}

/// An error type that can carry a rejected call, needed when there is no fallback.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot represent a call the circuit breaker rejected",
    label = "without a fallback, a rejected call is returned as this error type",
    note = "add `fallback = \"...\"` to answer rejected calls (the fallback receives \
            `CallError::NotPermitted`), or return an error type that implements \
            `From<resilience4rs::CallNotPermitted>` (for an error type of your own: \
            implement it, e.g. with an enum variant)"
)]
pub trait FromNotPermitted: Sized {
    /// Converts the rejection.
    fn from_not_permitted(rejected: CallNotPermitted) -> Self;
}

// Not recommended: the error is then about `FromNotPermitted` (whose message explains the
// fix), not a list of every `From` impl the error type has.
#[diagnostic::do_not_recommend]
impl<E: From<CallNotPermitted>> FromNotPermitted for E {
    #[inline(always)]
    fn from_not_permitted(rejected: CallNotPermitted) -> Self {
        E::from(rejected)
    }
}

/// The outcome of a protected call without a fallback, for the error type `Self` named at
/// the call (`<PayError as FromNotPermitted>::without_fallback(outcome)`, spanned on the
/// user's error type): the call's own error as is, a rejection through
/// `From<CallNotPermitted>`.
pub trait WithoutFallback: FromNotPermitted {
    /// Converts the outcome.
    fn without_fallback<T>(outcome: Result<T, CallError<Self>>) -> Result<T, Self>;
}

impl<E: FromNotPermitted> WithoutFallback for E {
    #[inline]
    fn without_fallback<T>(outcome: Result<T, CallError<E>>) -> Result<T, E> {
        match outcome {
            Ok(value) => Ok(value),
            Err(CallError::Inner(error)) => Err(error),
            Err(CallError::NotPermitted(rejected)) => Err(E::from_not_permitted(rejected)),
        }
    }
}

/// An outcome that can be returned without a fallback, for an error type the expansion
/// cannot name (behind an alias): its type follows from the outcome's, so after an earlier
/// error (a return type that is not a `Result`) nothing more is reported.
pub trait Unfallback {
    /// The fn's return type.
    type Output;
    /// Converts the outcome.
    fn unfallback(self) -> Self::Output;
}

impl<T, E: FromNotPermitted> Unfallback for Result<T, CallError<E>> {
    type Output = Result<T, E>;
    #[inline]
    fn unfallback(self) -> Result<T, E> {
        E::without_fallback(self)
    }
}

/// [`Unfallback::unfallback`].
#[inline]
pub fn without_fallback<O: Unfallback>(outcome: O) -> O::Output {
    outcome.unfallback()
}
