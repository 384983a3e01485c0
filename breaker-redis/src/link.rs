//! [`Link`]: one breaker's tie to its shared state: reading it, applying it, and the
//! writes (trip, close, trial outcome) that change it. The [`SharedState`] hook the breaker
//! calls is in `hook.rs`.
//!
//! Every write carries what it was based on (issue #23): the shared epoch this process had
//! seen, when it was decided and, set as it is sent, the latest Redis may run it (on Redis's
//! clock as this process estimates it, `redis_clock.rs`); the scripts refuse one that is
//! stale, so a request Redis runs late (Redis stopped, then continued) cannot open a
//! breaker everyone has closed since, nor stretch an OPEN.
//!
//! [`SharedState`]: breaker_core::SharedState

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use breaker_core::{CircuitBreaker, SharedView, State, WeakCircuitBreaker};
use redis::Connection;

use crate::scripts::{Reply, Request, SharedState as Shared, Which};
use crate::store::StoreInner;
use crate::worker::{Job, Then};

pub(crate) const NANOS_PER_MILLI: u64 = 1_000_000;

/// A trial slot this process holds: the episode that granted it, the lease id, and the
/// shared HALF_OPEN epoch it belongs to.
pub(crate) struct Lease {
    pub(crate) episode: u64,
    pub(crate) id: String,
    pub(crate) epoch: u64,
}

/// What a trial outcome tells Redis (see `OUTCOME` in `scripts.rs`).
pub(crate) struct Outcome {
    /// 0 hands the slot back, 1 a success, 2 a failure.
    pub(crate) kind: u8,
    pub(crate) slow: bool,
    pub(crate) minimum: u32,
    pub(crate) failure_threshold: f32,
    pub(crate) slow_threshold: f32,
    pub(crate) wait_ms: u64,
}

impl Outcome {
    /// Hands a slot back: counts nothing.
    pub(crate) const RELEASE: Outcome = Outcome {
        kind: 0,
        slow: false,
        minimum: 0,
        failure_threshold: 0.0,
        slow_threshold: 0.0,
        wait_ms: 0,
    };
}

pub(crate) struct Link {
    /// This link, for the jobs it hands to the store's call thread.
    pub(crate) me: Weak<Link>,
    pub(crate) store: Weak<StoreInner>,
    pub(crate) breaker: WeakCircuitBreaker,
    pub(crate) key: String,
    pub(crate) trials_key: String,
    /// The shared epoch this process last saw (0: none, or the key did not exist).
    pub(crate) epoch: AtomicU64,
    /// The shared OPEN attempts last seen (for the wait of the next OPEN).
    pub(crate) attempts: AtomicU32,
    pub(crate) leases: Mutex<Vec<Lease>>,
    /// Local clock (ns): trial requests before it are refused without asking Redis (every
    /// slot was taken a moment ago).
    pub(crate) refused_until: AtomicU64,
    /// This process's writes handed to the call thread and not answered yet: while any is,
    /// the refresher applies nothing (what it reads may predate them, e.g. the OPEN a
    /// manual reset is about to close), their replies bring the shared state instead.
    pub(crate) in_flight: AtomicU32,
    /// Writes this process has handed to the call thread so far: a read sent before the
    /// latest of them may predate it and is not applied.
    pub(crate) writes: AtomicU64,
}

impl Link {
    pub(crate) fn new(store: &Arc<StoreInner>, cb: &CircuitBreaker) -> Arc<Link> {
        let key = format!("{}{{{}}}", store.options.key_prefix, cb.name());
        Arc::new_cyclic(|me| Link {
            me: me.clone(),
            store: Arc::downgrade(store),
            breaker: cb.downgrade_weak(),
            trials_key: format!("{key}:trials"),
            key,
            epoch: AtomicU64::new(0),
            attempts: AtomicU32::new(0),
            leases: Mutex::new(Vec::new()),
            refused_until: AtomicU64::new(0),
            in_flight: AtomicU32::new(0),
            writes: AtomicU64::new(0),
        })
    }

    pub(crate) fn ttl_ms(s: &StoreInner) -> u64 {
        s.options.key_ttl.as_millis() as u64
    }

    /// A request to run `which` on this breaker's keys with `args`.
    fn request(&self, which: Which, args: Vec<String>) -> Request {
        Request {
            which,
            key: self.key.clone(),
            trials_key: self.trials_key.clone(),
            args,
        }
    }

