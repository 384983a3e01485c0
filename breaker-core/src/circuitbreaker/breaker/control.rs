//! [`CircuitBreaker`]'s manual transitions, `reset`, shared state, `replace_config`,
//! subscriptions and timer scheduling.

use super::*;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::IllegalStateTransition;
use crate::events::{EventBuffer, SubscriptionId};
use crate::machine::OpenWait;
use crate::shared::SharedView;

impl CircuitBreaker {
    pub(super) fn manual(&self, to: State, wait: OpenWait) -> Result<(), IllegalStateTransition> {
        let r = self.with_locked_machine(self.lock(), Origin::Manual, |m, now, sink| {
            let from = m.state();
            m.manual_transition(to, wait, now, sink).map_err(|()| from)
        });
        r.map_err(|from| IllegalStateTransition {
            name: self.inner.name.clone(),
            from,
            to,
        })
    }

    /// `transitionToClosedState()`: a fresh CLOSED state with an empty window.
    ///
    /// # Errors
    /// Never in practice: every state may move to CLOSED.
    pub fn transition_to_closed_state(&self) -> Result<(), IllegalStateTransition> {
        self.manual(State::Closed, OpenWait::NextAttempt)
    }
    /// `transitionToOpenState()`: OPEN with the next attempt's wait; the current window is
    /// carried into OPEN.
    ///
    /// # Errors
    /// [`IllegalStateTransition`] from METRICS_ONLY.
    pub fn transition_to_open_state(&self) -> Result<(), IllegalStateTransition> {
        self.manual(State::Open, OpenWait::NextAttempt)
    }
    /// `transitionToOpenStateFor(wait)`: OPEN for `wait` (whole ms), attempts unchanged.
    ///
    /// # Errors
    /// [`IllegalStateTransition`] from METRICS_ONLY.
    pub fn transition_to_open_state_for(
        &self,
        wait: Duration,
    ) -> Result<(), IllegalStateTransition> {
        self.manual(State::Open, OpenWait::For(wait))
    }
    /// `transitionToOpenStateUntil(instant)`: OPEN until `until` (by the breaker's clock).
    ///
    /// # Errors
    /// [`IllegalStateTransition`] from METRICS_ONLY.
    pub fn transition_to_open_state_until(
        &self,
        until: SystemTime,
    ) -> Result<(), IllegalStateTransition> {
        let at = until
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos().min(u64::MAX as u128) as u64)
            .unwrap_or(0);
        self.manual(State::Open, OpenWait::Until(at))
    }
    /// `transitionToHalfOpenState()`: fresh trial permissions and window.
    ///
    /// # Errors
    /// [`IllegalStateTransition`] from CLOSED and METRICS_ONLY.
    pub fn transition_to_half_open_state(&self) -> Result<(), IllegalStateTransition> {
        self.manual(State::HalfOpen, OpenWait::NextAttempt)
    }
    /// `transitionToForcedOpenState()`: reject every call until a manual transition.
    ///
    /// # Errors
    /// Never in practice.
    pub fn transition_to_forced_open_state(&self) -> Result<(), IllegalStateTransition> {
        self.manual(State::ForcedOpen, OpenWait::NextAttempt)
    }
    /// `transitionToDisabledState()`: admit every call, record nothing.
    ///
    /// # Errors
    /// Never in practice.
    pub fn transition_to_disabled_state(&self) -> Result<(), IllegalStateTransition> {
        self.manual(State::Disabled, OpenWait::NextAttempt)
    }
    /// `transitionToMetricsOnlyState()`: admit every call, record and report, never trip.
    ///
    /// # Errors
    /// Never in practice.
    pub fn transition_to_metrics_only_state(&self) -> Result<(), IllegalStateTransition> {
        self.manual(State::MetricsOnly, OpenWait::NextAttempt)
    }
    /// Moves to `state` with the matching `transition_to_*_state` method.
    ///
    /// # Errors
    /// [`IllegalStateTransition`] for the moves Resilience4j forbids.
    pub fn transition_to(&self, state: State) -> Result<(), IllegalStateTransition> {
        self.manual(state, OpenWait::NextAttempt)
    }

    /// `reset()`: a fresh CLOSED state from any state, pending timers cancelled. Publishes
    /// `STATE_TRANSITION X->CLOSED` (unless already CLOSED), then `RESET`.
    pub fn reset(&self) {
        self.with_locked_machine(self.lock(), Origin::Manual, |m, now, sink| {
            m.reset(now, sink)
        });
    }

    /// Attaches the store that shares this breaker's state with other processes (see
    /// [`SharedState`]; `breaker_redis` provides one). A breaker has at most one, for life.
    ///
    /// # Errors
    /// The store given, when one is attached already.
    pub fn attach_shared_state(
        &self,
        store: Arc<dyn SharedState>,
    ) -> Result<(), Arc<dyn SharedState>> {
        self.inner.shared.set(store)
    }

    /// Whether a store shares this breaker's state ([`attach_shared_state`](Self::attach_shared_state)).
    pub fn has_shared_state(&self) -> bool {
        self.inner.shared.get().is_some()
    }

    /// Moves the breaker to the state `view` another process decided, without telling the
    /// attached store (it is the store that calls this). Publishes the transitions' events
    /// as any transition does. FORCED_OPEN, DISABLED and METRICS_ONLY, set by hand in this
    /// process, are left as they are; so is a state that already matches (an OPEN breaker
    /// whose deadline differs takes the new one). Returns whether the state changed.
    pub fn apply_shared_state(&self, view: SharedView) -> bool {
        self.with_locked_machine(self.lock(), Origin::Store, |m, now, sink| {
            m.fire_due_timers(now, sink);
            let before = (m.state(), m.generation());
            match (view, m.state()) {
                (_, State::ForcedOpen | State::Disabled | State::MetricsOnly) => {}
                (SharedView::Closed, State::Open | State::HalfOpen) => {
                    let _ = m.transition(State::Closed, OpenWait::NextAttempt, now, sink);
                }
                (SharedView::Open { until }, State::Closed | State::HalfOpen) => {
                    let _ = m.transition(State::Open, OpenWait::Until(until), now, sink);
                }
                (SharedView::Open { until }, State::Open) if m.open_deadline() != until => {
                    let _ = m.transition(State::Open, OpenWait::Until(until), now, sink);
                }
                (SharedView::HalfOpen, State::Closed) => {
                    let _ = m.transition(State::Open, OpenWait::Until(now), now, sink);
                    let _ = m.transition(State::HalfOpen, OpenWait::NextAttempt, now, sink);
                }
                (SharedView::HalfOpen, State::Open) => {
                    let _ = m.transition(State::HalfOpen, OpenWait::NextAttempt, now, sink);
                }
                _ => {}
            }
            before != (m.state(), m.generation())
        })
    }

    /// The OPEN deadline (epoch ns by the breaker's clock) when the breaker is OPEN.
    pub fn open_until_nanos(&self) -> Option<u64> {
        let state = State::from_u8((self.inner.word.load(Ordering::Acquire) & 7) as u8);
        (state == State::Open).then(|| self.inner.open_deadline.load(Ordering::Relaxed))
    }

    /// A handle that does not keep the breaker alive.
    pub fn downgrade_weak(&self) -> WeakCircuitBreaker {
        WeakCircuitBreaker(Arc::downgrade(&self.inner))
    }

    /// Applies a new config to this breaker in place, keeping its state (see the crate docs,
    /// "Replacing a config"). Every handle sees it at once. The clock stays the one the
    /// breaker was created with.
    pub fn replace_config(&self, config: CircuitBreakerConfig) {
        let config = Arc::new(config);
        self.with_machine(|m, now, _| {
            m.reconfigure(config.clone(), now);
        });
        self.inner
            .plain_errors
            .store(plain_errors(&config), Ordering::Relaxed);
        self.inner
            .has_result_predicate
            .store(config.has_record_result(), Ordering::Relaxed);
        self.inner.config.store(config);
    }

    /// Calls `f` with every event this breaker publishes, one event at a time, in the order
    /// the breaker produced them, never while the breaker is locked. The operation that
    /// produced an event returns once it is delivered: usually on its own thread, or by
    /// another thread that was delivering this breaker's earlier events. `f` may call back into
    /// the breaker (the events that causes follow the one being delivered). A panicking
    /// subscriber is logged (`tracing`, WARN) and does not affect the call or other
    /// subscribers.
    pub fn subscribe(
        &self,
        f: impl Fn(&CircuitBreakerEvent) + Send + Sync + 'static,
    ) -> SubscriptionId {
        let id = self.inner.subscribers.subscribe(Arc::new(f));
        // Closes the lock-free path, which builds no events.
        self.with_machine(|_, _, _| ());
        id
    }

    /// Removes a subscription; `false` if it was not there.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        let removed = self.inner.subscribers.unsubscribe(id);
        // Reopens the lock-free path if nobody is left.
        self.with_machine(|_, _, _| ());
        removed
    }

    /// Keeps the last `capacity` events (>= 1) in a buffer (Resilience4j's
    /// `eventConsumerBufferSize`, default [`DEFAULT_EVENT_CONSUMER_BUFFER_SIZE`](crate::DEFAULT_EVENT_CONSUMER_BUFFER_SIZE)).
    pub fn attach_event_buffer(&self, capacity: usize) -> EventBuffer {
        let buffer = EventBuffer::new(capacity);
        let b = buffer.clone();
        self.subscribe(move |e| b.push(e));
        buffer
    }

    #[allow(unused_variables)]
    pub(super) fn schedule_timer(&self, at: u64) {
        #[cfg(feature = "tokio")]
        crate::timer::schedule(self, at);
    }
}
