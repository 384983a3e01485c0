//! [`Machine`]'s permissions and recorded outcomes (`tryAcquirePermission`, `onSuccess` /
//! `onError`, the lock-free fast window's hand-over).

use super::*;

impl Machine {
    // ----- permissions ------------------------------------------------------------------

    /// `tryAcquirePermission()`. On success returns the generation of the state that
    /// granted the permission.
    pub fn try_acquire(&mut self, now: u64, sink: &mut EventSink) -> Result<u64, Refusal> {
        self.fire_due_timers(now, sink);
        match self.state {
            State::Closed | State::Disabled | State::MetricsOnly => Ok(self.generation),
            State::Open => {
                if now > self.open_deadline {
                    let _ = self.transition(State::HalfOpen, OpenWait::NextAttempt, now, sink);
                    self.try_acquire_half_open(sink)
                } else {
                    self.metrics.not_permitted += 1;
                    self.publish(sink, EventKind::NotPermitted);
                    Err(Refusal {
                        state: State::Open,
                        until: self.open_deadline,
                    })
                }
            }
            State::HalfOpen => self.try_acquire_half_open(sink),
            State::ForcedOpen => {
                self.metrics.not_permitted += 1;
                self.publish(sink, EventKind::NotPermitted);
                Err(Refusal {
                    state: State::ForcedOpen,
                    until: 0,
                })
            }
        }
    }

    pub(super) fn try_acquire_half_open(&mut self, sink: &mut EventSink) -> Result<u64, Refusal> {
        if self.permits > 0 {
            self.permits -= 1;
            Ok(self.generation)
        } else {
            self.metrics.not_permitted += 1;
            self.publish(sink, EventKind::NotPermitted);
            Err(Refusal {
                state: State::HalfOpen,
                until: self.half_open_timer_at.unwrap_or(0),
            })
        }
    }

    /// Whether an outcome or release of a call admitted by the state object `generation`
    /// acts on HALF_OPEN (decides it, frees a trial permission): always in exact Resilience4j
    /// mode, else only for that HALF_OPEN state's own trial calls.
    #[inline]
    pub(super) fn counts_in_half_open(&self, generation: u64) -> bool {
        generation == self.generation || self.config.exact_resilience4j
    }

    /// `releasePermission()` of a call admitted by the state object `generation`: only
    /// HALF_OPEN reacts, by adding one trial permission (see
    /// [`counts_in_half_open`](Self::counts_in_half_open)).
    pub fn release(&mut self, generation: u64, now: u64, sink: &mut EventSink) {
        self.fire_due_timers(now, sink);
        if self.state == State::HalfOpen && self.counts_in_half_open(generation) {
            self.permits += 1;
        }
    }

    /// A trial permission granted by `generation` that a shared store refused: handed back
    /// if that HALF_OPEN state is current, and counted and published as a rejection.
    pub fn refuse_trial(&mut self, generation: u64, sink: &mut EventSink) {
        if self.state == State::HalfOpen && self.generation == generation {
            self.permits += 1;
        }
        self.metrics.not_permitted += 1;
        self.publish(sink, EventKind::NotPermitted);
    }

    /// Releases a permission only if it was granted by the current HALF_OPEN state object:
    /// what a dropped, unfinished call does (in both modes).
    pub fn release_if_current(&mut self, generation: u64, now: u64, sink: &mut EventSink) {
        self.fire_due_timers(now, sink);
        if self.state == State::HalfOpen && self.generation == generation {
            self.permits += 1;
        }
    }

    // ----- outcomes ---------------------------------------------------------------------