    /// A write: `args` after the two every write starts with, when it was decided
    /// (Redis's clock, ms; 0 unknown) and the latest Redis may run it (set when it is sent,
    /// [`Request::stamp`]).
    fn write(&self, which: Which, decided: u64, args: &[&dyn ToString]) -> Request {
        let mut all = vec![decided.to_string(), "0".to_string()];
        all.extend(args.iter().map(|a| a.to_string()));
        self.request(which, all)
    }

    /// `READ`: the shared state.
    pub(crate) fn read_request(&self) -> Request {
        self.request(Which::Read, Vec::new())
    }

    /// Runs one request on `c` now (the refresher's and attach's connections).
    fn run_now(s: &StoreInner, c: &mut Connection, mut r: Request) -> redis::RedisResult<Reply> {
        s.stamp(&mut r);
        let reply = s.scripts.run(c, &[&r])?.pop().ok_or_else(|| {
            redis::RedisError::from((redis::ErrorKind::TypeError, "no script reply"))
        })?;
        s.clock.observe(reply.now_ms);
        Ok(reply)
    }

    /// Reads the shared state and applies it (at attach time, waiting at most
    /// `3 x timeout`).
    pub(crate) fn refresh(&self, s: &StoreInner, cb: &CircuitBreaker) {
        let _ = s.call(|c, _| {
            let writes = self.writes.load(Ordering::Acquire);
            let r = Self::run_now(s, c, self.read_request())?;
            self.reconcile(s, c, cb, r, writes)
        });
    }

    /// Brings the local breaker and the shared state together after a read: a newer shared
    /// state is applied; a local OPEN that Redis does not know (lost in a restart, tripped
    /// while Redis was away, or refused as late) is written back on `c`, decided now, with
    /// the local OPEN's remaining wait.
    pub(crate) fn reconcile(
        &self,
        s: &StoreInner,
        c: &mut Connection,
        cb: &CircuitBreaker,
        r: Reply,
        writes: u64,
    ) -> redis::RedisResult<()> {
        // This process wrote since the read was sent, or waits for a write's reply: what
        // was read may predate it (the OPEN a manual reset is closing), so the replies bring
        // the state instead.
        if self.in_flight.load(Ordering::Acquire) > 0
            || self.writes.load(Ordering::Acquire) != writes
        {
            return Ok(());
        }
        let local = cb.state();
        self.attempts.store(r.attempts, Ordering::Relaxed);
        if r.epoch == 0 {
            self.epoch.store(0, Ordering::Relaxed);
            if local == State::Open {
                return self.write_back(s, c, cb);
            }
            return Ok(());
        }
        let known = self.epoch.swap(r.epoch, Ordering::Relaxed);
        if known != r.epoch {
            self.apply(cb, r);
        } else if local == State::Open && r.state == Shared::Closed {
            return self.write_back(s, c, cb);
        } else if !compatible(local, &r) {
            self.apply(cb, r);
        }
        Ok(())
    }

    fn write_back(
        &self,
        s: &StoreInner,
        c: &mut Connection,
        cb: &CircuitBreaker,
    ) -> redis::RedisResult<()> {
        let Some(wait_ms) = open_wait_ms(cb) else {
            return Ok(());
        };
        let expected = self.epoch.load(Ordering::Relaxed);
        let request = self.trip_request(s, false, wait_ms, s.clock.now_ms(), expected);
        let r = Self::run_now(s, c, request)?;
        self.tripped(cb, r);
        Ok(())
    }

