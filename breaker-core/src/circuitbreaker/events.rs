//! Circuit-breaker events (Resilience4j's `CircuitBreakerEvent` types), subscribers and a
//! bounded buffer of recent events.

use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use arc_swap::ArcSwap;

use crate::state::State;
use crate::throwable::{Throwable, ThrowableText};

/// Resilience4j's `CircuitBreakerEvent.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// `SUCCESS`
    Success,
    /// `ERROR`
    Error,
    /// `IGNORED_ERROR`
    IgnoredError,
    /// `NOT_PERMITTED`
    NotPermitted,
    /// `STATE_TRANSITION`
    StateTransition,
    /// `RESET`
    Reset,
    /// `FAILURE_RATE_EXCEEDED`
    FailureRateExceeded,
    /// `SLOW_CALL_RATE_EXCEEDED`
    SlowCallRateExceeded,
}

impl EventType {
    /// Resilience4j's name, e.g. `NOT_PERMITTED`.
    pub const fn name(self) -> &'static str {
        match self {
            EventType::Success => "SUCCESS",
            EventType::Error => "ERROR",
            EventType::IgnoredError => "IGNORED_ERROR",
            EventType::NotPermitted => "NOT_PERMITTED",
            EventType::StateTransition => "STATE_TRANSITION",
            EventType::Reset => "RESET",
            EventType::FailureRateExceeded => "FAILURE_RATE_EXCEEDED",
            EventType::SlowCallRateExceeded => "SLOW_CALL_RATE_EXCEEDED",
        }
    }

    /// Resilience4j's `forcePublish`: STATE_TRANSITION and RESET are published in every
    /// state; the others not in DISABLED and FORCED_OPEN.
    pub const fn force_publish(self) -> bool {
        matches!(self, EventType::StateTransition | EventType::Reset)
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What happened, with the payload of Resilience4j's event class.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// A call was recorded as a success (`CircuitBreakerOnSuccessEvent`).
    Success {
        /// The call's duration.
        elapsed: Duration,
    },
    /// A call was recorded as a failure (`CircuitBreakerOnErrorEvent`).
    Error {
        /// The call's duration.
        elapsed: Duration,
        /// The error (`getThrowable()`): its Rust type name and, when the type shows it, its
        /// message; `None` when the outcome was recorded on a [`Permit`](crate::Permit)
        /// without the error.
        error: Option<Throwable>,
    },
    /// A call failed with an ignored error (`CircuitBreakerOnIgnoredErrorEvent`).
    IgnoredError {
        /// The call's duration.
        elapsed: Duration,
        /// The error (`getThrowable()`), when known; as for [`EventKind::Error`].
        error: Option<Throwable>,
    },
    /// A call was rejected (`CircuitBreakerOnCallNotPermittedEvent`).
    NotPermitted,
    /// The state changed (`CircuitBreakerOnStateTransitionEvent`).
    StateTransition {
        /// The state left.
        from: State,
        /// The state entered.
        to: State,
    },
    /// `reset()` was called (`CircuitBreakerOnResetEvent`).
    Reset,
    /// The failure rate reached `failureRateThreshold` in CLOSED or METRICS_ONLY
    /// (`CircuitBreakerOnFailureRateExceededEvent`).
    FailureRateExceeded {
        /// The failure rate in percent.
        failure_rate: f32,
    },
    /// The slow-call rate reached `slowCallRateThreshold`
    /// (`CircuitBreakerOnSlowCallRateExceededEvent`).
    SlowCallRateExceeded {
        /// The slow-call rate in percent.
        slow_call_rate: f32,
    },
}

impl EventKind {
    /// The event's type.
    pub const fn event_type(&self) -> EventType {
        match self {
            EventKind::Success { .. } => EventType::Success,
            EventKind::Error { .. } => EventType::Error,
            EventKind::IgnoredError { .. } => EventType::IgnoredError,
            EventKind::NotPermitted => EventType::NotPermitted,
            EventKind::StateTransition { .. } => EventType::StateTransition,
            EventKind::Reset => EventType::Reset,
            EventKind::FailureRateExceeded { .. } => EventType::FailureRateExceeded,
            EventKind::SlowCallRateExceeded { .. } => EventType::SlowCallRateExceeded,
        }
    }
}

/// One event of one breaker.
#[derive(Debug, Clone, PartialEq)]
pub struct CircuitBreakerEvent {
    /// The breaker's name (`getCircuitBreakerName()`).
    pub circuit_breaker_name: Arc<str>,
    /// What happened.
    pub kind: EventKind,
    /// When, in nanoseconds since the Unix epoch, read from the breaker's clock.
    pub creation_time_nanos: u64,
}

impl CircuitBreakerEvent {
    /// The event's type.
    pub fn event_type(&self) -> EventType {
        self.kind.event_type()
    }
}

