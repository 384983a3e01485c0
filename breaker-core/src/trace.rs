//! Events as `tracing` events, at the levels an operator expects: a circuit breaker's state
//! transitions (WARN into OPEN and FORCED_OPEN, INFO otherwise), and rejections, timeouts and
//! exhausted retries summarised (WARN, at most one event per instance and kind every
//! [`SUMMARY_INTERVAL`], with the count since the last one), never one event per call.
//!
//! Opt in per registry ([`circuit_breakers`], [`instances`]) or per breaker
//! ([`circuit_breaker`]): each subscribes to the instances' events, which makes every call
//! build its events (the cost of any subscriber). Targets are `breaker::circuit_breaker`,
//! `breaker::retry`, `breaker::time_limiter`, `breaker::bulkhead` and
//! `breaker::rate_limiter`; fields are structured (`name`, `from`, `to`, `rejected`, ...).
//!
//! ```
//! use breaker_core::{trace, Registry};
//! let registry = Registry::new();
//! trace::circuit_breakers(&registry); // this breaker and every later one
//! registry.circuit_breaker("payments").transition_to_forced_open_state().unwrap();
//! // WARN breaker::circuit_breaker: CircuitBreaker 'payments' changed state from CLOSED to FORCED_OPEN name="payments" from="CLOSED" to="FORCED_OPEN"
//! ```
//!
//! For a span around each protected call, instrument the future you protect
//! (`cb.call(fut.instrument(tracing::info_span!("payment")))`), or ask the tower layers for
//! one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::breaker::CircuitBreaker;
use crate::bulkhead::{BulkheadEvent, BulkheadEventType};
use crate::events::{CircuitBreakerEvent, EventKind, SubscriptionId};
use crate::instance_registry::{InstanceRegistry, RegistryEntryEvent, RegistryInstance};
use crate::ratelimiter::{RateLimiterEvent, RateLimiterEventType};
use crate::registry::{Registry, RegistryEvent};
use crate::retry::{RetryEvent, RetryEventType};
use crate::state::State;
use crate::timelimiter::{TimeLimiterEvent, TimeLimiterEventType};

/// The shortest time between two summaries of one instance's rejections (or timeouts, or
/// exhausted retries): 10 s.
pub const SUMMARY_INTERVAL_NANOS: u64 = 10_000_000_000;

/// [`SUMMARY_INTERVAL_NANOS`] as a duration.
pub const SUMMARY_INTERVAL: std::time::Duration =
    std::time::Duration::from_nanos(SUMMARY_INTERVAL_NANOS);

/// Counts occurrences (rejections, timeouts, exhausted retries) and says when to log them:
/// at the first one, then at most once per [`SUMMARY_INTERVAL`], with the count since the
/// last summary. What a window counted after its summary is logged when the window ends,
/// if the instance has gone quiet by then (a tokio timer, with the `tokio` feature inside a
/// runtime), or at the breaker's next state change, whichever comes first: no count is
/// left unlogged until the next occurrence.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    inner: Arc<SummaryInner>,
}

#[derive(Debug, Default)]
struct SummaryInner {
    pending: AtomicU64,
    /// When the last summary was logged (event time, epoch ns); 0: never.
    last: AtomicU64,
    /// A timer will log the current window's count when it ends.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    flush_armed: AtomicBool,
}

impl Summary {
    /// Counts one at `now`; `Some(count)` when a summary is due.
    fn hit(&self, now: u64) -> Option<u64> {
        let s = &self.inner;
        s.pending.fetch_add(1, Ordering::Relaxed);
        let last = s.last.load(Ordering::Relaxed);
        if last != 0 && now < last.saturating_add(SUMMARY_INTERVAL_NANOS) {
            return None;
        }
        s.last
            .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
            .ok()?;
        Some(s.pending.swap(0, Ordering::Relaxed))
    }

    /// The count not yet logged, reset.
    fn take(&self) -> u64 {
        self.inner.pending.swap(0, Ordering::Relaxed)
    }

    /// After a hit that logged nothing at `now`: makes sure the count is logged (by `log`,
    /// given the count and the seconds since the last summary) when the window ends, unless
    /// a summary or a state change has logged it by then. Needs the `tokio` feature and a
    /// runtime; without them the count waits for the next summary.
    /// `make_log` is called only when a timer is armed (once per window).
    fn flush_when_quiet<L: FnOnce(u64, f64) + Send + 'static>(
        &self,
        now: u64,
        make_log: impl FnOnce() -> L,
    ) {
        #[cfg(feature = "tokio")]
        {
            if self.inner.flush_armed.load(Ordering::Relaxed) {
                return;
            }
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return;
            };
            let s = self.inner.clone();
            if s.flush_armed.swap(true, Ordering::AcqRel) {
                return;
            }
            let log = make_log();
            let last = s.last.load(Ordering::Relaxed);
            let end = last.saturating_add(SUMMARY_INTERVAL_NANOS);
            let wait = std::time::Duration::from_nanos(end.saturating_sub(now));
            runtime.spawn(async move {
                tokio::time::sleep(wait).await;
                s.flush_armed.store(false, Ordering::Release);
                // A summary logged since (the window ended early by the event clock) took
                // the count; else this window's summary is this one.
                if s.last
                    .compare_exchange(last, end, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                {
                    let n = s.pending.swap(0, Ordering::Relaxed);
                    if n > 0 {
                        log(n, since(last, end));
                    }
                }
            });
        }
        #[cfg(not(feature = "tokio"))]
        let _ = (now, make_log);
    }
}

