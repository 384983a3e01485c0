//! The [`SharedState`] hook of a [`Link`]: what the breaker calls on its call path. None of
//! it waits on Redis but a HALF_OPEN trial permission, which waits for its lease at most
//! [`call_path_bound`](crate::call_path_bound) from its own start, queueing included
//! (issue #23): trips, trial outcomes and manual transitions are handed to the store's call
//! thread.

use std::sync::atomic::Ordering;
use std::time::Instant;

use breaker_core::{CircuitBreaker, SharedState, State, TrialEnd, TrialGrant};

use crate::link::{open_wait_ms, Lease, Link, Outcome};
use crate::scripts::{Reply, SharedState as Shared};
use crate::store::call_path_bound;
use crate::worker::{Job, Pending};

impl SharedState for Link {
    fn on_transition(&self, cb: &CircuitBreaker, from: State, to: State, manual: bool) {
        let Some(s) = self.store.upgrade() else {
            return;
        };
        match to {
            State::Open if manual || from == State::Closed => {
                if let Some(wait_ms) = open_wait_ms(cb) {
                    self.trip(&s, manual, wait_ms);
                }
            }
            State::Closed if manual => self.close(&s),
            // A manual HALF_OPEN: an OPEN whose wait has passed, so the next trial lease of
            // any process starts one shared HALF_OPEN.
            State::HalfOpen if manual => self.trip(&s, true, -1),
            // HALF_OPEN's decisions are made by the trial outcomes in Redis (`end_trial`);
            // OPEN -> HALF_OPEN by the first trial lease; FORCED_OPEN, DISABLED and
            // METRICS_ONLY stay local.
            _ => {}
        }
    }

    fn acquire_trial(&self, cb: &CircuitBreaker, episode: u64) -> TrialGrant {
        let Some(s) = self.store.upgrade() else {
            return TrialGrant::Local;
        };
        let now = cb.clock().recent_nanos();
        if now < self.refused_until.load(Ordering::Relaxed) {
            return TrialGrant::Refused { until: 0 };
        }
        let Some(link) = self.me.upgrade() else {
            return TrialGrant::Local;
        };
        let deadline = Instant::now() + call_path_bound(&s.options);
        let decided = s.clock.now_ms();
        let id = s.lease_id();
        let permitted = cb.config().permitted_number_of_calls_in_half_open_state();
        let pending = Pending::<Option<Reply>>::new();
        let answer = pending.clone();
        let asked = pending.clone();
        let lease_id = id.clone();
        s.submit(Job {
            request: link.lease_request(&s, &id, permitted, decided),
            wanted: Some(Box::new(move || !asked.abandoned())),
            then: Box::new(move |s, reply| {
                if let Err(Some(r)) = pending.complete(reply) {
                    if r.flag {
                        // Granted after its caller stopped waiting: hand the slot back.
                        let release = link.outcome_request(
                            s,
                            &lease_id,
                            r.epoch,
                            &Outcome::RELEASE,
                            s.clock.now_ms(),
                        );
                        s.submit(Job {
                            request: release,
                            wanted: None,
                            then: Box::new(|_, _| {}),
                        });
                    }
                }
            }),
        });
        let Some(r) = off_the_runtime(|| answer.wait_until(deadline)).flatten() else {
            return TrialGrant::Local;
        };
        if r.late {
            return TrialGrant::Local;
        }
        self.attempts.store(r.attempts, Ordering::Relaxed);
        self.epoch.store(r.epoch, Ordering::Relaxed);
        if r.flag {
            self.leases.lock().unwrap().push(Lease {
                episode,
                id,
                epoch: r.epoch,
            });
            return TrialGrant::Granted;
        }
        match r.state {
            Shared::HalfOpen => {
                let pause = s.options.refresh_interval.as_nanos() as u64 / 4;
                self.refused_until
                    .store(now.saturating_add(pause), Ordering::Relaxed);
                TrialGrant::Refused { until: 0 }
            }
            _ => {
                self.apply(cb, r);
                TrialGrant::Refused { until: 0 }
            }
        }
    }

    fn end_trial(&self, cb: &CircuitBreaker, episode: u64, end: TrialEnd) {
        let lease = {
            let mut leases = self.leases.lock().unwrap();
            match leases.iter().position(|l| l.episode == episode) {
                Some(i) => leases.swap_remove(i),
                None => return,
            }
        };
        let (Some(s), Some(link)) = (self.store.upgrade(), self.me.upgrade()) else {
            return;
        };
        let config = cb.config();
        let (kind, slow) = match end {
            TrialEnd::Released => (0u8, false),
            TrialEnd::Outcome { failed, elapsed } => (
                if failed { 2 } else { 1 },
                elapsed > config.slow_call_duration_threshold(),
            ),
        };
        let permitted = config.permitted_number_of_calls_in_half_open_state();
        let outcome = Outcome {
            kind,
            slow,
            minimum: config.minimum_number_of_calls().min(permitted),
            failure_threshold: config.failure_rate_threshold(),
            slow_threshold: config.slow_call_rate_threshold(),
            wait_ms: config
                .wait_interval_function_in_open_state()
                .wait_millis(self.attempts.load(Ordering::Relaxed).saturating_add(1)),
        };
        let request = self.outcome_request(&s, &lease.id, lease.epoch, &outcome, s.clock.now_ms());
        self.submit_write(
            &s,
            request,
            Box::new(move |_, reply| {
                let (Some(r), Some(cb)) = (reply, link.breaker.upgrade()) else {
                    return;
                };
                if r.late {
                    return;
                }
                link.attempts.store(r.attempts, Ordering::Relaxed);
                if link.epoch.swap(r.epoch, Ordering::Relaxed) != r.epoch
                    && !link.newer_write_pending()
                {
                    link.apply(&cb, r);
                }
            }),
        );
    }
}

/// Runs `wait` (a bounded wait for Redis) so that it holds up no other task: on a tokio
/// multi-thread runtime, through `tokio::task::block_in_place` (the runtime first hands the
/// worker's other tasks to another thread); elsewhere (no runtime, a current-thread
/// runtime, the `tokio` feature off) as it is.
pub(crate) fn off_the_runtime<T>(wait: impl FnOnce() -> T) -> T {
    #[cfg(feature = "tokio")]
    {
        use tokio::runtime::{Handle, RuntimeFlavor};
        if Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread) {
            return tokio::task::block_in_place(wait);
        }
    }
    wait()
}
