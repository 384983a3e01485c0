//! [`Machine`]'s reads, transitions and reconfiguration.

use super::*;

impl Machine {
    // ----- reads ------------------------------------------------------------------------

    pub fn metrics(&mut self, now: u64, sink: &mut EventSink) -> Metrics {
        self.fire_due_timers(now, sink);
        self.metrics.snapshot(self.state, now)
    }

    pub fn current_state(&mut self, now: u64, sink: &mut EventSink) -> State {
        self.fire_due_timers(now, sink);
        self.state
    }

    // ----- transitions ------------------------------------------------------------------

    /// A transition as Resilience4j's `stateTransition` performs it: legality check, the
    /// old state's timers cancelled, a new state object, `STATE_TRANSITION` unless X -> X.
    ///
    /// # Errors
    /// `Err(())` for CLOSED -> HALF_OPEN, METRICS_ONLY -> OPEN and METRICS_ONLY -> HALF_OPEN;
    /// nothing changes then.
    pub fn transition(
        &mut self,
        to: State,
        wait: OpenWait,
        now: u64,
        sink: &mut EventSink,
    ) -> Result<(), ()> {
        let from = self.state;
        if !from.can_transition_to(to) {
            return Err(());
        }
        match to {
            State::Closed => self.enter_simple(State::Closed, now, 0),
            State::Open => {
                // A window of size 0 (DISABLED, FORCED_OPEN) is replaced by a fresh one, so a
                // late result recorded in OPEN cannot divide by zero (deliberate deviation).
                let carried = match from {
                    State::Disabled | State::ForcedOpen => {
                        let mut fresh = StateMetrics::for_closed(&self.config, now, &self.fast);
                        fresh.not_permitted = self.metrics.not_permitted;
                        fresh
                    }
                    _ => std::mem::replace(&mut self.metrics, StateMetrics::empty()),
                };
                self.enter_open(now, self.attempts, wait, carried);
            }
            State::HalfOpen => self.enter_half_open(now, self.attempts),
            State::ForcedOpen => self.enter_simple(State::ForcedOpen, now, self.attempts + 1),
            State::Disabled | State::MetricsOnly => self.enter_simple(to, now, 0),
        }
        if from != to {
            sink.push(EventKind::StateTransition { from, to });
        }
        Ok(())
    }

    /// `reset()`: a fresh CLOSED state whatever the current one, its timers cancelled;
    /// `STATE_TRANSITION X->CLOSED` (unless X is CLOSED), then `RESET`.
    pub fn reset(&mut self, now: u64, sink: &mut EventSink) {
        self.fire_due_timers(now, sink);
        let from = self.state;
        self.enter_simple(State::Closed, now, 0);
        if from != State::Closed {
            sink.push(EventKind::StateTransition {
                from,
                to: State::Closed,
            });
        }
        sink.push(EventKind::Reset);
    }

    pub(super) fn new_state_object(&mut self, state: State, attempts: u32) {
        if self.state == State::HalfOpen {
            self.retired_trials = Some((self.generation, self.stripes_adopted));
        }
        self.state = state;
        self.attempts = attempts;
        self.generation += 1;
        self.auto_half_open_at = None;
        self.half_open_timer_at = None;
        self.failure_rate_published = false;
        self.slow_call_rate_published = false;
        self.permits = 0;
    }

    pub(super) fn enter_simple(&mut self, state: State, now: u64, attempts: u32) {
        self.new_state_object(state, attempts);
        self.metrics = match state {
            State::Closed | State::MetricsOnly => {
                StateMetrics::for_closed(&self.config, now, &self.fast)
            }
            _ => StateMetrics::empty(),
        };
    }

