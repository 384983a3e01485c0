//! The runtime of stacked attributes: one composed call whose nesting is decided per call by
//! the global [`StackOrder`], each layer's fallback directly around its layer.
//!
//! The five levels are five distinct fns (no recursion, so no boxing): level `i` runs the
//! `i`-th layer of the order around level `i + 1`; a layer the fn does not have is skipped.
//! Every layer passes `Result<T, StackError<E>>` outwards, so any nesting type-checks.

use core::any::Any;
use core::fmt;
use core::future::{Future, Ready};
use std::sync::{Mutex, OnceLock};

use crate::bulkhead::ThreadPoolBulkheadRegistry;
use crate::bulkhead::{Bulkhead, BulkheadError, BulkheadRegistry, ThreadPoolBulkhead};
use crate::ratelimiter::{RateLimiter, RateLimiterRegistry};
use crate::retry::{Retry, RetryError, RetryRegistry};
use crate::stack::{Aspect, StackError, StackOrder};
use crate::timelimiter::{TimeLimiter, TimeLimiterError, TimeLimiterRegistry};
use crate::{CallError, CircuitBreaker, Outcome};
use breaker_core::drill::Injection;

pub use super::layers::{BulkheadRef, Layers};
pub use breaker_config::modules::ModuleRegistries;

/// The global module registries (`resilience4rs::global_modules()`).
#[inline]
pub fn modules() -> &'static ModuleRegistries {
    crate::global::global_modules()
}

/// The nesting for this call.
#[inline]
pub fn order() -> StackOrder {
    crate::global::global_stack_order()
}

/// The nesting for a call of a fn whose every layer names its own registry: the global
/// order if the global config was set or loaded, else Spring Boot 3's default; never loads
/// the global files.
#[inline]
pub fn order_if_set() -> StackOrder {
    crate::global::stack_order_if_set()
}

/// The retry `name` of `registry`.
#[inline]
pub fn retry(registry: &RetryRegistry, name: &str) -> Retry {
    registry.retry(name)
}

/// The time limiter `name` of `registry`.
#[inline]
pub fn time_limiter(registry: &TimeLimiterRegistry, name: &str) -> TimeLimiter {
    registry.time_limiter(name)
}

/// The semaphore bulkhead `name` of `registry`.
#[inline]
pub fn bulkhead(registry: &BulkheadRegistry, name: &str) -> Bulkhead {
    registry.bulkhead(name)
}

/// The thread-pool bulkhead `name` of `registry`.
#[inline]
pub fn thread_pool_bulkhead(
    registry: &ThreadPoolBulkheadRegistry,
    name: &str,
) -> ThreadPoolBulkhead {
    registry.bulkhead(name)
}

/// The rate limiter `name` of `registry`.
#[inline]
pub fn rate_limiter(registry: &RateLimiterRegistry, name: &str) -> RateLimiter {
    registry.rate_limiter(name)
}

/// A call site's cached instance, for a literal name in the global or a static registry.
pub type Cell<I> = OnceLock<I>;

/// A layer's fallback: called with what escaped the layer, returns the fn's own result.
pub trait LayerFallback<T, E> {
    /// The fallback's future.
    type Future: Future<Output = Result<T, E>>;
    /// Calls the fallback.
    fn call(&self, error: StackError<E>) -> Self::Future;
}

impl<T, E, F, Fut> LayerFallback<T, E> for F
where
    F: Fn(StackError<E>) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    type Future = Fut;
    #[inline(always)]
    fn call(&self, error: StackError<E>) -> Fut {
        self(error)
    }
}

/// The type of an absent fallback.
pub type NoFallback<T, E> = fn(StackError<E>) -> Ready<Result<T, E>>;

/// An absent fallback.
#[inline(always)]
pub fn none<T, E>() -> Option<NoFallback<T, E>> {
    None
}

/// The fallbacks of the five layers.
pub struct Fallbacks<FR, FC, FL, FT, FB> {
    /// `#[retry(fallback = ..)]`.
    pub retry: Option<FR>,
    /// `#[circuit_breaker(fallback = ..)]`.
    pub circuit_breaker: Option<FC>,
    /// `#[rate_limiter(fallback = ..)]`.
    pub rate_limiter: Option<FL>,
    /// `#[time_limiter(fallback = ..)]`.
    pub time_limiter: Option<FT>,
    /// `#[bulkhead(fallback = ..)]`.
    pub bulkhead: Option<FB>,
}

/// The protected body: made once per attempt.
pub trait Attempts {
    /// One attempt's future.
    type Future: Future;
    /// Makes the next attempt's future.
    fn attempt(&self) -> Self::Future;
}