impl fmt::Display for CircuitBreakerEvent {
    /// Resilience4j's `toString()` wording, without the timestamp.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = &self.circuit_breaker_name;
        match &self.kind {
            EventKind::Success { elapsed } => write!(
                f,
                "CircuitBreaker '{n}' recorded a successful call. Elapsed time: {} ms",
                elapsed.as_millis()
            ),
            EventKind::Error { elapsed, error } => write!(
                f,
                "CircuitBreaker '{n}' recorded an error: '{}'. Elapsed time: {} ms",
                ThrowableText(error),
                elapsed.as_millis()
            ),
            EventKind::IgnoredError { elapsed, error } => write!(
                f,
                "CircuitBreaker '{n}' recorded an error which has been ignored: '{}'. Elapsed time: {} ms",
                ThrowableText(error),
                elapsed.as_millis()
            ),
            EventKind::NotPermitted => {
                write!(f, "CircuitBreaker '{n}' recorded a call which was not permitted.")
            }
            EventKind::StateTransition { from, to } => {
                write!(f, "CircuitBreaker '{n}' changed state from {from} to {to}")
            }
            EventKind::Reset => write!(f, "CircuitBreaker '{n}' reset"),
            EventKind::FailureRateExceeded { failure_rate } => write!(
                f,
                "CircuitBreaker '{n}' exceeded failure rate threshold. Current failure rate: {}",
                crate::java::java_float(*failure_rate)
            ),
            EventKind::SlowCallRateExceeded { slow_call_rate } => write!(
                f,
                "CircuitBreaker '{n}' exceeded slow call rate threshold. Current slow call rate: {}",
                crate::java::java_float(*slow_call_rate)
            ),
        }
    }
}

/// Events produced by one operation, in publication order, held on the stack so that an
/// operation allocates nothing.
#[derive(Debug, Default)]
pub(crate) struct EventSink {
    fixed: [Option<EventKind>; 6],
    len: usize,
    overflow: Vec<EventKind>,
}

impl EventSink {
    #[inline]
    pub fn push(&mut self, kind: EventKind) {
        if self.len < self.fixed.len() {
            self.fixed[self.len] = Some(kind);
            self.len += 1;
        } else {
            self.overflow.push(kind);
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = EventKind> + '_ {
        self.fixed[..self.len]
            .iter()
            .flatten()
            .cloned()
            .chain(self.overflow.iter().cloned())
    }
}

/// Identifies a subscription, to [`unsubscribe`](crate::CircuitBreaker::unsubscribe) it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriptionId(u64);

impl SubscriptionId {
    /// The next id from `counter`.
    pub(crate) fn next(counter: &AtomicU64) -> Self {
        SubscriptionId(counter.fetch_add(1, Ordering::Relaxed))
    }
}

type Callback = Arc<dyn Fn(&CircuitBreakerEvent) + Send + Sync>;

/// The subscribers of one breaker. A subscriber that panics is logged and does not affect
/// the call. Events reach them through [`Delivery`], in the order the breaker produced them.
#[derive(Default)]
pub(crate) struct Subscribers {
    any: AtomicBool,
    next_id: AtomicU64,
    list: ArcSwap<Vec<(SubscriptionId, Callback)>>,
}

impl Subscribers {
    #[inline]
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }

    pub fn subscribe(&self, f: Callback) -> SubscriptionId {
        let id = SubscriptionId(self.next_id.fetch_add(1, Ordering::Relaxed));
        self.list.rcu(|l| {
            let mut l = Vec::clone(l);
            l.push((id, f.clone()));
            l
        });
        self.any.store(true, Ordering::Relaxed);
        id
    }

    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        let mut removed = false;
        self.list.rcu(|l| {
            let mut l = Vec::clone(l);
            let before = l.len();
            l.retain(|(i, _)| *i != id);
            removed = l.len() != before;
            l
        });
        self.any
            .store(!self.list.load().is_empty(), Ordering::Relaxed);
        removed
    }

    pub fn publish(&self, event: &CircuitBreakerEvent) {
        for (_, f) in self.list.load().iter() {
            if catch_unwind(AssertUnwindSafe(|| f(event))).is_err() {
                tracing::warn!(
                    circuit_breaker = %event.circuit_breaker_name,
                    event = %event.event_type(),
                    "Failed to handle event: subscriber panicked"
                );
            }
        }
    }
}