    /// Records the outcome of a call that took `elapsed` (Resilience4j's `onSuccess` /
    /// `onError`), admitted by the state object `generation`. Applied to the current state
    /// whatever state granted the call, except that in HALF_OPEN a late call (admitted by an
    /// earlier state object) only publishes its event, unless in exact Resilience4j mode.
    pub fn on_outcome(
        &mut self,
        outcome: Outcome,
        elapsed: Duration,
        error: Option<Throwable>,
        generation: u64,
        now: u64,
        sink: &mut EventSink,
    ) {
        self.fire_due_timers(now, sink);
        let counts = self.state != State::HalfOpen || self.counts_in_half_open(generation);
        let failed = match outcome {
            Outcome::Ignored => {
                if self.state == State::HalfOpen && counts {
                    self.permits += 1;
                }
                self.publish(sink, EventKind::IgnoredError { elapsed, error });
                return;
            }
            Outcome::Success => {
                self.publish(sink, EventKind::Success { elapsed });
                false
            }
            Outcome::Failure => {
                self.publish(sink, EventKind::Error { elapsed, error });
                true
            }
        };
        if !counts {
            return;
        }
        let slow = elapsed.as_nanos() > self.slow_threshold_nanos as u128;
        match self.state {
            State::Closed => {
                let (verdict, fr, sr) = self.metrics.record(&self.config, now, failed, slow);
                self.closed_verdict(verdict, fr, sr, now, sink);
            }
            State::HalfOpen => {
                self.last_trial_at = now;
                let (verdict, _, _) = self.metrics.record(&self.config, now, failed, slow);
                match verdict {
                    Verdict::BelowMinimumCalls => {}
                    Verdict::Below => {
                        let _ = self.transition(State::Closed, OpenWait::NextAttempt, now, sink);
                    }
                    _ => {
                        let _ = self.transition(State::Open, OpenWait::NextAttempt, now, sink);
                    }
                }
            }
            State::Open => {
                self.metrics.record(&self.config, now, failed, slow);
            }
            State::MetricsOnly => {
                let (verdict, fr, sr) = self.metrics.record(&self.config, now, failed, slow);
                if verdict.failure_exceeded() && !self.failure_rate_published {
                    self.failure_rate_published = true;
                    self.publish(sink, EventKind::FailureRateExceeded { failure_rate: fr });
                }
                if verdict.slow_exceeded() && !self.slow_call_rate_published {
                    self.slow_call_rate_published = true;
                    self.publish(sink, EventKind::SlowCallRateExceeded { slow_call_rate: sr });
                }
            }
            State::Disabled | State::ForcedOpen => {}
        }
    }

    /// The common cases of [`on_outcome`](Self::on_outcome), for a caller that knows nobody
    /// is subscribed (so no per-call event would be built), for the call admitted by the
    /// state object `generation`, at `now`:
    ///
    /// - CLOSED, a full count window, and the outcome leaves both counts below their integer
    ///   thresholds;
    /// - CLOSED, a time window, and the outcome leaves the window below the minimum number of
    ///   calls or both rates below their thresholds;
    /// - HALF_OPEN, a trial call of this HALF_OPEN state, no timer due, and the window still
    ///   below the minimum number of calls after it (no verdict yet, none due);
    /// - HALF_OPEN, a call admitted by an earlier state (default mode), no timer due: nothing
    ///   happens to it (its event would be the only trace);
    /// - DISABLED: nothing is recorded;
    ///
    /// and in every case nothing for [`settle_pending`](Self::settle_pending). Then the
    /// outcome is recorded and `true` returned; nothing else would have happened (no event,
    /// timer or transition). Otherwise nothing is done and `false` is returned: the
    /// caller runs `on_outcome`, under the same lock.
    #[inline]
    pub fn try_record_quiet(
        &mut self,
        failed: bool,
        elapsed: Duration,
        generation: u64,
        now: u64,
    ) -> bool {
        if self.settle_is_pending() {
            return false;
        }
        let slow = elapsed.as_nanos() > self.slow_threshold_nanos as u128;
        match self.state {
            State::Closed => match &mut self.metrics.window {
                Window::Count(w) => {
                    let need = &self.metrics.need;
                    // `need` is computed for a full window of this size under the current
                    // thresholds (`reconfigure` clears it, so a threshold change cannot leave
                    // a stale one here).
                    if need.calls as usize != w.capacity() {
                        return false;
                    }
                    match w.totals_after(failed, slow) {
                        Some((f, s)) if f < need.failed && s < need.slow => {
                            w.record(failed, slow);
                            true
                        }
                        _ => false,
                    }
                }
                Window::Time(w) => {
                    w.advance(now);
                    let mut t = w.totals();
                    t.calls += 1;
                    t.failed += u32::from(failed);
                    t.slow += u32::from(slow);
                    let c = &self.config;
                    // A rate of 0 is below every threshold (they are above 0).
                    let below = t.calls < self.metrics.minimum_number_of_calls
                        || ((t.failed == 0 || rate(t.failed, t.calls) < c.failure_rate_threshold)
                            && (t.slow == 0 || rate(t.slow, t.calls) < c.slow_call_rate_threshold));
                    if below {
                        w.record(now, failed, slow);
                    }
                    below
                }
                Window::Empty => false,
            },
            State::HalfOpen => {
                if matches!(self.half_open_timer_at, Some(at) if at <= now) {
                    return false;
                }
                if !self.counts_in_half_open(generation) {
                    return true;
                }
                let Window::Count(w) = &mut self.metrics.window else {
                    return false;
                };
                let calls_after = w.totals().calls + 1;
                if w.is_full() || calls_after >= self.metrics.minimum_number_of_calls {
                    return false;
                }
                w.record(failed, slow);
                self.last_trial_at = now;
                true
            }
            State::Disabled => true,
            _ => false,
        }
    }