/// A body run once (no `#[retry]` in the stack): the future, taken by the one attempt.
pub struct Once<F>(Mutex<Option<F>>);

/// [`Once`].
#[inline(always)]
pub fn once<F: Future>(future: F) -> Once<F> {
    Once(Mutex::new(Some(future)))
}

impl<F: Future> Attempts for Once<F> {
    type Future = F;
    #[inline]
    fn attempt(&self) -> F {
        match self.0.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(f) => f,
            // Only a retry layer attempts twice, and a stack with one builds `Repeat`.
            None => unreachable!("a stacked fn without #[retry] ran its body twice"),
        }
    }
}

/// A body run once per attempt (`#[retry]` in the stack): a fn making each attempt's future
/// from fresh copies of the arguments.
pub struct Repeat<F>(pub F);

impl<F: Fn() -> Fut, Fut: Future> Attempts for Repeat<F> {
    type Future = Fut;
    #[inline(always)]
    fn attempt(&self) -> Fut {
        (self.0)()
    }
}

/// Everything one stacked call needs.
pub struct Stack<'a, T, B, FR, FC, FL, FT, FB> {
    /// The nesting, outermost first.
    pub order: StackOrder,
    /// What result predicates see of an `Ok` value: [`as_any`], named where `T` is
    /// concrete, so that no async fn here needs `T: 'static` (which would make the `Send`
    /// of a stacked fn's future unprovable for a borrowed `T` such as `&'static str`).
    pub value: fn(&T) -> &dyn Any,
    /// The breaker's classification of an `Ok` value (`recordResult`):
    /// [`classify_value`], named where `T` is concrete, for the same reason.
    pub classify_value: fn(&CircuitBreaker, &T) -> Outcome,
    /// The layers' instances.
    pub layers: Layers<'a>,
    /// The protected body.
    pub body: B,
    /// The layers' fallbacks.
    pub fallbacks: Fallbacks<FR, FC, FL, FT, FB>,
}

/// A value as `&dyn Any`, for [`Stack::value`].
#[inline(always)]
pub fn as_any<T: Any>(value: &T) -> &dyn Any {
    value
}

/// The breaker's classification of an `Ok` value, for [`Stack::classify_value`].
#[inline(always)]
pub fn classify_value<T: Any>(breaker: &CircuitBreaker, value: &T) -> Outcome {
    breaker.classify_value(value)
}

/// Runs the stacked call. `W` is the fn's checked return type (`Result<T, E>`).
#[inline(always)]
pub fn call<'s, 'a, W, B, FR, FC, FL, FT, FB>(
    _checked: W,
    stack: &'s Stack<'a, W::Ok, B, FR, FC, FL, FT, FB>,
) -> impl Future<Output = Result<W::Ok, StackError<W::Err>>> + 's
where
    W: super::Witness,
    W::Err: Any + fmt::Display,
    B: Attempts,
    B::Future: Future<Output = Result<W::Ok, W::Err>>,
    FR: LayerFallback<W::Ok, W::Err>,
    FC: LayerFallback<W::Ok, W::Err>,
    FL: LayerFallback<W::Ok, W::Err>,
    FT: LayerFallback<W::Ok, W::Err>,
    FB: LayerFallback<W::Ok, W::Err>,
{
    level0(stack)
}

// Each layer's code, its fallback written in place (what escaped the layer goes to the
// fallback, whose `Ok` is a success to every outer layer and whose `Err` is the fn's own error
// to them; no fallback: the result as it is, without another future), as a macro: used by its own async fn (a fn with that one layer) and
// written out in every level's match, so a level is one state machine, not three nested
// ones (each nested `async fn` is another copy of the inner future's state on every call).

macro_rules! retry_arm {
    ($s:ident, $next:ident) => {
        match $s.layers.retry {
            Some(retry) => {
                let r = retry
                    .call_classified($s.value, StackError::<E>::cause, &$next)
                    .await
                    .map_err(from_retry);
                match (r, &$s.fallbacks.retry) {
                    (Err(e), Some(f)) => f.call(e).await.map_err(StackError::Inner),
                    (r, _) => r,
                }
            }
            None => $next().await,
        }
    };
}

macro_rules! breaker_arm {
    ($s:ident, $next:ident) => {
        match $s.layers.circuit_breaker {
            Some(breaker) => {
                let r = breaker
                    .call_with(
                        |r| classify(breaker, $s.classify_value, r),
                        Deferred(&$next),
                    )
                    .await
                    .map_err(|e| match e {
                        CallError::Inner(e) => e,
                        CallError::NotPermitted(n) => StackError::CallNotPermitted(n),
                    });
                match (r, &$s.fallbacks.circuit_breaker) {
                    (Err(e), Some(f)) => f.call(e).await.map_err(StackError::Inner),
                    (r, _) => r,
                }
            }
            None => $next().await,
        }
    };
}

