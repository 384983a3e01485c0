//! Circuit-breaker events (Resilience4j's `CircuitBreakerEvent` types), subscribers and a
//! bounded buffer of recent events.

use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;

use crate::state::State;

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
#[derive(Debug, Clone, Copy, PartialEq)]
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
        /// The Rust type name of the error, when the call went through `call`.
        error_type: Option<&'static str>,
    },
    /// A call failed with an ignored error (`CircuitBreakerOnIgnoredErrorEvent`).
    IgnoredError {
        /// The call's duration.
        elapsed: Duration,
        /// The Rust type name of the error, when known.
        error_type: Option<&'static str>,
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
        match self.kind {
            EventKind::Success { elapsed } => write!(
                f,
                "CircuitBreaker '{n}' recorded a successful call. Elapsed time: {} ms",
                elapsed.as_millis()
            ),
            EventKind::Error { elapsed, error_type } => write!(
                f,
                "CircuitBreaker '{n}' recorded an error: '{}'. Elapsed time: {} ms",
                error_type.unwrap_or("error"),
                elapsed.as_millis()
            ),
            EventKind::IgnoredError { elapsed, error_type } => write!(
                f,
                "CircuitBreaker '{n}' recorded an error which has been ignored: '{}'. Elapsed time: {} ms",
                error_type.unwrap_or("error"),
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
                crate::java::java_float(failure_rate)
            ),
            EventKind::SlowCallRateExceeded { slow_call_rate } => write!(
                f,
                "CircuitBreaker '{n}' exceeded slow call rate threshold. Current slow call rate: {}",
                crate::java::java_float(slow_call_rate)
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
            .copied()
            .chain(self.overflow.iter().copied())
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

/// The subscribers of one breaker. Delivery is synchronous, on the thread that caused the
/// event, after the breaker's lock is released; a subscriber that panics is logged and does
/// not affect the call.
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

/// A bounded buffer of a breaker's most recent events (Resilience4j's
/// `CircularEventConsumer`, sized by `eventConsumerBufferSize`, default 100).
///
/// Attach it with [`CircuitBreaker::attach_event_buffer`](crate::CircuitBreaker::attach_event_buffer).
#[derive(Debug, Clone)]
pub struct EventBuffer {
    capacity: usize,
    events: Arc<Mutex<VecDeque<CircuitBreakerEvent>>>,
}

/// Resilience4j's default `eventConsumerBufferSize`: 100 events.
pub const DEFAULT_EVENT_CONSUMER_BUFFER_SIZE: usize = 100;

impl EventBuffer {
    pub(crate) fn new(capacity: usize) -> Self {
        EventBuffer {
            capacity: capacity.max(1),
            events: Arc::new(Mutex::new(VecDeque::with_capacity(capacity.max(1)))),
        }
    }

    pub(crate) fn push(&self, e: &CircuitBreakerEvent) {
        let mut q = self.events.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() == self.capacity {
            q.pop_front();
        }
        q.push_back(e.clone());
    }

    /// The buffered events, oldest first; at most the capacity.
    pub fn events(&self) -> Vec<CircuitBreakerEvent> {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// The maximum number of events kept.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}