    /// The common cases of [`try_acquire`](Self::try_acquire) in HALF_OPEN, for a caller
    /// that knows nobody is subscribed: no timer due, nothing for
    /// [`settle_pending`](Self::settle_pending), and a trial permission left (granted:
    /// `Ok` with the state's generation) or none (refused and counted). `None` in any other
    /// case: the caller runs `try_acquire`, under the same lock.
    #[inline]
    pub fn try_acquire_quiet(&mut self, now: u64) -> Option<Result<u64, Refusal>> {
        if self.state != State::HalfOpen
            || matches!(self.half_open_timer_at, Some(at) if at <= now)
            || self.settle_is_pending()
        {
            return None;
        }
        if self.permits > 0 {
            self.permits -= 1;
            Some(Ok(self.generation))
        } else {
            self.metrics.not_permitted += 1;
            Some(Err(Refusal {
                state: State::HalfOpen,
                until: self.half_open_timer_at.unwrap_or(0),
            }))
        }
    }

    // ----- the lock-free path (CLOSED's window, HALF_OPEN's trials) --------------------------

    /// The lock-free path this machine opens.
    pub fn fast_window(&self) -> &Arc<FastWindow> {
        &self.fast
    }

    /// Closes the lock-free path before an operation (see [`crate::fast_window`]) and adopts
    /// the head it moved the window to. Cheap when it is closed already.
    #[inline]
    pub fn seal_fast(&mut self) {
        // Only ever opened on the CLOSED or HALF_OPEN state's window (`publish_fast`), which
        // nothing has replaced since: every replacement happens under the lock, after a seal.
        match (self.fast.seal(), &mut self.metrics.window) {
            (Some(Sealed::Head(head)), Window::Count(w)) => w.set_head(head),
            (Some(Sealed::Counts(t)), Window::Time(w)) => w.add_to_newest(t),
            (Some(Sealed::Trials { permits, successes }), Window::Count(w)) => {
                debug_assert_eq!(self.state, State::HalfOpen);
                self.permits = i64::from(permits);
                w.record_successes(successes);
            }
            (None, _) => {}
            (Some(sealed), _) => debug_assert!(false, "{sealed:?} sealed on another window"),
        }
        if self.state == State::HalfOpen {
            self.adopt_trial_stripes();
        }
        if let Some((generation, adopted)) = &mut self.retired_trials {
            let (counted, _) = self.fast.trial_stripes(*generation);
            if counted > *adopted {
                self.late_trials += counted - *adopted;
                *adopted = counted;
            }
        }
    }