macro_rules! rate_limiter_arm {
    ($s:ident, $next:ident) => {
        match $s.layers.rate_limiter {
            Some(limiter) => {
                let r = match limiter.acquire_permission(1).await {
                    Ok(()) => {
                        let r = $next().await;
                        match &r {
                            Ok(v) => limiter.on_result(($s.value)(v)),
                            Err(e) => limiter.on_error(e.cause()),
                        }
                        r
                    }
                    Err(rejected) => Err(StackError::RequestNotPermitted(rejected)),
                };
                match (r, &$s.fallbacks.rate_limiter) {
                    (Err(e), Some(f)) => f.call(e).await.map_err(StackError::Inner),
                    (r, _) => r,
                }
            }
            None => $next().await,
        }
    };
}

macro_rules! time_limiter_arm {
    ($s:ident, $next:ident) => {
        match $s.layers.time_limiter {
            Some(limiter) => {
                let r = limiter.call(Deferred(&$next)).await.map_err(|e| match e {
                    TimeLimiterError::Inner(e) => e,
                    TimeLimiterError::Timeout(t) => StackError::Timeout(t),
                });
                match (r, &$s.fallbacks.time_limiter) {
                    (Err(e), Some(f)) => f.call(e).await.map_err(StackError::Inner),
                    (r, _) => r,
                }
            }
            None => $next().await,
        }
    };
}

macro_rules! bulkhead_arm {
    ($s:ident, $next:ident) => {
        match $s.layers.bulkhead {
            Some(bulkhead) => {
                let r = match bulkhead {
                    BulkheadRef::Semaphore(b) => b.call(Deferred(&$next)).await,
                    BulkheadRef::ThreadPool(b) => b.call(Deferred(&$next)).await,
                }
                .map_err(|e| match e {
                    BulkheadError::Inner(e) => e,
                    BulkheadError::Full(full) => StackError::BulkheadFull(full),
                });
                match (r, &$s.fallbacks.bulkhead) {
                    (Err(e), Some(f)) => f.call(e).await.map_err(StackError::Inner),
                    (r, _) => r,
                }
            }
            None => $next().await,
        }
    };
}

