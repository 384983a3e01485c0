//! The stack: how the five attributes nest on one fn, and the error its layers pass outwards.
//!
//! Spring applies `@Retry`, `@CircuitBreaker`, `@RateLimiter`, `@TimeLimiter` and `@Bulkhead`
//! as aspects ordered by their `*AspectOrder` properties: the lowest value is the outermost
//! layer (integration spec §1). With Spring Boot 3's defaults that is
//!
//! ```text
//! Retry( CircuitBreaker( RateLimiter( TimeLimiter( Bulkhead( fn ) ) ) ) )
//! ```
//!
//! Any textual order of the attributes on a fn gives one composed call, nested at run time by
//! [`StackOrder`]: the aspect orders of the global config (`resilience4rs::global()`), read
//! on every call, so a reload that changes them changes the nesting of the next call. Equal
//! orders keep the default nesting (Spring leaves them undefined).
//!
//! Every layer of a stack passes [`StackError`] outwards: the fn's own error, or a layer's
//! rejection. Each layer's fallback wraps that layer only (spec §2.2): it receives what
//! escapes the layer, and a fallback that returns `Ok` is a success to every outer layer.

use std::fmt;

use breaker_config::modules::AspectOrder;

use crate::bulkhead::BulkheadFullException;
use crate::ratelimiter::RequestNotPermitted;
use crate::retry::{MaxRetriesExceeded, WaitIntervalError};
use crate::timelimiter::Timeout;
use crate::CallNotPermitted;

/// One layer of the stack: one of Resilience4j's five aspects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Aspect {
    /// `#[retry]` (`resilience4j.retry.retryAspectOrder`, default 2147483642).
    Retry,
    /// `#[circuit_breaker]` (`resilience4j.circuitbreaker.circuitBreakerAspectOrder`,
    /// default 2147483643).
    CircuitBreaker,
    /// `#[rate_limiter]` (`resilience4j.ratelimiter.rateLimiterAspectOrder`, default
    /// 2147483644).
    RateLimiter,
    /// `#[time_limiter]` (`resilience4j.timelimiter.timeLimiterAspectOrder`, default
    /// 2147483645).
    TimeLimiter,
    /// `#[bulkhead]`, semaphore or thread-pool (`resilience4j.bulkhead.bulkheadAspectOrder`,
    /// default 2147483646).
    Bulkhead,
}

impl Aspect {
    const ALL: [Aspect; 5] = [
        Aspect::Retry,
        Aspect::CircuitBreaker,
        Aspect::RateLimiter,
        Aspect::TimeLimiter,
        Aspect::Bulkhead,
    ];

    fn index(self) -> u32 {
        self as u32
    }

    fn from_index(i: u32) -> Aspect {
        Aspect::ALL[(i as usize).min(4)]
    }

    /// The layer's name as `AspectOrder::outermost_first` and `breaker check` print it:
    /// `retry`, `circuitbreaker`, `ratelimiter`, `timelimiter`, `bulkhead`.
    pub fn key(self) -> &'static str {
        match self {
            Aspect::Retry => "retry",
            Aspect::CircuitBreaker => "circuitbreaker",
            Aspect::RateLimiter => "ratelimiter",
            Aspect::TimeLimiter => "timelimiter",
            Aspect::Bulkhead => "bulkhead",
        }
    }
}

impl fmt::Display for Aspect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Aspect::Retry => "Retry",
            Aspect::CircuitBreaker => "CircuitBreaker",
            Aspect::RateLimiter => "RateLimiter",
            Aspect::TimeLimiter => "TimeLimiter",
            Aspect::Bulkhead => "Bulkhead",
        })
    }
}

/// The nesting of the five layers, outermost first.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct StackOrder([Aspect; 5]);

impl StackOrder {
    /// Spring Boot 3's default: `Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(fn)))))`.
    pub const DEFAULT: StackOrder = StackOrder(Aspect::ALL);

    /// The nesting the aspect orders of a Spring file give: the lowest value outermost; equal
    /// values keep the default nesting.
    pub fn from_aspect_order(order: &AspectOrder) -> Self {
        let mut v = [
            (order.retry.value, Aspect::Retry),
            (order.circuit_breaker.value, Aspect::CircuitBreaker),
            (order.rate_limiter.value, Aspect::RateLimiter),
            (order.time_limiter.value, Aspect::TimeLimiter),
            (order.bulkhead.value, Aspect::Bulkhead),
        ];
        // Stable: equal values keep the default nesting.
        v.sort_by_key(|(o, _)| *o);
        StackOrder(v.map(|(_, a)| a))
    }

    /// The nesting from explicit aspect-order values (`retry`, `circuitBreaker`,
    /// `rateLimiter`, `timeLimiter`, `bulkhead`), as the `*AspectOrder` properties give them.
    pub fn from_values(
        retry: i32,
        circuit_breaker: i32,
        rate_limiter: i32,
        time_limiter: i32,
        bulkhead: i32,
    ) -> Self {
        let mut v = [
            (retry, Aspect::Retry),
            (circuit_breaker, Aspect::CircuitBreaker),
            (rate_limiter, Aspect::RateLimiter),
            (time_limiter, Aspect::TimeLimiter),
            (bulkhead, Aspect::Bulkhead),
        ];
        v.sort_by_key(|(o, _)| *o);
        StackOrder(v.map(|(_, a)| a))
    }

    /// The five layers, outermost first.
    pub fn outermost_first(&self) -> [Aspect; 5] {
        self.0
    }

    /// Three bits per layer, outermost in the lowest bits: one atomic word.
    pub(crate) fn pack(self) -> u32 {
        self.0
            .iter()
            .enumerate()
            .fold(0, |acc, (i, a)| acc | (a.index() << (3 * i)))
    }