/// Hands a breaker's events to its subscribers one at a time, in the order the breaker
/// produced them, never under the state lock, and never makes a thread wait for another
/// thread's subscribers.
///
/// Operations append their events here while they hold the state lock, so the queue order
/// is the production order (Resilience4j's order for one thread). The append also tells the
/// operation whether it is to deliver: if nobody is delivering, it claims the queue
/// ([`Claim`]) and, after unlocking the state, delivers from the head of the queue (other
/// threads' earlier events first) until the queue is empty. Otherwise it returns at once:
/// the thread already delivering finds its events in the queue and delivers them before it
/// stops. The hand-off is decided under the queue's lock (a deliverer stops only when it
/// finds the queue empty, and whoever appends after that finds nobody delivering), so no
/// event is left behind and no two threads deliver one breaker's events at once.
///
/// So a subscriber that blocks until another thread's call on this breaker has returned
/// does not deadlock (that call does not wait for it), nor does one that calls back into
/// a breaker (this one or another, from any thread: its events join a queue, and whoever
/// delivers that queue delivers them). The price: a deliverer also delivers the events
/// other threads append while it delivers, and a call may return before its events are
/// delivered (by the deliverer, soon after).
#[derive(Default)]
pub(crate) struct Delivery {
    /// `crate::sync`'s mutex: loom's under `--cfg loom`, for the hand-off's model.
    queue: crate::sync::Mutex<Queue>,
}

#[derive(Default)]
struct Queue {
    /// Events not yet delivered: their kind and when they happened (epoch ns).
    pending: VecDeque<(EventKind, u64)>,
    /// Someone is delivering (holds the [`Claim`]).
    busy: bool,
}

impl Delivery {
    fn lock(&self) -> crate::sync::MutexGuard<'_, Queue> {
        crate::sync::lock(&self.queue)
    }

    /// Appends `sink`'s events, stamped `at` (epoch ns). Called under the state lock, so
    /// the queue's order is the order of production. Returns the [`Claim`] to deliver the
    /// queue when nobody is delivering it, `None` when `sink` is empty or another
    /// deliverer will deliver these events.
    pub fn append(&self, sink: &EventSink, at: u64) -> Option<Claim<'_>> {
        if sink.is_empty() {
            return None;
        }
        let mut q = self.lock();
        q.pending.extend(sink.iter().map(|kind| (kind, at)));
        if q.busy {
            return None;
        }
        q.busy = true;
        Some(Claim {
            delivery: self,
            armed: true,
        })
    }
}

/// The right (and duty) to deliver a [`Delivery`]'s queue, held by one thread at a time.
/// Deliver with [`deliver`](Claim::deliver), after the state lock is released.
pub(crate) struct Claim<'a> {
    delivery: &'a Delivery,
    /// Still holding the queue: dropped without delivering (a panic on the way), the claim
    /// lets the queue go so that the next operation delivers what is left.
    armed: bool,
}

impl Claim<'_> {
    /// Delivers the queue from its head through `deliver` (kind, epoch ns), one event at a
    /// time without the queue's lock, until it finds the queue empty; events appended
    /// meanwhile, by any thread, are delivered too. Called without the state lock.
    pub fn deliver(mut self, mut deliver: impl FnMut(EventKind, u64)) {
        loop {
            let next = {
                let mut q = self.delivery.lock();
                let next = q.pending.pop_front();
                if next.is_none() {
                    // Decided under the queue's lock: whoever appends from now on
                    // finds nobody delivering and delivers.
                    q.busy = false;
                    self.armed = false;
                }
                next
            };
            let Some((kind, at)) = next else {
                return;
            };
            deliver(kind, at);
        }
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.delivery.lock().busy = false;
        }
    }
}

#[cfg(all(test, loom))]
mod loom_models;

/// A bounded buffer of a breaker's most recent events (Resilience4j's
/// `CircularEventConsumer`, sized by `eventConsumerBufferSize`, default 100).
///
/// Attach it with [`CircuitBreaker::attach_event_buffer`](crate::CircuitBreaker::attach_event_buffer).
#[derive(Debug, Clone)]
pub struct EventBuffer {
    ring: Arc<Mutex<Ring>>,
}

#[derive(Debug)]
struct Ring {
    capacity: usize,
    events: VecDeque<CircuitBreakerEvent>,
}

/// Resilience4j's default `eventConsumerBufferSize`: 100 events.
pub const DEFAULT_EVENT_CONSUMER_BUFFER_SIZE: usize = 100;

impl EventBuffer {
    pub(crate) fn new(capacity: usize) -> Self {
        EventBuffer {
            ring: Arc::new(Mutex::new(Ring {
                capacity: capacity.max(1),
                events: VecDeque::with_capacity(capacity.max(1)),
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Ring> {
        self.ring.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn push(&self, e: &CircuitBreakerEvent) {
        let mut r = self.lock();
        if r.events.len() == r.capacity {
            r.events.pop_front();
        }
        r.events.push_back(e.clone());
    }

    /// Changes the capacity (>= 1), dropping the oldest events that no longer fit.
    pub(crate) fn set_capacity(&self, capacity: usize) {
        let mut r = self.lock();
        r.capacity = capacity.max(1);
        while r.events.len() > r.capacity {
            r.events.pop_front();
        }
    }

    /// The buffered events, oldest first; at most the capacity.
    pub fn events(&self) -> Vec<CircuitBreakerEvent> {
        self.lock().events.iter().cloned().collect()
    }

    /// The maximum number of events kept.
    pub fn capacity(&self) -> usize {
        self.lock().capacity
    }
}
