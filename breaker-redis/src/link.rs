//! [`Link`]: one breaker's tie to its shared state (the [`SharedState`] hook it calls).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use breaker_core::{
    CircuitBreaker, SharedState, SharedView, State, TrialEnd, TrialGrant, WeakCircuitBreaker,
};

use crate::scripts::{Reply, SharedState as Shared};
use crate::store::StoreInner;

const NANOS_PER_MILLI: u64 = 1_000_000;

/// A trial slot this process holds: the episode that granted it, the lease id, and the
/// shared HALF_OPEN epoch it belongs to.
struct Lease {
    episode: u64,
    id: String,
    epoch: u64,
}

pub(crate) struct Link {
    store: Weak<StoreInner>,
    pub(crate) breaker: WeakCircuitBreaker,
    pub(crate) key: String,
    pub(crate) trials_key: String,
    /// The shared epoch this process last saw (0: none, or the key did not exist).
    epoch: AtomicU64,
    /// The shared OPEN attempts last seen (for the wait of the next OPEN).
    attempts: AtomicU32,
    leases: Mutex<Vec<Lease>>,
    /// Local clock (ns): trial requests before it are refused without asking Redis (every
    /// slot was taken a moment ago).
    refused_until: AtomicU64,
}

impl Link {
    pub(crate) fn new(store: &Arc<StoreInner>, cb: &CircuitBreaker) -> Link {
        let key = format!("{}{{{}}}", store.options.key_prefix, cb.name());
        Link {
            store: Arc::downgrade(store),
            breaker: cb.downgrade_weak(),
            trials_key: format!("{key}:trials"),
            key,
            epoch: AtomicU64::new(0),
            attempts: AtomicU32::new(0),
            leases: Mutex::new(Vec::new()),
            refused_until: AtomicU64::new(0),
        }
    }

    fn ttl_ms(s: &StoreInner) -> u64 {
        s.options.key_ttl.as_millis() as u64
    }

    /// Reads the shared state on the call-path connection and applies it (at attach time).
    pub(crate) fn refresh(&self, s: &StoreInner, cb: &CircuitBreaker) {
        let r = s.call(|c, sc| {
            let v: Vec<i64> = sc.read.key(&self.key).key(&self.trials_key).invoke(c)?;
            Reply::parse(&v)
        });
        if let Some(r) = r {
            self.reconcile(s, cb, r);
        }
    }

    /// Brings the local breaker and the shared state together after a read: a newer shared
    /// state is applied; a local OPEN that Redis does not know (lost in a restart, or
    /// tripped while Redis was away) is written back.
    pub(crate) fn reconcile(&self, s: &StoreInner, cb: &CircuitBreaker, r: Reply) {
        let local = cb.state();
        self.attempts.store(r.attempts, Ordering::Relaxed);
        if r.epoch == 0 {
            self.epoch.store(0, Ordering::Relaxed);
            if local == State::Open {
                self.trip(s, cb, false);
            }
            return;
        }
        let known = self.epoch.swap(r.epoch, Ordering::Relaxed);
        if known != r.epoch {
            self.apply(cb, r);
        } else if local == State::Open && r.state == Shared::Closed {
            self.trip(s, cb, false);
        } else if !compatible(local, &r) {
            self.apply(cb, r);
        }
    }

    /// Moves the local breaker to the shared state `r`.
    fn apply(&self, cb: &CircuitBreaker, r: Reply) {
        let view = match r.state {
            Shared::Closed => SharedView::Closed,
            Shared::HalfOpen => SharedView::HalfOpen,
            Shared::Open => {
                if r.open_expired() && cb.state() == State::HalfOpen {
                    return;
                }
                SharedView::Open {
                    until: local_deadline(cb, &r),
                }
            }
        };
        cb.apply_shared_state(view);
    }

    /// Writes this process's OPEN to the shared state (or adopts the OPEN already there).
    fn trip(&self, s: &StoreInner, cb: &CircuitBreaker, force: bool) {
        let Some(until) = cb.open_until_nanos() else {
            return;
        };
        let now = cb.clock().recent_nanos();
        let wait_ms = until.saturating_sub(now).div_ceil(NANOS_PER_MILLI);
        self.trip_for(s, cb, force, wait_ms.min(i64::MAX as u64) as i64);
    }