fn since(last: u64, now: u64) -> f64 {
    if last == 0 {
        0.0
    } else {
        now.saturating_sub(last) as f64 / 1e9
    }
}

/// Logs the events of `breaker` from now on; returns the subscription (to
/// [`CircuitBreaker::unsubscribe`]).
pub fn circuit_breaker(breaker: &CircuitBreaker) -> SubscriptionId {
    let rejections = Summary::default();
    breaker.subscribe(move |e: &CircuitBreakerEvent| breaker_event(e, &rejections))
}

fn breaker_rejections(name: &str, n: u64, since_s: f64) {
    tracing::warn!(
        target: "breaker::circuit_breaker",
        name,
        rejected = n,
        since_s,
        "CircuitBreaker '{name}' rejected {n} call{}",
        if n == 1 { "" } else { "s" }
    );
}

fn breaker_event(e: &CircuitBreakerEvent, rejections: &Summary) {
    let name = &*e.circuit_breaker_name;
    match e.kind {
        EventKind::NotPermitted => {
            let last = rejections.inner.last.load(Ordering::Relaxed);
            match rejections.hit(e.creation_time_nanos) {
                Some(n) => breaker_rejections(name, n, since(last, e.creation_time_nanos)),
                None => rejections.flush_when_quiet(e.creation_time_nanos, || {
                    let name: Arc<str> = e.circuit_breaker_name.clone();
                    move |n, since_s| breaker_rejections(&name, n, since_s)
                }),
            }
        }
        EventKind::StateTransition { from, to } => {
            let pending = rejections.take();
            if pending > 0 {
                tracing::warn!(
                    target: "breaker::circuit_breaker",
                    name,
                    rejected = pending,
                    "CircuitBreaker '{name}' rejected {pending} more call{} while {from}",
                    if pending == 1 { "" } else { "s" }
                );
            }
            if matches!(to, State::Open | State::ForcedOpen) {
                tracing::warn!(target: "breaker::circuit_breaker", name, from = from.name(), to = to.name(), "{e}");
            } else {
                tracing::info!(target: "breaker::circuit_breaker", name, from = from.name(), to = to.name(), "{e}");
            }
        }
        EventKind::Reset => {
            tracing::info!(target: "breaker::circuit_breaker", name, "{e}");
        }
        EventKind::FailureRateExceeded { failure_rate } => {
            tracing::debug!(target: "breaker::circuit_breaker", name, failure_rate, "{e}");
        }
        EventKind::SlowCallRateExceeded { slow_call_rate } => {
            tracing::debug!(target: "breaker::circuit_breaker", name, slow_call_rate, "{e}");
        }
        EventKind::Success { .. } | EventKind::Error { .. } | EventKind::IgnoredError { .. } => {}
    }
}

/// Logs the events of every breaker of `registry`, those that exist and those created later.
pub fn circuit_breakers(registry: &Registry) {
    let subs: Arc<Mutex<HashMap<String, (CircuitBreaker, SubscriptionId)>>> = Arc::default();
    let add = {
        let subs = subs.clone();
        move |b: &CircuitBreaker| {
            let id = circuit_breaker(b);
            let old = subs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(b.name().to_string(), (b.clone(), id));
            if let Some((b, id)) = old {
                b.unsubscribe(id);
            }
        }
    };
    let on_event = {
        let add = add.clone();
        move |e: &RegistryEvent| match e {
            RegistryEvent::Added(b) => add(b),
            RegistryEvent::Removed(b) => {
                let old = subs
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(b.name());
                if let Some((b, id)) = old {
                    b.unsubscribe(id);
                }
            }
            RegistryEvent::Replaced { .. } => {}
        }
    };
    registry.subscribe(on_event);
    for b in registry.all() {
        add(&b);
    }
}

/// A module's events, as `tracing` events.
pub trait TracedEvent: Sized {
    /// What one subscription keeps between events (the summaries).
    type State: Default + Send + Sync + 'static;
    /// Logs `self` if an operator wants to see it.
    fn trace(&self, state: &Self::State);
}

