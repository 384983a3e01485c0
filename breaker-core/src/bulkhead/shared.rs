//! [`BulkheadCore`]: what the semaphore [`Bulkhead`](super::Bulkhead) and the
//! [`ThreadPoolBulkhead`](super::ThreadPoolBulkhead) are both made of (a name, a clock, the
//! admission [`Semaphore`] and the event publisher), with publishing an event and changing
//! the limit.

use std::sync::Arc;

use super::events::{BulkheadEvent, BulkheadEventType};
use super::semaphore::Semaphore;
use crate::clock::Clock;
use crate::publisher::EventPublisher;

/// The shared state of one bulkhead whose config is `C`.
pub(super) struct BulkheadCore<C> {
    pub(super) name: Arc<str>,
    /// `name` as a rejection carries it (inline when short: no reference count, nothing
    /// leaked).
    pub(super) reject_name: crate::names::Name,
    /// The config's clock, fixed at creation.
    pub(super) clock: Arc<dyn Clock>,
    pub(super) semaphore: Semaphore<C>,
    pub(super) publisher: EventPublisher<BulkheadEvent>,
}

impl<C> BulkheadCore<C> {
    pub(super) fn new(name: Arc<str>, clock: Arc<dyn Clock>, semaphore: Semaphore<C>) -> Self {
        BulkheadCore {
            reject_name: crate::names::Name::new(&name),
            name,
            clock,
            semaphore,
            publisher: EventPublisher::default(),
        }
    }

    /// Publishes `event_type` now, by the bulkhead's clock; builds nothing when nobody
    /// listens.
    #[inline]
    pub(super) fn publish(&self, event_type: BulkheadEventType) {
        if self.publisher.any() {
            self.publisher.publish(&BulkheadEvent {
                bulkhead_name: self.name.clone(),
                event_type,
                creation_time_nanos: self.clock.recent_nanos(),
            });
        }
    }

    /// Puts `config` in force and moves the limit by the difference between its `limit` and
    /// the current config's (Resilience4j's `changeConfig`); `guard` as
    /// [`Semaphore::resize`].
    pub(super) fn change_config(&self, config: Arc<C>, limit: fn(&C) -> u32, guard: bool) {
        let delta = i64::from(limit(&config)) - i64::from(limit(&self.semaphore.config()));
        self.semaphore.resize(delta, config, guard);
    }
}
