//! [`SharedBulkhead`]: a semaphore bulkhead's calls in flight counted in Redis for every
//! process (the [`SharedConcurrency`] hook of `breaker-core`).
//!
//! Redis keeps, per process, its calls in flight; a call is admitted (`ENTER`) while the
//! live processes' calls together are fewer than `maxConcurrentCalls`, and its end is
//! reported (`LEAVE`, never waited for). A process silent for `replica_lease` is dropped
//! with its calls: a killed replica's permits come back within `replica_lease` (plus the
//! next request of any process). Without an answer within `3 x timeout` the call is decided
//! on this process's share, `ceil(maxConcurrentCalls / replicas)`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Weak};

use breaker_core::bulkhead::{Bulkhead, SharedConcurrency};

use super::scripts::{FleetReply, FleetRequest, FleetScript};
use super::{deadline, local_share, request, Member};
use crate::store::StoreInner;

pub(crate) struct SharedBulkhead {
    store: Weak<StoreInner>,
    keys: [String; 2],
    /// Processes using the bulkhead, as Redis last counted them (0: never answered).
    replicas: AtomicU32,
    /// Calls in flight admitted by Redis.
    shared: Arc<AtomicU32>,
    /// Calls in flight admitted on the local share (Redis did not answer).
    local: AtomicU32,
    /// Ends of calls Redis has not been told about (their `LEAVE` failed): the next
    /// heartbeat takes them off.
    unsent: Arc<AtomicU32>,
}

impl SharedBulkhead {
    pub(crate) fn new(store: &Arc<StoreInner>, name: &str) -> Arc<SharedBulkhead> {
        Arc::new(SharedBulkhead {
            store: Arc::downgrade(store),
            keys: super::keys(store, "bh", name),
            replicas: AtomicU32::new(0),
            shared: Arc::new(AtomicU32::new(0)),
            local: AtomicU32::new(0),
            unsent: Arc::new(AtomicU32::new(0)),
        })
    }

    fn local_admit(&self, max: u32) -> bool {
        let share = local_share(max, self.replicas.load(Ordering::Relaxed));
        self.local
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < share).then_some(n + 1)
            })
            .is_ok()
    }
}

impl SharedConcurrency for SharedBulkhead {
    fn acquire(&self, bulkhead: &Bulkhead) -> bool {
        let max = bulkhead.config().max_concurrent_calls();
        if let Some(s) = self.store.upgrade().filter(|s| s.is_up()) {
            let r = request(&s, FleetScript::Enter, &self.keys, &[&max]);
            let leave = request(&s, FleetScript::Leave, &self.keys, &[]);
            let fleet = self.store.clone();
            let asked = s.fleet().ask(r, deadline(&s), move |late| {
                // Admitted after its caller stopped waiting: hand the permit back.
                if late.a == 1 {
                    if let Some(s) = fleet.upgrade() {
                        s.fleet().send(leave, |_| {});
                    }
                }
            });
            if let Some(r) = asked {
                self.replicas.store(r.replicas.max(1), Ordering::Relaxed);
                if r.a == 1 {
                    self.shared.fetch_add(1, Ordering::AcqRel);
                    return true;
                }
                return false;
            }
        }
        self.local_admit(max)
    }

    fn release(&self, _bulkhead: &Bulkhead) {
        // A call admitted on the local share ends first (which one ended does not matter:
        // only the counts do).
        if self
            .local
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
        {
            return;
        }
        if self
            .shared
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_err()
        {
            return;
        }
        let unsent = self.unsent.clone();
        match self.store.upgrade() {
            Some(s) => {
                let r = request(&s, FleetScript::Leave, &self.keys, &[]);
                s.fleet().send(r, move |reply| {
                    if reply.is_none() {
                        unsent.fetch_add(1, Ordering::AcqRel);
                    }
                });
            }
            None => {
                unsent.fetch_add(1, Ordering::AcqRel);
            }
        }
    }
}

impl Member for SharedBulkhead {
    fn beat(&self) -> FleetRequest {
        let s = self.store.upgrade().expect("beats come from the store");
        let held = self.shared.load(Ordering::Acquire) + self.local.load(Ordering::Acquire);
        let leaves = self.unsent.swap(0, Ordering::AcqRel);
        request(&s, FleetScript::Beat, &self.keys, &[&held, &leaves])
    }

    fn beat_failed(&self, request: &FleetRequest) {
        // The ends it carried are still to tell.
        if let Some(n) = request.args.get(4).and_then(|a| a.parse::<u32>().ok()) {
            self.unsent.fetch_add(n, Ordering::AcqRel);
        }
    }

    fn on_beat(&self, reply: FleetReply) {
        self.replicas
            .store(reply.replicas.max(1), Ordering::Relaxed);
        if reply.a == 1 {
            // Redis had no count for this process and took all its calls in flight: the
            // local ones are now counted there too, and end with a LEAVE.
            let local = self.local.swap(0, Ordering::AcqRel);
            self.shared.fetch_add(local, Ordering::AcqRel);
        }
    }
}