    /// Moves the local breaker to the shared state `r`.
    pub(crate) fn apply(&self, cb: &CircuitBreaker, r: Reply) {
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

    /// Writes an OPEN for `wait_ms` (-1: an OPEN whose wait has passed, which the first
    /// trial lease turns into HALF_OPEN) from the call path: handed to the store's call
    /// thread with what it is based on (the epoch seen now, decided now), never waited for.
    pub(crate) fn trip(&self, s: &StoreInner, force: bool, wait_ms: i64) {
        // With an earlier write of this process unanswered (a reset just before), the epoch
        // it leads to is not known yet: no basis (0), the trip applies from any CLOSED.
        let expected = if self.in_flight.load(Ordering::Acquire) > 0 {
            0
        } else {
            self.epoch.load(Ordering::Relaxed)
        };
        let request = self.trip_request(s, force, wait_ms, s.clock.now_ms(), expected);
        let Some(link) = self.me.upgrade() else {
            return;
        };
        self.submit_write(
            s,
            request,
            Box::new(move |_, reply| {
                if let (Some(r), Some(cb)) = (reply, link.breaker.upgrade()) {
                    link.tripped(&cb, r);
                }
            }),
        );
    }

    /// Hands a write to the store's call thread, counted in
    /// [`in_flight`](Self::in_flight) until `then` has run with its reply.
    pub(crate) fn submit_write(&self, s: &StoreInner, request: Request, then: Then) {
        let Some(link) = self.me.upgrade() else {
            return;
        };
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.writes.fetch_add(1, Ordering::AcqRel);
        s.submit(Job {
            request,
            wanted: None,
            then: Box::new(move |s, reply| {
                then(s, reply);
                link.in_flight.fetch_sub(1, Ordering::AcqRel);
            }),
        });
    }

    /// Whether a write submitted after the one whose reply is being handled is still
    /// unanswered (its reply, later, is the newer word: an earlier reply applies nothing).
    pub(crate) fn newer_write_pending(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) > 1
    }

    /// `TRIP` (see `scripts.rs`).
    fn trip_request(
        &self,
        s: &StoreInner,
        force: bool,
        wait_ms: i64,
        decided: u64,
        expected: u64,
    ) -> Request {
        let ttl = Self::ttl_ms(s);
        let force = u8::from(force);
        self.write(Which::Trip, decided, &[&expected, &wait_ms, &ttl, &force])
    }

    /// A trip's reply: the shared state it left, unless it came too late.
    fn tripped(&self, cb: &CircuitBreaker, r: Reply) {
        if r.late {
            tracing::debug!(target: "breaker_redis", breaker = cb.name(), "a trip Redis ran late was refused");
            return;
        }
        self.epoch.store(r.epoch, Ordering::Relaxed);
        self.attempts.store(r.attempts, Ordering::Relaxed);
        if !r.flag && !self.newer_write_pending() {
            // Another process's state stands (an earlier OPEN, a newer HALF_OPEN or CLOSED).
            self.apply(cb, r);
        }
    }

    /// CLOSED for every replica (a manual transition), from the call path, never waited for.
    pub(crate) fn close(&self, s: &StoreInner) {
        let ttl = Self::ttl_ms(s);
        let request = self.write(Which::Close, s.clock.now_ms(), &[&ttl]);
        let Some(link) = self.me.upgrade() else {
            return;
        };
        self.submit_write(
            s,
            request,
            Box::new(move |_, reply| {
                if let Some(r) = reply.filter(|r| !r.late) {
                    link.epoch.store(r.epoch, Ordering::Relaxed);
                }
            }),
        );
    }

    /// `LEASE` for the trial lease `id` (decided at `decided`, Redis's clock).
    pub(crate) fn lease_request(
        &self,
        s: &StoreInner,
        id: &str,
        permitted: u32,
        decided: u64,
    ) -> Request {
        let lease_ms = s.options.trial_lease.as_millis() as u64;
        let ttl = Self::ttl_ms(s);
        self.write(Which::Lease, decided, &[&id, &lease_ms, &permitted, &ttl])
    }

    /// `OUTCOME`: ends the trial lease `id` of HALF_OPEN epoch `epoch` with `o`.
    pub(crate) fn outcome_request(
        &self,
        s: &StoreInner,
        id: &str,
        epoch: u64,
        o: &Outcome,
        decided: u64,
    ) -> Request {
        let ttl = Self::ttl_ms(s);
        let slow = u8::from(o.slow);
        self.write(
            Which::Outcome,
            decided,
            &[
                &id,
                &epoch,
                &o.kind,
                &slow,
                &o.minimum,
                &o.failure_threshold,
                &o.slow_threshold,
                &o.wait_ms,
                &ttl,
            ],
        )
    }
}

/// The remaining wait of the breaker's OPEN (ms, rounded up), `None` when it is not OPEN.
pub(crate) fn open_wait_ms(cb: &CircuitBreaker) -> Option<i64> {
    let until = cb.open_until_nanos()?;
    let now = cb.clock().recent_nanos();
    let wait_ms = until.saturating_sub(now).div_ceil(NANOS_PER_MILLI);
    Some(wait_ms.min(i64::MAX as u64) as i64)
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
