//! Event delivery shared by the retry, time-limiter, bulkhead and rate-limiter modules
//! (Resilience4j's `EventPublisher` with `onEvent` / `onXxx` consumers, and its
//! `CircularEventConsumer` sized by `eventConsumerBufferSize`).
//!
//! Delivery is synchronous, on the thread that caused the event. A subscriber that panics is
//! logged and affects neither the call nor the other subscribers. Publishing with nobody
//! subscribed costs one relaxed atomic load; callers check [`EventPublisher::any`] before
//! building an event.

use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;

use crate::events::SubscriptionId;

type Callback<E> = Arc<dyn Fn(&E) + Send + Sync>;

/// What a published event says about itself, for logging a panicking subscriber.
pub trait ModuleEvent: Clone + Send + Sync + 'static {
    /// The instance's name, e.g. `backendA`.
    fn instance_name(&self) -> &str;
    /// Resilience4j's event type name, e.g. `RETRY` or `PERMIT_ACQUIRED`.
    fn type_name(&self) -> &'static str;
}

/// The subscribers of one instance, plus its optional buffer of recent events.
pub struct EventPublisher<E: ModuleEvent> {
    any: AtomicBool,
    next_id: AtomicU64,
    list: ArcSwap<Vec<(SubscriptionId, Callback<E>)>>,
}

impl<E: ModuleEvent> Default for EventPublisher<E> {
    fn default() -> Self {
        EventPublisher {
            any: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
            list: ArcSwap::from_pointee(Vec::new()),
        }
    }
}

impl<E: ModuleEvent> fmt::Debug for EventPublisher<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventPublisher")
            .field("subscribers", &self.list.load().len())
            .finish()
    }
}

impl<E: ModuleEvent> EventPublisher<E> {
    /// Whether anyone is subscribed (one relaxed load): build events only when true.
    #[inline]
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }

    /// Adds a subscriber; it receives every event published from now on.
    pub fn subscribe(&self, f: impl Fn(&E) + Send + Sync + 'static) -> SubscriptionId {
        let f: Callback<E> = Arc::new(f);
        let id = SubscriptionId::next(&self.next_id);
        self.list.rcu(|l| {
            let mut l = Vec::clone(l);
            l.push((id, f.clone()));
            l
        });
        self.any.store(true, Ordering::Relaxed);
        id
    }

    /// Removes a subscriber; `false` if it was not subscribed.
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

    /// Delivers `event` to every subscriber, in subscription order.
    pub fn publish(&self, event: &E) {
        for (_, f) in self.list.load().iter() {
            if catch_unwind(AssertUnwindSafe(|| f(event))).is_err() {
                tracing::warn!(
                    name = %event.instance_name(),
                    event = event.type_name(),
                    "Failed to handle event: subscriber panicked"
                );
            }
        }
    }
}

impl<E: ModuleEvent> EventPublisher<E> {
    /// Delivers `event` to every subscriber, in subscription order, without isolating them:
    /// a subscriber's panic stops the delivery and unwinds into the caller, as an event
    /// consumer's exception does in Resilience4j's Retry (for exact-Resilience4j mode).
    pub fn publish_unisolated(&self, event: &E) {
        for (_, f) in self.list.load().iter() {
            f(event);
        }
    }
}

/// A bounded buffer of an instance's most recent events (Resilience4j's
/// `CircularEventConsumer`, sized by `eventConsumerBufferSize`, default 100). Cloning shares
/// the buffer.
#[derive(Debug)]
pub struct RecentEvents<E> {
    capacity: usize,
    events: Arc<Mutex<VecDeque<E>>>,
}

impl<E> Clone for RecentEvents<E> {
    fn clone(&self) -> Self {
        RecentEvents {
            capacity: self.capacity,
            events: Arc::clone(&self.events),
        }
    }
}

impl<E: Clone> RecentEvents<E> {
    /// An empty buffer keeping the last `capacity` events (at least 1).
    pub fn new(capacity: usize) -> Self {
        RecentEvents {
            capacity: capacity.max(1),
            events: Arc::new(Mutex::new(VecDeque::with_capacity(capacity.clamp(1, 1024)))),
        }
    }

    /// Appends `event`, dropping the oldest when full.
    pub fn push(&self, event: &E) {
        let mut q = self.events.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() == self.capacity {
            q.pop_front();
        }
        q.push_back(event.clone());
    }

    /// The buffered events, oldest first; at most the capacity.
    pub fn events(&self) -> Vec<E> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Ev(u32);
    impl ModuleEvent for Ev {
        fn instance_name(&self) -> &str {
            "backendA"
        }
        fn type_name(&self) -> &'static str {
            "TEST"
        }
    }

    #[test]
    fn subscribers_receive_in_order_and_a_panic_is_isolated() {
        let p = EventPublisher::<Ev>::default();
        assert!(!p.any());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        p.subscribe(|_| panic!("bad subscriber"));
        let id = p.subscribe(move |e: &Ev| s.lock().unwrap().push(e.0));
        assert!(p.any());
        p.publish(&Ev(1));
        p.publish(&Ev(2));
        assert!(p.unsubscribe(id));
        assert!(!p.unsubscribe(id));
        p.publish(&Ev(3));
        assert_eq!(*seen.lock().unwrap(), vec![1, 2]);
    }

    #[test]
    fn recent_events_keep_the_last_capacity() {
        let r = RecentEvents::new(2);
        for i in 0..5 {
            r.push(&Ev(i));
        }
        assert_eq!(r.events(), vec![Ev(3), Ev(4)]);
        assert_eq!(r.capacity(), 2);
    }
}