    /// [`trip`](Self::trip) for `wait_ms`: -1 makes the shared state an OPEN whose wait has
    /// passed, which the first trial lease turns into HALF_OPEN.
    fn trip_for(&self, s: &StoreInner, cb: &CircuitBreaker, force: bool, wait_ms: i64) {
        let expected = self.epoch.load(Ordering::Relaxed);
        let r = s.call(|c, sc| {
            let v: Vec<i64> = sc
                .trip
                .key(&self.key)
                .key(&self.trials_key)
                .arg(expected)
                .arg(wait_ms)
                .arg(Self::ttl_ms(s))
                .arg(u8::from(force))
                .invoke(c)?;
            Reply::parse(&v)
        });
        if let Some(r) = r {
            self.epoch.store(r.epoch, Ordering::Relaxed);
            self.attempts.store(r.attempts, Ordering::Relaxed);
            if !r.flag {
                // Another process's state stands (an earlier OPEN, a newer HALF_OPEN).
                self.apply(cb, r);
            }
        }
    }

    fn close(&self, s: &StoreInner) {
        let r = s.call(|c, sc| {
            let v: Vec<i64> = sc
                .close
                .key(&self.key)
                .key(&self.trials_key)
                .arg(Self::ttl_ms(s))
                .invoke(c)?;
            Reply::parse(&v)
        });
        if let Some(r) = r {
            self.epoch.store(r.epoch, Ordering::Relaxed);
        }
    }
}

/// Whether the local state already is what the shared state `r` (of an epoch this process
/// has seen) asks for.
fn compatible(local: State, r: &Reply) -> bool {
    match local {
        State::Closed => r.state == Shared::Closed,
        State::Open => r.state == Shared::Open,
        State::HalfOpen => r.state == Shared::HalfOpen || r.open_expired(),
        // Set by hand in this process: left alone.
        State::ForcedOpen | State::Disabled | State::MetricsOnly => true,
    }
}

/// The shared OPEN deadline (Redis's clock) on the breaker's clock: the same distance from
/// now, so the processes' clocks never need to agree.
fn local_deadline(cb: &CircuitBreaker, r: &Reply) -> u64 {
    let now = cb.clock().recent_nanos();
    if r.until_ms >= r.now_ms {
        now.saturating_add((r.until_ms - r.now_ms).saturating_mul(NANOS_PER_MILLI))
    } else {
        now.saturating_sub((r.now_ms - r.until_ms).saturating_mul(NANOS_PER_MILLI))
    }
}

impl SharedState for Link {
    fn on_transition(&self, cb: &CircuitBreaker, from: State, to: State, manual: bool) {
        let Some(s) = self.store.upgrade() else {
            return;
        };
        match to {
            State::Open if manual || from == State::Closed => self.trip(&s, cb, manual),
            State::Closed if manual => self.close(&s),
            // A manual HALF_OPEN: an OPEN whose wait has passed, so the next trial lease of
            // any process starts one shared HALF_OPEN.
            State::HalfOpen if manual => self.trip_for(&s, cb, true, -1),
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
        let id = s.lease_id();
        let permitted = cb.config().permitted_number_of_calls_in_half_open_state();
        let r = s.call(|c, sc| {
            let v: Vec<i64> = sc
                .lease
                .key(&self.key)
                .key(&self.trials_key)
                .arg(&id)
                .arg(s.options.trial_lease.as_millis() as u64)
                .arg(permitted)
                .arg(Self::ttl_ms(&s))
                .invoke(c)?;
            Reply::parse(&v)
        });
        let Some(r) = r else {
            return TrialGrant::Local;
        };
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
        let Some(s) = self.store.upgrade() else {
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
        let minimum = config.minimum_number_of_calls().min(permitted);
        let wait_ms = config
            .wait_interval_function_in_open_state()
            .wait_millis(self.attempts.load(Ordering::Relaxed).saturating_add(1));
        let r = s.call(|c, sc| {
            let v: Vec<i64> = sc
                .outcome
                .key(&self.key)
                .key(&self.trials_key)
                .arg(&lease.id)
                .arg(lease.epoch)
                .arg(kind)
                .arg(u8::from(slow))
                .arg(minimum)
                .arg(config.failure_rate_threshold().to_string())
                .arg(config.slow_call_rate_threshold().to_string())
                .arg(wait_ms)
                .arg(Self::ttl_ms(&s))
                .invoke(c)?;
            Reply::parse(&v)
        });
        if let Some(r) = r {
            self.attempts.store(r.attempts, Ordering::Relaxed);
            if self.epoch.swap(r.epoch, Ordering::Relaxed) != r.epoch {
                self.apply(cb, r);
            }
        }
    }
}
