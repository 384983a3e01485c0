//! The drill layer of stacked attributes: innermost, in place of the protected body (issue
//! #28). With no drill set in the process, [`injection`] is one relaxed atomic load.

use core::any::Any;
use std::time::Duration;

use breaker_core::drill::{rejections, DrillErrorKind, DrillRegistry, Injection, Rejection};

use super::layers::{BulkheadRef, Layers};
use crate::stack::StackError;

/// What the drill of one of the fn's instances does to this call (the first of its circuit
/// breaker, retry, time limiter, bulkhead and rate limiter names that has a drill).
#[inline(always)]
pub(crate) fn injection(
    layers: &Layers<'_>,
) -> Option<(&'static DrillRegistry, String, Injection)> {
    if !breaker_core::drill::any_configured() {
        return None;
    }
    find(layers)
}

#[inline(never)]
fn find(l: &Layers<'_>) -> Option<(&'static DrillRegistry, String, Injection)> {
    let drills = crate::global_drills()?;
    if !drills.any() {
        return None;
    }
    let names = [
        l.circuit_breaker.map(|c| c.name()),
        l.retry.map(|r| r.name()),
        l.time_limiter.map(|t| t.name()),
        l.bulkhead.map(|b| match b {
            BulkheadRef::Semaphore(b) => b.name(),
            BulkheadRef::ThreadPool(b) => b.name(),
        }),
        l.rate_limiter.map(|r| r.name()),
    ];
    let name = names
        .into_iter()
        .flatten()
        .find(|n| drills.drill(n).is_some_and(|d| d.config().is_some()))?;
    let injection = drills.decide(name);
    Some((drills, name.to_owned(), injection))
}

/// The error a drill injects, as the stack passes it outwards; `None` for a named error
/// with no maker registered for `E` (the call then runs, with a warning).
#[cold]
pub(crate) fn error<E: Any>(
    drills: &DrillRegistry,
    name: &str,
    kind: &DrillErrorKind,
    l: &Layers<'_>,
) -> Option<StackError<E>> {
    let own = |layer: Option<&str>| layer.unwrap_or(name).to_owned();
    Some(match kind {
        DrillErrorKind::Rejection(Rejection::CallNotPermitted) => {
            StackError::CallNotPermitted(rejections::call_not_permitted(
                &own(l.circuit_breaker.map(|c| c.name())),
                drills.clock().now_nanos(),
            ))
        }
        DrillErrorKind::Rejection(Rejection::Timeout) => {
            let (n, d) = match l.time_limiter {
                Some(t) => (t.name(), t.config().timeout_duration()),
                None => (name, Duration::ZERO),
            };
            StackError::Timeout(rejections::timeout(n, d))
        }
        DrillErrorKind::Rejection(Rejection::BulkheadFull) => {
            let n = l.bulkhead.map(|b| match b {
                BulkheadRef::Semaphore(b) => b.name(),
                BulkheadRef::ThreadPool(b) => b.name(),
            });
            StackError::BulkheadFull(rejections::bulkhead_full(&own(n)))
        }
        DrillErrorKind::Rejection(Rejection::RequestNotPermitted) => {
            StackError::RequestNotPermitted(rejections::request_not_permitted(&own(l
                .rate_limiter
                .map(|r| r.name()))))
        }
        DrillErrorKind::Named(error) => match drills.make_error::<E>(error) {
            Some(e) => StackError::Inner(e),
            None => {
                tracing::warn!(
                    target: "breaker::drill",
                    name,
                    error = %error,
                    "drill of {name} cannot make '{error}' as this fn's error type; register it with DrillRegistry::register_error. The call runs undisturbed"
                );
                return None;
            }
        },
    })
}

/// Waits out an injected latency on the drills' clock.
pub(crate) async fn delay(drills: &DrillRegistry, by: Duration) {
    drills.clock().sleep(by).await
}

/// The protected future of a fn with `#[circuit_breaker]` alone, under the breaker's drill
/// (decided when the breaker has admitted the call): latency and hangs apply. An error
/// cannot be injected there, since a lone breaker's error type need not be `'static` (it
/// may borrow, or be a generic parameter), so it cannot be made by name: such a drill
/// leaves the call alone, with a warning (stack another attribute, or use the core API's
/// `DrillRegistry::call`).
#[inline(always)]
pub(crate) async fn single<F: core::future::Future>(
    breaker: &crate::CircuitBreaker,
    future: F,
) -> F::Output {
    if breaker_core::drill::any_configured() {
        let layers = Layers {
            circuit_breaker: Some(breaker),
            ..Layers::default()
        };
        if let Some((drills, name, injection)) = find(&layers) {
            match injection {
                Injection::Pass => {}
                Injection::Error(kind) => tracing::warn!(
                    target: "breaker::drill",
                    name,
                    "drill of {name} injects {kind}, which a fn with #[circuit_breaker] alone cannot carry (its error type need not be 'static); the call runs undisturbed"
                ),
                Injection::Delay(by) => delay(drills, by).await,
                Injection::Hang => core::future::pending::<()>().await,
            }
        }
    }
    future.await
}