    pub(crate) fn unpack(bits: u32) -> Self {
        StackOrder(std::array::from_fn(|i| {
            Aspect::from_index((bits >> (3 * i)) & 0b111)
        }))
    }
}

impl Default for StackOrder {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Debug for StackOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for StackOrder {
    /// `Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(fn)))))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for a in self.0 {
            write!(f, "{a}(")?;
        }
        f.write_str("fn")?;
        for _ in self.0 {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// What escapes a layer of a stack: the protected fn's own error, or the rejection of a
/// layer (Resilience4j's exception of that layer, with its message). A stacked fn's
/// fallbacks receive it, since with the nesting decided at run time any layer may sit
/// inside any other.
#[derive(Debug, Clone, PartialEq)]
pub enum StackError<E> {
    /// The protected fn's own error (or one a fallback returned).
    Inner(E),
    /// The circuit breaker is OPEN (or HALF_OPEN without a trial permit):
    /// `CallNotPermittedException`.
    CallNotPermitted(CallNotPermitted),
    /// The time limiter's `timeoutDuration` ran out: `TimeoutException`.
    Timeout(Timeout),
    /// The bulkhead (semaphore or thread pool) is full: `BulkheadFullException`.
    BulkheadFull(BulkheadFullException),
    /// The rate limiter has no permit within its `timeoutDuration`: `RequestNotPermitted`.
    RequestNotPermitted(RequestNotPermitted),
    /// The retry's results ran out with `failAfterMaxAttempts`: `MaxRetriesExceededException`.
    MaxRetriesExceeded(MaxRetriesExceeded),
    /// Exact-Resilience4j mode only: a retry interval Resilience4j rejects when computing it.
    WaitInterval(WaitIntervalError),
}

impl<E> StackError<E> {
    /// The protected fn's own error, or `None` for a layer's rejection.
    pub fn into_inner(self) -> Option<E> {
        match self {
            StackError::Inner(e) => Some(e),
            _ => None,
        }
    }

    /// The protected fn's own error, by reference.
    pub fn inner(&self) -> Option<&E> {
        match self {
            StackError::Inner(e) => Some(e),
            _ => None,
        }
    }

    /// Whether this is a layer's rejection (not the fn's own error).
    pub fn is_rejection(&self) -> bool {
        !matches!(self, StackError::Inner(_))
    }

    /// The layer that rejected the call, or `None` for the fn's own error.
    pub fn rejected_by(&self) -> Option<Aspect> {
        match self {
            StackError::Inner(_) => None,
            StackError::CallNotPermitted(_) => Some(Aspect::CircuitBreaker),
            StackError::Timeout(_) => Some(Aspect::TimeLimiter),
            StackError::BulkheadFull(_) => Some(Aspect::Bulkhead),
            StackError::RequestNotPermitted(_) => Some(Aspect::RateLimiter),
            StackError::MaxRetriesExceeded(_) | StackError::WaitInterval(_) => Some(Aspect::Retry),
        }
    }

    /// The error the layers' exception settings see (`recordExceptions`,
    /// `ignoreExceptions`, `retryExceptions`, an `ErrorCatalog` entry, a predicate): the
    /// fn's own error, or the rejection itself (register e.g. `CallNotPermitted` in the
    /// catalog as `io.github.resilience4j.circuitbreaker.CallNotPermittedException`).
    pub fn cause(&self) -> &dyn std::any::Any
    where
        E: 'static,
    {
        match self {
            StackError::Inner(e) => e,
            StackError::CallNotPermitted(x) => x,
            StackError::Timeout(x) => x,
            StackError::BulkheadFull(x) => x,
            StackError::RequestNotPermitted(x) => x,
            StackError::MaxRetriesExceeded(x) => x,
            StackError::WaitInterval(x) => x,
        }
    }
}

impl<E: fmt::Display> fmt::Display for StackError<E> {
    /// The fn's own error's text, or Resilience4j's message of the rejection.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StackError::Inner(e) => e.fmt(f),
            StackError::CallNotPermitted(x) => x.fmt(f),
            StackError::Timeout(x) => x.fmt(f),
            StackError::BulkheadFull(x) => x.fmt(f),
            StackError::RequestNotPermitted(x) => x.fmt(f),
            StackError::MaxRetriesExceeded(x) => x.fmt(f),
            StackError::WaitInterval(x) => x.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for StackError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StackError::Inner(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_nesting_is_spring_boot_3s() {
        assert_eq!(
            StackOrder::default().to_string(),
            "Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(fn)))))"
        );
        let spring = StackOrder::from_aspect_order(&AspectOrder::default());
        assert_eq!(spring, StackOrder::DEFAULT);
    }

    #[test]
    fn lowest_value_is_outermost_and_ties_keep_the_default() {
        // The Boot 3 test YAML of spec §1.1: Retry 399, CB 400, RL 401, TL 398.
        let o = StackOrder::from_values(399, 400, 401, 398, i32::MAX - 1);
        assert_eq!(
            o.to_string(),
            "TimeLimiter(Retry(CircuitBreaker(RateLimiter(Bulkhead(fn)))))"
        );
        let tie = StackOrder::from_values(1, 1, 1, 1, 1);
        assert_eq!(tie, StackOrder::DEFAULT);
    }

    #[test]
    fn packs_into_one_word() {
        let o = StackOrder::from_values(5, 4, 3, 2, 1);
        assert_eq!(StackOrder::unpack(o.pack()), o);
        assert_eq!(
            StackOrder::unpack(StackOrder::DEFAULT.pack()),
            StackOrder::DEFAULT
        );
    }
}
