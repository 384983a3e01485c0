//! [`BulkheadCore`]: what the semaphore [`Bulkhead`](super::Bulkhead) and the
//! [`ThreadPoolBulkhead`](super::ThreadPoolBulkhead) are both made of (a name, a clock, the
//! admission [`Semaphore`] and the event publisher), with publishing an event and changing
//! the limit.

use std::sync::{Arc, OnceLock};

use super::events::{BulkheadEvent, BulkheadEventType};
use super::fleet::SharedConcurrency;
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
    /// The store capping the calls of every process (issue #29; semaphore bulkheads only).
    pub(super) fleet: OnceLock<Arc<dyn SharedConcurrency>>,
}

impl<C> BulkheadCore<C> {
    pub(super) fn new(name: Arc<str>, clock: Arc<dyn Clock>, semaphore: Semaphore<C>) -> Self {
        BulkheadCore {
            reject_name: crate::names::Name::new(&name),
            name,
            clock,
            semaphore,
            publisher: EventPublisher::default(),
            fleet: OnceLock::new(),
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

    /// Puts `config` in force and moves the limit to its `limit` (Resilience4j's
    /// `changeConfig`); the difference is computed under the semaphore's lock from the
    /// permits it owns, so concurrent changes never add up (see [`Semaphore::resize_to`]);
    /// `guard` as there.
    pub(super) fn change_config(&self, config: Arc<C>, limit: fn(&C) -> u32, guard: bool) {
        let limit = u64::from(limit(&config));
        self.semaphore.resize_to(limit, config, guard);
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::clock::ManualClock;
    use crate::sync::loom_model as model;
    use loom::thread;

    fn core(limit: u32) -> Arc<BulkheadCore<u32>> {
        let semaphore = Semaphore::new(u64::from(limit), true, true, Arc::new(limit));
        Arc::new(BulkheadCore::new(
            "b".into(),
            Arc::new(ManualClock::at_epoch_millis(0)),
            semaphore,
        ))
    }

    /// Issue 23: two concurrent changes of the limit (20 -> 60 and 20 -> 30) apply one
    /// after the other in every interleaving: the limit is the config in force's, every
    /// permit is free, and one more change to 25 gives exactly 25 (it drifted to 78 when
    /// each change applied its difference from the same old config).
    #[test]
    fn loom_two_resizes_never_add_up() {
        model(|| {
            let b = core(20);
            let t = {
                let b = b.clone();
                thread::spawn(move || b.change_config(Arc::new(60), |c| *c, true))
            };
            b.change_config(Arc::new(30), |c| *c, true);
            t.join().unwrap();
            let limit = **b.semaphore.config();
            assert!(limit == 60 || limit == 30, "{limit}");
            assert_eq!(b.semaphore.available(), u64::from(limit));
            b.change_config(Arc::new(25), |c| *c, true);
            assert_eq!(b.semaphore.available(), 25);
            assert_eq!(**b.semaphore.config(), 25);
        });
    }
}