    pub(super) fn enter_open(
        &mut self,
        now: u64,
        previous_attempts: u32,
        wait: OpenWait,
        metrics: StateMetrics,
    ) {
        let (attempts, deadline) = match wait {
            OpenWait::NextAttempt => {
                let attempts = previous_attempts + 1;
                let wait_ms = self
                    .config
                    .wait_interval_function_in_open_state
                    .wait_millis(attempts);
                (
                    attempts,
                    now.saturating_add(wait_ms.saturating_mul(NANOS_PER_MILLI)),
                )
            }
            OpenWait::For(d) => (
                previous_attempts,
                now.saturating_add((d.as_millis() as u64).saturating_mul(NANOS_PER_MILLI)),
            ),
            OpenWait::Until(t) => (previous_attempts, t),
        };
        self.new_state_object(State::Open, attempts);
        self.metrics = metrics;
        self.open_deadline = deadline;
        if self
            .config
            .automatic_transition_from_open_to_half_open_enabled
        {
            self.auto_half_open_at = Some(deadline);
            self.armed_timer = Some(deadline);
        }
    }

    pub(super) fn enter_half_open(&mut self, now: u64, attempts: u32) {
        self.new_state_object(State::HalfOpen, attempts);
        self.metrics = StateMetrics::for_half_open(&self.config);
        self.permits = self.config.permitted_number_of_calls_in_half_open_state as i64;
        self.stripes_adopted = 0;
        self.last_trial_at = now;
        let max_wait_ms = self.config.max_wait_duration_in_half_open_state.as_millis() as u64;
        if max_wait_ms >= 1 {
            let at = now.saturating_add(max_wait_ms.saturating_mul(NANOS_PER_MILLI));
            self.half_open_timer_at = Some(at);
            self.armed_timer = Some(at);
        }
    }

    // ----- reconfiguration --------------------------------------------------------------

    /// Applies a new config to the live state (see the crate docs, "Replacing a config"):
    /// the state and its timers are kept; thresholds and waits apply from the next call.
    /// CLOSED and METRICS_ONLY keep their window when its type and size are unchanged and
    /// start a fresh one otherwise; HALF_OPEN keeps its trial window unless
    /// `permittedNumberOfCallsInHalfOpenState` changed (then a fresh one, with the permits
    /// left adjusted by the difference); OPEN keeps the window that tripped it.
    pub fn reconfigure(&mut self, config: Arc<CircuitBreakerConfig>, now: u64) {
        let old = std::mem::replace(&mut self.config, config);
        let new = self.config.clone();
        self.slow_threshold_nanos = slow_nanos(&new);
        let not_permitted = self.metrics.not_permitted;
        // Recomputed for the new thresholds on the next recorded call.
        self.metrics.need = Need::NONE;
        match self.state {
            State::Closed | State::MetricsOnly => {
                if old.sliding_window_type != new.sliding_window_type
                    || old.sliding_window_size != new.sliding_window_size
                {
                    self.metrics = StateMetrics::for_closed(&new, now, &self.fast);
                    self.metrics.not_permitted = not_permitted;
                } else {
                    self.metrics.minimum_number_of_calls = match new.sliding_window_type {
                        SlidingWindowType::CountBased => {
                            new.minimum_number_of_calls.min(new.sliding_window_size)
                        }
                        SlidingWindowType::TimeBased => new.minimum_number_of_calls,
                    };
                }
            }
            State::HalfOpen => {
                // A verdict this makes due (a lower minimum) is made now, not back-dated.
                self.last_trial_at = self.last_trial_at.max(now);
                let old_p = old.permitted_number_of_calls_in_half_open_state;
                let new_p = new.permitted_number_of_calls_in_half_open_state;
                if old_p != new_p {
                    self.metrics = StateMetrics::for_half_open(&new);
                    self.metrics.not_permitted = not_permitted;
                    self.permits = (self.permits + new_p as i64 - old_p as i64).max(0);
                } else {
                    self.metrics.minimum_number_of_calls = new.minimum_number_of_calls.min(new_p);
                }
            }
            State::Open | State::Disabled | State::ForcedOpen => {}
        }
    }

    /// A manual transition: due timers fire first.
    pub fn manual_transition(
        &mut self,
        to: State,
        wait: OpenWait,
        now: u64,
        sink: &mut EventSink,
    ) -> Result<(), ()> {
        self.fire_due_timers(now, sink);
        self.transition(to, wait, now, sink)
    }
}