/// Logs the events of every instance of `registry`, those that exist and those created
/// later.
pub fn instances<I>(registry: &InstanceRegistry<I>)
where
    I: RegistryInstance,
    I::Event: TracedEvent,
{
    let subscribe = |i: &I| {
        let state = <I::Event as TracedEvent>::State::default();
        i.event_publisher()
            .subscribe(move |e: &I::Event| e.trace(&state))
    };
    let subs: Arc<Mutex<HashMap<String, (I, SubscriptionId)>>> = Arc::default();
    let add = {
        let subs = subs.clone();
        move |i: &I| {
            let id = subscribe(i);
            let old = subs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(i.name().to_string(), (i.clone(), id));
            if let Some((i, id)) = old {
                i.event_publisher().unsubscribe(id);
            }
        }
    };
    let on_event = {
        let add = add.clone();
        move |e: &RegistryEntryEvent<I, I::Config>| match e {
            RegistryEntryEvent::Added(i) => add(i),
            RegistryEntryEvent::Removed(i) => {
                let old = subs
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(i.name());
                if let Some((i, id)) = old {
                    i.event_publisher().unsubscribe(id);
                }
            }
            RegistryEntryEvent::Replaced { .. } => {}
        }
    };
    registry.subscribe(on_event);
    for i in registry.all() {
        add(&i);
    }
}

/// Logs one summary of `what` for `name` when due, else makes sure the window's count is
/// logged when it ends.
fn summarise(summary: &Summary, now: u64, target: Target, name: &str, what: &'static str) {
    let last = summary.inner.last.load(Ordering::Relaxed);
    match summary.hit(now) {
        Some(n) => log_summary(target, name, what, n, since(last, now)),
        None => summary.flush_when_quiet(now, || {
            let name = name.to_string();
            move |n, since_s| log_summary(target, &name, what, n, since_s)
        }),
    }
}

fn log_summary(target: Target, name: &str, what: &str, n: u64, since_s: f64) {
    match target {
        Target::Retry => {
            tracing::warn!(target: "breaker::retry", name, count = n, since_s, "Retry '{name}' {what}: {n}")
        }
        Target::TimeLimiter => {
            tracing::warn!(target: "breaker::time_limiter", name, count = n, since_s, "TimeLimiter '{name}' {what}: {n}")
        }
        Target::Bulkhead => {
            tracing::warn!(target: "breaker::bulkhead", name, rejected = n, since_s, "Bulkhead '{name}' {what}: {n}")
        }
        Target::RateLimiter => {
            tracing::warn!(target: "breaker::rate_limiter", name, rejected = n, since_s, "RateLimiter '{name}' {what}: {n}")
        }
    }
}

#[derive(Clone, Copy)]
enum Target {
    Retry,
    TimeLimiter,
    Bulkhead,
    RateLimiter,
}

impl TracedEvent for RetryEvent {
    type State = Summary;
    fn trace(&self, exhausted: &Summary) {
        let name = &*self.retry_name;
        match self.event_type {
            RetryEventType::Retry => tracing::debug!(
                target: "breaker::retry",
                name,
                attempt = self.number_of_retry_attempts,
                wait_ms = self.wait_interval.map_or(0, |d| d.as_millis() as u64),
                "{self}"
            ),
            RetryEventType::Error => summarise(
                exhausted,
                self.creation_time_nanos,
                Target::Retry,
                name,
                "calls that failed after their last attempt",
            ),
            RetryEventType::DeadlineExceeded | RetryEventType::BudgetExhausted => tracing::debug!(
                target: "breaker::retry",
                name,
                attempt = self.number_of_retry_attempts,
                "{self}"
            ),
            RetryEventType::Success | RetryEventType::IgnoredError => {}
        }
    }
}

impl TracedEvent for TimeLimiterEvent {
    type State = Summary;
    fn trace(&self, timeouts: &Summary) {
        if self.event_type == TimeLimiterEventType::Timeout {
            summarise(
                timeouts,
                self.creation_time_nanos,
                Target::TimeLimiter,
                &self.time_limiter_name,
                "calls timed out",
            );
        }
    }
}

impl TracedEvent for BulkheadEvent {
    type State = Summary;
    fn trace(&self, rejections: &Summary) {
        if self.event_type == BulkheadEventType::CallRejected {
            summarise(
                rejections,
                self.creation_time_nanos,
                Target::Bulkhead,
                &self.bulkhead_name,
                "calls rejected (full)",
            );
        }
    }
}

impl TracedEvent for RateLimiterEvent {
    type State = Summary;
    fn trace(&self, rejections: &Summary) {
        if self.event_type == RateLimiterEventType::FailedAcquire {
            summarise(
                rejections,
                self.creation_time_nanos,
                Target::RateLimiter,
                &self.rate_limiter_name,
                "calls rejected (rate limited)",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_is_due_at_the_first_hit_then_once_per_interval() {
        let s = Summary::default();
        let t = 1_000 * SUMMARY_INTERVAL_NANOS;
        assert_eq!(s.hit(t), Some(1));
        assert_eq!(s.hit(t + 1), None);
        assert_eq!(s.hit(t + SUMMARY_INTERVAL_NANOS - 1), None);
        assert_eq!(s.hit(t + SUMMARY_INTERVAL_NANOS), Some(3));
        assert_eq!(s.hit(t + SUMMARY_INTERVAL_NANOS + 5), None);
        assert_eq!(s.take(), 1);
        assert_eq!(s.take(), 0);
    }
}
