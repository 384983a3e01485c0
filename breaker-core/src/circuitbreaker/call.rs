//! Protected calls: run a future or closure through a breaker, classify and record its
//! outcome.

use std::any::Any;
use std::future::{Future, IntoFuture};

use crate::breaker::CircuitBreaker;
use crate::classify::Outcome;
use crate::error::CallError;
use crate::permit::{describe, describe_named};

/// The boxed future returned by a function wrapped with [`CircuitBreaker::decorate`].
pub type BoxedCall<T, E> = std::pin::Pin<Box<dyn Future<Output = Result<T, CallError<E>>> + Send>>;

impl CircuitBreaker {
    /// Runs `fut` if the breaker permits it, and records its outcome.
    ///
    /// `Ok` values are successes unless the config's `recordResult` predicate accepts them;
    /// `Err` values are classified by the config's `ignoreExceptions` / `recordExceptions`
    /// (every error is a failure when none is set). A panic inside `fut` is recorded as a
    /// failure and resumed. Dropping the returned future before it finishes (a timeout, a
    /// `select!`) records nothing and hands a HALF_OPEN permission back. Allocates nothing.
    ///
    /// # Errors
    /// [`CallError::NotPermitted`] without polling `fut` when the breaker rejects the call;
    /// [`CallError::Inner`] with the call's own error otherwise.
    pub async fn call<F, T, E>(&self, fut: F) -> Result<T, CallError<E>>
    where
        F: IntoFuture<Output = Result<T, E>>,
        T: Any,
        E: Any,
    {
        let permit = self
            .try_acquire_permission()
            .map_err(CallError::NotPermitted)?;
        let result = fut.await;
        let outcome = self.classify(&result);
        permit.record_typed(outcome, describe(self, &result));
        result.map_err(CallError::Inner)
    }

    /// Like [`call`](Self::call), with the outcome decided by `classify` instead of the
    /// config; works for results that are not `'static`.
    ///
    /// # Errors
    /// As [`call`](Self::call).
    pub async fn call_with<F, T, E>(
        &self,
        classify: impl FnOnce(&Result<T, E>) -> Outcome,
        fut: F,
    ) -> Result<T, CallError<E>>
    where
        F: IntoFuture<Output = Result<T, E>>,
    {
        let permit = self
            .try_acquire_permission()
            .map_err(CallError::NotPermitted)?;
        let result = fut.await;
        let outcome = classify(&result);
        permit.record_typed(outcome, describe_named(self, &result));
        result.map_err(CallError::Inner)
    }

    /// The synchronous form of [`call`](Self::call): runs `f` if permitted and records its
    /// outcome. A panic in `f` is recorded as a failure and resumed.
    ///
    /// # Errors
    /// As [`call`](Self::call).
    #[inline(always)]
    pub fn call_sync<T, E>(&self, f: impl FnOnce() -> Result<T, E>) -> Result<T, CallError<E>>
    where
        T: Any,
        E: Any,
    {
        // A `match`, not `map_err(..)?`: the permit stays in registers (the `?` copied it
        // through memory in pieces, and the record's compare-and-swap waited for those
        // stores).
        let permit = match self.try_acquire_permission() {
            Ok(permit) => permit,
            Err(rejected) => return Err(CallError::NotPermitted(rejected)),
        };
        let result = f();
        let outcome = self.classify(&result);
        permit.record_typed(outcome, describe(self, &result));
        result.map_err(CallError::Inner)
    }

    /// Wraps an async function so that every call goes through this breaker
    /// (Resilience4j's `decorateCompletionStage`).
    pub fn decorate<A, Fut, T, E>(
        &self,
        f: impl Fn(A) -> Fut + Clone + Send + Sync + 'static,
    ) -> impl Fn(A) -> BoxedCall<T, E> + Clone
    where
        A: Send + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        T: Any + Send,
        E: Any + Send,
    {
        let cb = self.clone();
        move |a: A| {
            let cb = cb.clone();
            let fut = f(a);
            Box::pin(async move { cb.call(fut).await })
        }
    }

    /// How the config classifies `result` (see [`call`](Self::call)).
    #[inline]
    pub fn classify<T: Any, E: Any>(&self, result: &Result<T, E>) -> Outcome {
        match result {
            Ok(v) => self.classify_value(v),
            Err(e) => self.classify_error(e),
        }
    }

    /// How the config classifies a successful value: a failure when the `recordResult`
    /// predicate accepts it, else a success.
    ///
    /// The value must be `'static` because the predicate names its type (`record_result::<T>`)
    /// and is matched by type id. A value whose type is not `'static` (a borrow, a generic
    /// type without a `'static` bound) can never be the predicate's type: it is a success,
    /// which is what [`call_with`](Self::call_with) callers such as `#[circuit_breaker]` on
    /// a fn returning borrowed data record.
    #[inline]
    pub fn classify_value<T: Any>(&self, value: &T) -> Outcome {
        if self.has_result_predicate() {
            self.config().classify_result(value)
        } else {
            Outcome::Success
        }
    }

    /// How the config classifies an error: `ignoreExceptions` / `ignore_exception` first
    /// (ignored), then `recordExceptions` / `record_exception` (a failure), else a success;
    /// every error is a failure when no record or ignore setting is given.
    ///
    /// The error must be `'static` because the [`ErrorCatalog`](crate::ErrorCatalog) and the
    /// predicates match errors by type id. For an error type that is not `'static`, see
    /// [`classify_unnamed_error`](Self::classify_unnamed_error).
    #[inline]
    pub fn classify_error<E: Any>(&self, error: &E) -> Outcome {
        if self.errors_are_all_failures() {
            Outcome::Failure
        } else {
            self.config().classify_error(error)
        }
    }

    /// How the config classifies an error that no exception name or predicate can match: an
    /// error whose type is not `'static` (it borrows), which no catalog entry or predicate
    /// can be registered for. A failure when no record or ignore setting is given, and when
    /// only ignore settings are given; a success when `recordExceptions` or
    /// `record_exception` is set (the error is not in the record list), as for any other
    /// error that matches no name.
    #[inline]
    pub fn classify_unnamed_error(&self) -> Outcome {
        /// A type no catalog entry or predicate names.
        struct Unnamed;
        if self.errors_are_all_failures() {
            Outcome::Failure
        } else {
            self.config().classify_error(&Unnamed)
        }
    }
}
