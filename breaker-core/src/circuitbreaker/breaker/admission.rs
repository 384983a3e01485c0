//! [`CircuitBreaker`]'s permissions and recorded outcomes: `tryAcquirePermission()`, the
//! HALF_OPEN trial bookkeeping with an attached store, `onSuccess` / `onError` / `releasePermission`.

use super::*;
use std::time::Duration;

use crate::classify::Outcome;
use crate::error::CallNotPermitted;
use crate::fast_window::Recorded;
use crate::permit::Permit;
use crate::shared::{TrialEnd, TrialGrant};
use crate::throwable::Throwable;

impl CircuitBreaker {
    /// Asks for permission to make one call (Resilience4j's `tryAcquirePermission()`).
    ///
    /// In OPEN, the first request strictly after the wait has passed moves the breaker to
    /// HALF_OPEN and takes the first trial permission. Record the call's outcome on the
    /// returned [`Permit`]; dropping it unused hands a HALF_OPEN permission back.
    ///
    /// # Errors
    /// [`CallNotPermitted`] in OPEN (before the wait has passed), in HALF_OPEN when every
    /// trial permission is taken, and in FORCED_OPEN. The rejection is counted in
    /// `number_of_not_permitted_calls` and publishes `NOT_PERMITTED` (not in FORCED_OPEN).
    #[inline(always)]
    pub fn try_acquire_permission(&self) -> Result<Permit<'_>, CallNotPermitted> {
        let word = self.inner.word.load(Ordering::Acquire);
        // CLOSED, DISABLED, METRICS_ONLY: no lock.
        if (1u8 << (word & 7)) & ADMITS_WITHOUT_LOCK != 0 {
            return Ok(Permit::new(self, self.now_nanos(), word));
        }
        self.try_acquire_not_admitting(word)
    }

    /// OPEN, FORCED_OPEN and HALF_OPEN. Inlined into the caller: as a call of its own, its
    /// prologue's register saves were stores the rejection's `fetch_add` had to wait for.
    #[inline(always)]
    pub(super) fn try_acquire_not_admitting(
        &self,
        word: u64,
    ) -> Result<Permit<'_>, CallNotPermitted> {
        if (1u8 << (word & 7)) & REJECTS_WITHOUT_LOCK != 0 {
            // Rejected before the deadline with no timer due and nobody to tell (the limit
            // is 0 while anyone is subscribed): no lock. The count joins the state's
            // metrics under the lock, before anything reads it.
            let now = self.now_nanos();
            if now < self.inner.reject_before.load(Ordering::Acquire) {
                // Counted before the rejection is built: a locked read-modify-write waits
                // for every store before it, and building the rejection is eight of them.
                self.inner.fast_rejections.fetch_add(1, Ordering::Relaxed);
                return Err(CallNotPermitted {
                    name: self.inner.reject_name.clone(),
                    state: State::from_u8((word & 7) as u8),
                    until: self.inner.open_deadline.load(Ordering::Relaxed),
                    at: now,
                });
            }
        }
        let (now, admitted) = self.try_acquire_trial();
        if admitted != 0 {
            return Ok(Permit::new(self, now, admitted));
        }
        self.try_acquire_with_lock()
    }

    /// A trial permission of the HALF_OPEN state the lock-free path was opened on, with no
    /// store attached: when it was granted (epoch ns) and the admitting state word (never 0:
    /// HALF_OPEN's bits are set), or `(_, 0)` when the lock must decide.
    ///
    /// A small call of its own, returning in two registers: inline in
    /// `try_acquire_permission`, it made the CLOSED path's caller keep its permit on the
    /// stack instead of in registers; returning a `Result<Permit, _>` through memory, the
    /// caller's reload of the permit waited for its stores to forward.
    #[inline(always)]
    pub(super) fn try_acquire_trial(&self) -> (u64, u64) {
        if self.inner.shared.get().is_some() {
            return (0, 0);
        }
        let now = self.now_nanos();
        match self.inner.fast.try_acquire_trial(now) {
            Some(generation) => (now, pack(State::HalfOpen, generation)),
            None => (now, 0),
        }
    }

    /// Everything but a lock-free rejection or trial permission, with the lock: OPEN once
    /// its wait has passed, HALF_OPEN when the lock-free path is closed (lean when nobody is
    /// subscribed), and every case with subscribers.
    #[cold]
    #[inline(never)]
    pub(super) fn try_acquire_with_lock(&self) -> Result<Permit<'_>, CallNotPermitted> {
        let mut m = self.lock();
        if !self.inner.subscribers.any() {
            // HALF_OPEN, nobody to tell, no timer due: take or refuse a trial permission
            // and unlock (see `Machine::try_acquire_quiet`).
            // Takes over the trial permissions the lock-free path holds, and hands them
            // back to it after.
            m.seal_fast();
            let now = self.now_nanos();
            match m.try_acquire_quiet(now) {
                Some(Ok(generation)) => {
                    m.publish_fast(true);
                    let admitted = pack(m.state(), generation);
                    drop(m);
                    return self.granted(now, admitted);
                }
                Some(Err(refusal)) => {
                    m.publish_fast(true);
                    drop(m);
                    return Err(CallNotPermitted {
                        name: self.inner.reject_name.clone(),
                        state: refusal.state,
                        until: refusal.until,
                        at: now,
                    });
                }
                None => {}
            }
        }
        self.try_acquire_locked(m)
    }

    /// [`try_acquire_with_lock`](Self::try_acquire_with_lock) through the machine's full
    /// operation.
    #[cold]
    #[inline(never)]
    pub(super) fn try_acquire_locked(
        &self,
        m: MutexGuard<'_, Machine>,
    ) -> Result<Permit<'_>, CallNotPermitted> {
        let r = self.with_locked_machine(m, Origin::Calls, |m, now, sink| {
            m.try_acquire(now, sink)
                .map(|generation| (now, pack(m.state(), generation)))
                .map_err(|refusal| (refusal, now))
        });
        match r {
            Ok((granted_at, admitted)) => self.granted(granted_at, admitted),
            Err((refusal, at)) => Err(CallNotPermitted {
                name: self.inner.reject_name.clone(),
                state: refusal.state,
                until: refusal.until,
                at,
            }),
        }
    }

    /// A permission the machine granted outside the lock-free path: a HALF_OPEN trial is
    /// confirmed with the attached store, if any.
    #[inline]
    pub(super) fn granted(
        &self,
        granted_at: u64,
        admitted: u64,
    ) -> Result<Permit<'_>, CallNotPermitted> {
        if admitted & 7 == State::HalfOpen as u64 {
            if let Some(store) = self.inner.shared.get() {
                return self.confirm_trial(store.as_ref(), granted_at, admitted);
            }
        }
        Ok(Permit::new(self, granted_at, admitted))
    }

    /// A HALF_OPEN trial permission the machine granted, confirmed with the attached store
    /// (which caps the trial calls of every process sharing the breaker).
    #[cold]
    pub(super) fn confirm_trial(
        &self,
        store: &dyn SharedState,
        granted_at: u64,
        admitted: u64,
    ) -> Result<Permit<'_>, CallNotPermitted> {
        match store.acquire_trial(self, admitted >> 3) {
            TrialGrant::Granted | TrialGrant::Local => Ok(Permit::new(self, granted_at, admitted)),
            TrialGrant::Refused { until } => {
                let (state, at) = self.with_machine(|m, now, sink| {
                    if m.state() != State::Closed {
                        m.refuse_trial(admitted >> 3, sink);
                    }
                    (m.state(), now)
                });
                if state == State::Closed {
                    // The shared state closed meanwhile (the store applied it): admit.
                    let word = self.inner.word.load(Ordering::Acquire);
                    return Ok(Permit::new(self, at, word));
                }
                Err(CallNotPermitted {
                    name: self.inner.reject_name.clone(),
                    state: if state == State::Open {
                        State::Open
                    } else {
                        State::HalfOpen
                    },
                    until: if state == State::Open {
                        self.inner.open_deadline.load(Ordering::Relaxed)
                    } else {
                        until
                    },
                    at,
                })
            }
        }
    }

    /// Tells the attached store, if any, that a HALF_OPEN trial call ended.
    #[inline]
    pub(super) fn end_trial(&self, admitted: u64, end: TrialEnd) {
        if let Some(store) = self.inner.shared.get() {
            if admitted & 7 == State::HalfOpen as u64 {
                store.end_trial(self, admitted >> 3, end);
            }
        }
    }

    /// Records the outcome of the call admitted as `admitted` (state and generation, see
    /// [`Permit`]) that took `elapsed_nanos` and ended at `end_nanos` (by the breaker's
    /// clock). With a store attached, a HALF_OPEN trial's end is then reported to it (after
    /// the local machine has recorded it); without one, this costs one "is a store
    /// attached" load.
    #[inline(always)]
    pub(crate) fn record(
        &self,
        admitted: u64,
        outcome: Outcome,
        elapsed_nanos: u64,
        end_nanos: u64,
        error: Option<Throwable>,
    ) {
        // CLOSED, nobody subscribed, an outcome that only moves a full count window's head
        // or adds to a time window's newest second below the thresholds: no lock (see
        // `crate::fast_window`).
        let recorded = if outcome == Outcome::Ignored {
            Recorded::No
        } else {
            self.inner.fast.try_record(
                outcome == Outcome::Failure,
                elapsed_nanos,
                end_nanos,
                admitted >> 3,
            )
        };
        match recorded {
            Recorded::Yes => {}
            Recorded::No => self.record_locked(admitted, outcome, elapsed_nanos, error),
            Recorded::YesSettle => self.settle_trials(),
        }
        if let Some(store) = self.inner.shared.get() {
            if admitted & 7 == State::HalfOpen as u64 {
                self.trial_ended(store.as_ref(), admitted, outcome, elapsed_nanos);
            }
        }
    }

    #[cold]
    pub(super) fn trial_ended(
        &self,
        store: &dyn SharedState,
        admitted: u64,
        outcome: Outcome,
        elapsed_nanos: u64,
    ) {
        let end = match outcome {
            Outcome::Ignored => TrialEnd::Released,
            o => TrialEnd::Outcome {
                failed: o == Outcome::Failure,
                elapsed: Duration::from_nanos(elapsed_nanos),
            },
        };
        store.end_trial(self, admitted >> 3, end);
    }

    /// Settles under the lock after a trial success counted in a stripe that may have
    /// completed the trial window, or that may have come after its HALF_OPEN state ended
    /// (see [`Recorded::YesSettle`]): every locked operation adopts the stripes and settles
    /// what they left pending first (`Machine::settle_pending`), so an empty one will do.
    #[cold]
    #[inline(never)]
    pub(super) fn settle_trials(&self) {
        self.with_machine(|_, _, _| {});
    }

    /// [`record`](Self::record) under the lock.
    #[inline(never)]
    pub(super) fn record_locked(
        &self,
        admitted: u64,
        outcome: Outcome,
        elapsed_nanos: u64,
        error: Option<Throwable>,
    ) {
        let failed = outcome == Outcome::Failure;
        let elapsed = Duration::from_nanos(elapsed_nanos);
        let mut m = self.lock();
        // Nobody subscribed, no uncounted rejection to fold in, and an outcome that changes
        // nothing but the window: record and unlock (see `Machine::try_record_quiet`). The
        // clock is read with the lock held, as every operation reads it.
        if outcome != Outcome::Ignored
            && !self.inner.subscribers.any()
            && self.inner.fast_rejections.load(Ordering::Relaxed) == 0
        {
            m.seal_fast();
            let now = self.now_nanos();
            if m.try_record_quiet(failed, elapsed, admitted >> 3, now) {
                m.publish_fast(true);
                return;
            }
        }
        self.record_full(m, admitted, outcome, elapsed, error);
    }

    /// [`record`](Self::record) through the machine's full operation.
    #[cold]
    #[inline(never)]
    pub(super) fn record_full(
        &self,
        m: MutexGuard<'_, Machine>,
        admitted: u64,
        outcome: Outcome,
        elapsed: Duration,
        error: Option<Throwable>,
    ) {
        self.with_locked_machine(m, Origin::Calls, |m, now, sink| {
            m.on_outcome(outcome, elapsed, error, admitted >> 3, now, sink)
        });
    }

    /// `releasePermission()` for the call admitted as `admitted`.
    pub(crate) fn release(&self, admitted: u64) {
        self.with_machine(|m, now, sink| m.release(admitted >> 3, now, sink));
        self.end_trial(admitted, TrialEnd::Released);
    }

    /// What a permit dropped unused does: hands a HALF_OPEN permission back to the state
    /// that granted it, if that state is still current.
    pub(crate) fn release_if_current(&self, admitted: u64) {
        self.with_machine(|m, now, sink| m.release_if_current(admitted >> 3, now, sink));
        self.end_trial(admitted, TrialEnd::Released);
    }
}