    /// Adds the trial successes counted in the stripes since the last adoption to the trial
    /// window. Stripe successes may land after a seal (a thread checks the published state,
    /// then stores), so every locked operation in HALF_OPEN adopts, sealed path or not.
    pub(super) fn adopt_trial_stripes(&mut self) {
        let (counted, last_end) = self.fast.trial_stripes(self.generation);
        if counted <= self.stripes_adopted {
            return;
        }
        let Window::Count(w) = &mut self.metrics.window else {
            return;
        };
        // Never past the window's size (a window a reconfiguration shrank can be owed more
        // successes than it holds): once it is full the verdict is due, and the successes
        // left over reach the state after it, as late outcomes (see `retired_trials`).
        let room = (w.capacity() as u32).saturating_sub(w.totals().calls);
        let adopted = (counted - self.stripes_adopted).min(room);
        w.record_successes(adopted);
        self.stripes_adopted += adopted;
        self.last_trial_at = self.last_trial_at.max(last_end);
    }

    /// Opens the lock-free path after an operation if the machine allows it and `quiet`
    /// (nobody subscribed): CLOSED, with a full count window on the shared ring whose
    /// thresholds were checked under the current config (so it is below them), or a time
    /// window; HALF_OPEN with no verdict due and at most [`fast_window::MAX_TRIALS`]
    /// permitted trial calls.
    #[inline]
    pub fn publish_fast(&self, quiet: bool) {
        if !quiet {
            return;
        }
        if self.state == State::HalfOpen {
            self.publish_half_open();
            return;
        }
        if self.state != State::Closed {
            return;
        }
        match &self.metrics.window {
            Window::Count(w) => {
                if w.is_full()
                    && self.metrics.need.is_for(w.capacity() as u32, &self.config)
                    && self
                        .fast
                        .ring_of(w.capacity())
                        .is_some_and(|ring| w.is_on(ring))
                {
                    self.fast
                        .publish_count(w.head(), w.capacity(), self.slow_threshold_nanos);
                }
            }
            Window::Time(w) => self.fast.publish_time(
                w.newest_second(),
                w.totals(),
                self.metrics.minimum_number_of_calls,
                self.config.failure_rate_threshold,
                self.config.slow_call_rate_threshold,
                self.slow_threshold_nanos,
            ),
            Window::Empty => {}
        }
    }

    /// HALF_OPEN's part of [`publish_fast`](Self::publish_fast).
    pub(super) fn publish_half_open(&self) {
        let Window::Count(w) = &self.metrics.window else {
            return;
        };
        let max = fast_window::MAX_TRIALS;
        let calls = w.totals().calls;
        let minimum = self.metrics.minimum_number_of_calls;
        if self.config.permitted_number_of_calls_in_half_open_state > max
            || !(0..=i64::from(max)).contains(&self.permits)
            || minimum > max
            || calls >= minimum
        {
            return;
        }
        // Striped only when the verdict is due at the window's full size: then no permission
        // is left while it is due, and every call takes the lock, which settles it.
        // Not in exact Resilience4j mode, where outcomes of earlier states also count in
        // the trial window and could fill it before the trial calls in flight finish.
        let striped = (minimum as usize == w.capacity() && !self.config.exact_resilience4j)
            .then_some(self.stripes_adopted);
        self.fast.publish_half(
            self.generation,
            self.permits as u32,
            calls,
            minimum,
            self.half_open_timer_at.unwrap_or(u64::MAX),
            self.slow_threshold_nanos,
            striped,
        );
    }

    /// What CLOSED does after a verdict: trips when a rate is reached.
    pub(super) fn closed_verdict(
        &mut self,
        verdict: Verdict,
        fr: f32,
        sr: f32,
        now: u64,
        sink: &mut EventSink,
    ) {
        if verdict.failure_exceeded() || verdict.slow_exceeded() {
            if verdict.failure_exceeded() {
                self.publish(sink, EventKind::FailureRateExceeded { failure_rate: fr });
            }
            if verdict.slow_exceeded() {
                self.publish(sink, EventKind::SlowCallRateExceeded { slow_call_rate: sr });
            }
            let _ = self.transition(State::Open, OpenWait::NextAttempt, now, sink);
        }
    }
}