macro_rules! only {
    ($($(#[$doc:meta])* $name:ident => $layer:ident;)*) => {$(
        $(#[$doc])*
        /// A fn with this one layer: no nesting to read, no dispatch over the five levels.
        #[inline(always)]
        pub fn $name<'s, 'a, W, B, FR, FC, FL, FT, FB>(
            _checked: W,
            stack: &'s Stack<'a, W::Ok, B, FR, FC, FL, FT, FB>,
        ) -> impl Future<Output = Result<W::Ok, StackError<W::Err>>> + 's
        where
            W: super::Witness,
            W::Err: Any + fmt::Display,
            B: Attempts,
            B::Future: Future<Output = Result<W::Ok, W::Err>>,
            FR: LayerFallback<W::Ok, W::Err>,
            FC: LayerFallback<W::Ok, W::Err>,
            FL: LayerFallback<W::Ok, W::Err>,
            FT: LayerFallback<W::Ok, W::Err>,
            FB: LayerFallback<W::Ok, W::Err>,
        {
            $layer(stack, || body(stack))
        }
    )*};
}

only! {
    /// Runs a fn whose only layer is `#[retry]`.
    only_retry => retry_layer;
    /// Runs a fn whose only layer is `#[circuit_breaker]` (with a layer fallback).
    only_circuit_breaker => breaker_layer;
    /// Runs a fn whose only layer is `#[rate_limiter]`.
    only_rate_limiter => rate_limiter_layer;
    /// Runs a fn whose only layer is `#[time_limiter]`.
    only_time_limiter => time_limiter_layer;
    /// Runs a fn whose only layer is `#[bulkhead]`.
    only_bulkhead => bulkhead_layer;
}

macro_rules! levels {
    ($($name:ident($index:expr) -> $next:ident;)*) => {$(
        async fn $name<T, E, B, FR, FC, FL, FT, FB>(
            s: &Stack<'_, T, B, FR, FC, FL, FT, FB>,
        ) -> Result<T, StackError<E>>
        where
            E: Any + fmt::Display,
            B: Attempts,
            B::Future: Future<Output = Result<T, E>>,
            FR: LayerFallback<T, E>,
            FC: LayerFallback<T, E>,
            FL: LayerFallback<T, E>,
            FT: LayerFallback<T, E>,
            FB: LayerFallback<T, E>,
        {
            let next = || $next(s);
            match s.order.outermost_first()[$index] {
                Aspect::Retry => retry_arm!(s, next),
                Aspect::CircuitBreaker => breaker_arm!(s, next),
                Aspect::RateLimiter => rate_limiter_arm!(s, next),
                Aspect::TimeLimiter => time_limiter_arm!(s, next),
                Aspect::Bulkhead => bulkhead_arm!(s, next),
            }
        }
    )*};
}

levels! {
    level0(0) -> level1;
    level1(1) -> level2;
    level2(2) -> level3;
    level3(3) -> level4;
    level4(4) -> body;
}

/// The protected body, its error as [`StackError::Inner`].
/// A drill set for one of the fn's instances stands in for the body (see `drill`).
async fn body<T, E, B, FR, FC, FL, FT, FB>(
    s: &Stack<'_, T, B, FR, FC, FL, FT, FB>,
) -> Result<T, StackError<E>>
where
    E: Any,
    B: Attempts,
    B::Future: Future<Output = Result<T, E>>,
{
    if let Some((drills, name, injection)) = super::drill::injection(&s.layers) {
        match injection {
            Injection::Pass => {}
            Injection::Error(kind) => {
                if let Some(e) = super::drill::error(drills, &name, &kind, &s.layers) {
                    return Err(e);
                }
            }
            Injection::Delay(by) => super::drill::delay(drills, by).await,
            Injection::Hang => core::future::pending::<()>().await,
        }
    }
    s.body.attempt().await.map_err(StackError::Inner)
}

/// The next level, made when the layer awaits it. A layer's call takes its inner future as an
/// argument and awaits it, and an `async fn` keeps room for an argument beside its locals, so
/// handing it the future itself would double the size of every level (7.9 KB for five levels
/// instead of about 1.3 KB): this is a reference to the closure that makes it.
struct Deferred<'n, N>(&'n N);

impl<N: Fn() -> NF, NF: Future> core::future::IntoFuture for Deferred<'_, N> {
    type Output = NF::Output;
    type IntoFuture = NF;
    #[inline(always)]
    fn into_future(self) -> NF {
        (self.0)()
    }
}

/// The retry layer (if the fn has it) around `next`, then its fallback (if any).
async fn retry_layer<T, E, B, FR, FC, FL, FT, FB, N, NF>(
    s: &Stack<'_, T, B, FR, FC, FL, FT, FB>,
    next: N,
) -> Result<T, StackError<E>>
where
    E: Any + fmt::Display,
    N: Fn() -> NF,
    NF: Future<Output = Result<T, StackError<E>>>,
    FR: LayerFallback<T, E>,
    FC: LayerFallback<T, E>,
    FL: LayerFallback<T, E>,
    FT: LayerFallback<T, E>,
    FB: LayerFallback<T, E>,
{
    retry_arm!(s, next)
}

/// The circuit-breaker layer (if the fn has it) around `next`, then its fallback (if any).
async fn breaker_layer<T, E, B, FR, FC, FL, FT, FB, N, NF>(
    s: &Stack<'_, T, B, FR, FC, FL, FT, FB>,
    next: N,
) -> Result<T, StackError<E>>
where
    E: Any + fmt::Display,
    N: Fn() -> NF,
    NF: Future<Output = Result<T, StackError<E>>>,
    FR: LayerFallback<T, E>,
    FC: LayerFallback<T, E>,
    FL: LayerFallback<T, E>,
    FT: LayerFallback<T, E>,
    FB: LayerFallback<T, E>,
{
    breaker_arm!(s, next)
}

/// The rate-limiter layer (if the fn has it) around `next`, then its fallback (if any).
async fn rate_limiter_layer<T, E, B, FR, FC, FL, FT, FB, N, NF>(
    s: &Stack<'_, T, B, FR, FC, FL, FT, FB>,
    next: N,
) -> Result<T, StackError<E>>
where
    E: Any + fmt::Display,
    N: Fn() -> NF,
    NF: Future<Output = Result<T, StackError<E>>>,
    FR: LayerFallback<T, E>,
    FC: LayerFallback<T, E>,
    FL: LayerFallback<T, E>,
    FT: LayerFallback<T, E>,
    FB: LayerFallback<T, E>,
{
    rate_limiter_arm!(s, next)
}

