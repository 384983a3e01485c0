//! The call path's Redis requests, run by one background thread per store (issue #23: a
//! caller's thread never waits on Redis for a trip, a trial outcome or a manual transition,
//! and never queues behind another caller's request).
//!
//! A caller hands a [`Job`] over and returns at once; the thread sends every job waiting
//! in one pipeline (one round trip however many callers asked at once) on its own
//! connection, and runs each job's continuation with its reply. The one request whose
//! answer a caller needs, a HALF_OPEN trial lease, is waited for through a [`Pending`] with
//! the caller's own deadline, so the wait is bounded whatever is queued before it; a lease
//! granted after its caller stopped waiting is handed back.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Instant;

use redis::Connection;

use crate::scripts::{Reply, Request};
use crate::store::StoreInner;

/// What a [`Job`] does with its reply: runs on the call thread with the reply, or with
/// `None` when Redis is down or the request failed.
pub(crate) type Then = Box<dyn FnOnce(&StoreInner, Option<Reply>) + Send>;

/// One request of the call path and what to do with its reply.
pub(crate) struct Job {
    pub(crate) request: Request,
    /// Whether the reply is still wanted (false: a lease whose caller stopped waiting), checked
    /// before sending; `None`: always.
    pub(crate) wanted: Option<Box<dyn Fn() -> bool + Send>>,
    /// Runs on the thread with the reply, or with `None` when Redis is down or the request
    /// failed. Must not wait (it may [`submit`](StoreInner::submit) another job).
    pub(crate) then: Then,
}

/// Jobs waiting for the thread at most; more are answered at once as if Redis were down
/// (the refresher writes back what matters).
pub(crate) const QUEUE: usize = 1024;

/// The most jobs sent in one pipeline.
const BATCH: usize = 64;

/// Hands `job` to the thread without waiting; with the queue full or the thread gone,
/// answers it here as if Redis were down.
pub(crate) fn submit(s: &StoreInner, tx: &SyncSender<Job>, job: Job) {
    match tx.try_send(job) {
        Ok(()) => {}
        Err(TrySendError::Full(job)) | Err(TrySendError::Disconnected(job)) => {
            (job.then)(s, None);
        }
    }
}

/// The thread: runs the jobs, every job waiting in one pipeline, until the store is
/// dropped.
pub(crate) fn spawn(store: Weak<StoreInner>, jobs: Receiver<Job>) {
    let spawned = std::thread::Builder::new()
        .name("breaker-redis-call".into())
        .spawn(move || {
            let mut con: Option<Connection> = None;
            while let Ok(first) = jobs.recv() {
                let Some(s) = store.upgrade() else { return };
                let mut batch = vec![first];
                while batch.len() < BATCH {
                    match jobs.try_recv() {
                        Ok(j) => batch.push(j),
                        Err(_) => break,
                    }
                }
                batch.retain(|j| j.wanted.as_ref().is_none_or(|w| w()));
                if !batch.is_empty() {
                    s.run_jobs(&mut con, batch);
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!(target: "breaker_redis", error = %e, "cannot start the Redis call thread");
    }
}

enum Slot<T> {
    Waiting,
    Abandoned,
    Done(T),
}

/// A reply one caller waits for, up to its own deadline.
pub(crate) struct Pending<T> {
    slot: Mutex<Slot<T>>,
    ready: Condvar,
}

impl<T> Pending<T> {
    pub(crate) fn new() -> Arc<Pending<T>> {
        Arc::new(Pending {
            slot: Mutex::new(Slot::Waiting),
            ready: Condvar::new(),
        })
    }

    /// Whether the caller has stopped waiting (the request need not be sent).
    pub(crate) fn abandoned(&self) -> bool {
        matches!(*self.slot.lock().unwrap(), Slot::Abandoned)
    }

    /// Delivers the reply; `Err(value)` back when the caller has stopped waiting.
    pub(crate) fn complete(&self, value: T) -> Result<(), T> {
        let mut slot = self.slot.lock().unwrap();
        match *slot {
            Slot::Waiting => {
                *slot = Slot::Done(value);
                self.ready.notify_all();
                Ok(())
            }
            _ => Err(value),
        }
    }

    /// The reply, or `None` at `deadline` (the caller has then abandoned it for good).
    pub(crate) fn wait_until(&self, deadline: Instant) -> Option<T> {
        let mut slot = self.slot.lock().unwrap();
        loop {
            if let Slot::Done(_) = *slot {
                return match std::mem::replace(&mut *slot, Slot::Abandoned) {
                    Slot::Done(v) => Some(v),
                    _ => unreachable!("matched Done above"),
                };
            }
            let now = Instant::now();
            if now >= deadline {
                *slot = Slot::Abandoned;
                return None;
            }
            slot = self.ready.wait_timeout(slot, deadline - now).unwrap().0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_reply_after_the_deadline_is_handed_back() {
        let p = Pending::<u32>::new();
        assert_eq!(
            p.wait_until(Instant::now() + Duration::from_millis(1)),
            None
        );
        assert!(p.abandoned());
        assert_eq!(p.complete(7), Err(7));
    }

    #[test]
    fn a_reply_before_the_deadline_is_taken() {
        let p = Pending::<u32>::new();
        let q = p.clone();
        let t = std::thread::spawn(move || q.complete(5));
        // 60 s: only a reply that never comes could reach it.
        assert_eq!(
            p.wait_until(Instant::now() + Duration::from_secs(60)),
            Some(5)
        );
        assert_eq!(t.join().unwrap(), Ok(()));
    }
}