/// The time-limiter layer (if the fn has it) around `next`, then its fallback (if any).
async fn time_limiter_layer<T, E, B, FR, FC, FL, FT, FB, N, NF>(
    s: &Stack<'_, T, B, FR, FC, FL, FT, FB>,
    next: N,
) -> Result<T, StackError<E>>
where
    E: Any + fmt::Display,
    N: Fn() -> NF,
    NF: Future<Output = Result<T, StackError<E>>>,
    FR: LayerFallback<T, E>,
    FC: LayerFallback<T, E>,
    FL: LayerFallback<T, E>,
    FT: LayerFallback<T, E>,
    FB: LayerFallback<T, E>,
{
    time_limiter_arm!(s, next)
}

/// The bulkhead layer (if the fn has it) around `next`, then its fallback (if any).
async fn bulkhead_layer<T, E, B, FR, FC, FL, FT, FB, N, NF>(
    s: &Stack<'_, T, B, FR, FC, FL, FT, FB>,
    next: N,
) -> Result<T, StackError<E>>
where
    E: Any + fmt::Display,
    N: Fn() -> NF,
    NF: Future<Output = Result<T, StackError<E>>>,
    FR: LayerFallback<T, E>,
    FC: LayerFallback<T, E>,
    FL: LayerFallback<T, E>,
    FT: LayerFallback<T, E>,
    FB: LayerFallback<T, E>,
{
    bulkhead_arm!(s, next)
}

/// The breaker's classification of what escaped the inner layers: the fn's own error or an
/// inner layer's rejection, by its type (`recordExceptions`, `ignoreExceptions`, ...).
#[inline]
fn classify<T, E: Any>(
    breaker: &CircuitBreaker,
    value: fn(&CircuitBreaker, &T) -> Outcome,
    r: &Result<T, StackError<E>>,
) -> Outcome {
    match r {
        Ok(v) => value(breaker, v),
        Err(StackError::Inner(e)) => breaker.classify_error(e),
        Err(StackError::CallNotPermitted(x)) => breaker.classify_error(x),
        Err(StackError::Timeout(x)) => breaker.classify_error(x),
        Err(StackError::BulkheadFull(x)) => breaker.classify_error(x),
        Err(StackError::RequestNotPermitted(x)) => breaker.classify_error(x),
        Err(StackError::MaxRetriesExceeded(x)) => breaker.classify_error(x),
        Err(StackError::WaitInterval(x)) => breaker.classify_error(x),
    }
}

#[inline]
fn from_retry<E>(e: RetryError<StackError<E>>) -> StackError<E> {
    match e {
        RetryError::Inner(e) => e,
        RetryError::MaxRetriesExceeded(m) => StackError::MaxRetriesExceeded(m),
        RetryError::WaitInterval(w) => StackError::WaitInterval(w),
    }
}

/// An exact-Resilience4j-mode retry interval that Resilience4j rejects while computing it,
/// with no retry fallback to receive it: Resilience4j throws its `IllegalArgumentException`
/// to the caller; a fn's error type has no place for it, so it panics with the message.
#[cold]
pub fn wait_interval_failed(error: crate::retry::WaitIntervalError) -> ! {
    panic!("breaker: retry interval rejected (exact Resilience4j mode): {error}")
}

/// A rejection of a layer that has a fallback (or that the fn does not have) reached the
/// top: impossible, since a layer's fallback directly wraps the layer.
#[cold]
pub fn answered(layer: &str) -> ! {
    unreachable!("breaker: a rejection of {layer} escaped its own fallback")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each level holds the next level's future once: the stacked future grows by a bounded
    /// amount per level (a level that kept it twice, as an `async fn` taking the future as an
    /// argument does, doubled the size at every level).
    #[test]
    fn each_level_adds_a_bounded_amount() {
        let s: Stack<
            '_,
            u64,
            Once<core::future::Ready<Result<u64, std::io::Error>>>,
            _,
            _,
            _,
            _,
            _,
        > = Stack {
            order: StackOrder::DEFAULT,
            value: as_any::<u64>,
            classify_value: classify_value::<u64>,
            layers: Layers::default(),
            body: once(core::future::ready(Ok(1))),
            fallbacks: Fallbacks {
                retry: none(),
                circuit_breaker: none(),
                rate_limiter: none(),
                time_limiter: none(),
                bulkhead: none(),
            },
        };
        let sizes = [
            core::mem::size_of_val(&body(&s)),
            core::mem::size_of_val(&level4(&s)),
            core::mem::size_of_val(&level3(&s)),
            core::mem::size_of_val(&level2(&s)),
            core::mem::size_of_val(&level1(&s)),
            core::mem::size_of_val(&level0(&s)),
        ];
        println!("{sizes:?}");
        for pair in sizes.windows(2) {
            assert!(pair[1] <= pair[0] + 768, "{sizes:?}");
        }
    }
}
