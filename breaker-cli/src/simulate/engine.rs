//! The discrete-event simulation: client calls go through the real
//! [`CircuitBreaker`] on a [`ManualClock`]; the clock jumps from one event (an arrival or a
//! completion) to the next, so a day of traffic takes a fraction of a second.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU8, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};

use breaker_core::{CircuitBreaker, EventKind, ManualClock, Permit, State, SubscriptionId};

use super::scenario::Call;

/// Virtual time zero: a whole epoch second (2023-11-14T22:13:20Z), so time-based window
/// buckets line up with the seconds of the run.
pub const EPOCH_NS: u64 = 1_700_000_000_000_000_000;

/// A state transition, at nanoseconds from the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// When, nanoseconds from the start of the run.
    pub at_ns: u64,
    /// State left.
    pub from: State,
    /// State entered.
    pub to: State,
}

/// A call admitted by the breaker, waiting for the dependency's answer.
struct InFlight<'a> {
    done_ns: u64,
    seq: u64,
    fails: bool,
    permit: Permit<'a>,
}

impl PartialEq for InFlight<'_> {
    fn eq(&self, other: &Self) -> bool {
        (self.done_ns, self.seq) == (other.done_ns, other.seq)
    }
}
impl Eq for InFlight<'_> {}
impl PartialOrd for InFlight<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for InFlight<'_> {
    /// Reversed: the max-heap pops the earliest completion first (then the earliest call).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.done_ns, other.seq).cmp(&(self.done_ns, self.seq))
    }
}

/// Records the breaker's state transitions with their virtual times.
///
/// Subscribing makes the breaker publish an event for every call, which costs about a
/// fifth of a simulated call; so while the breaker is CLOSED nobody is subscribed and its
/// state is read after every operation instead (one atomic load). Leaving CLOSED is only
/// ever caused by an operation (an outcome recorded, or a manual transition), at the
/// clock's current reading, so that reading is its exact time. In every other state a
/// subscription records the transitions, timer-driven ones included, with the times the
/// breaker gives them; it is dropped when the breaker is CLOSED again.
pub struct TransitionLog<'a> {
    cb: &'a CircuitBreaker,
    log: Arc<Mutex<Vec<Transition>>>,
    /// The state after the last logged transition, kept by the subscriber.
    current: Arc<AtomicU8>,
    subscription: Option<SubscriptionId>,
}

impl<'a> TransitionLog<'a> {
    /// Starts logging `cb`'s transitions.
    pub fn new(cb: &'a CircuitBreaker) -> Self {
        let state = cb.state();
        let mut log = TransitionLog {
            cb,
            log: Arc::new(Mutex::new(Vec::new())),
            current: Arc::new(AtomicU8::new(state as u8)),
            subscription: None,
        };
        if state != State::Closed {
            log.subscribe();
        }
        log
    }

    fn subscribe(&mut self) {
        let sink = self.log.clone();
        let current = self.current.clone();
        self.subscription = Some(self.cb.subscribe(move |e| {
            if let EventKind::StateTransition { from, to } = e.kind {
                let at_ns = e.creation_time_nanos.saturating_sub(EPOCH_NS);
                current.store(to as u8, AtomicOrdering::Relaxed);
                if let Ok(mut v) = sink.lock() {
                    v.push(Transition { at_ns, from, to });
                }
            }
        }));
    }

    /// Call after every operation on the breaker; `now_ns` is the clock's reading, from
    /// the start of the run.
    #[inline]
    pub fn after_operation(&mut self, now_ns: u64) {
        match self.subscription {
            None => {
                let state = self.cb.state();
                if state != State::Closed {
                    if let Ok(mut v) = self.log.lock() {
                        v.push(Transition {
                            at_ns: now_ns,
                            from: State::Closed,
                            to: state,
                        });
                    }
                    self.current.store(state as u8, AtomicOrdering::Relaxed);
                    self.subscribe();
                }
            }
            Some(id) => {
                if self.current.load(AtomicOrdering::Relaxed) == State::Closed as u8 {
                    self.cb.unsubscribe(id);
                    self.subscription = None;
                }
            }
        }
    }

    /// The transitions logged, in time order.
    pub fn transitions(&self) -> Vec<Transition> {
        self.log.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

/// Runs `calls` (in arrival order) through `cb`, whose config reads `clock`. For every call,
/// at its arrival, `on_call(call, admitted)` tells whether the breaker let it reach the
/// dependency; its outcome (success or recorded error) is recorded on the permit when the
/// dependency answers, `latency_ns` later. Completions due at the same instant as an
/// arrival are recorded first. Calls still in flight when the arrivals end are recorded up
/// to `end_ns`; later ones are dropped unrecorded.
pub fn run(
    cb: &CircuitBreaker,
    log: &mut TransitionLog<'_>,
    clock: &ManualClock,
    calls: impl Iterator<Item = Call>,
    end_ns: u64,
    mut on_call: impl FnMut(&Call, bool),
) {
    let mut in_flight: BinaryHeap<InFlight<'_>> = BinaryHeap::new();
    let complete_until =
        |t_ns: u64, in_flight: &mut BinaryHeap<InFlight<'_>>, log: &mut TransitionLog<'_>| {
            while in_flight.peek().is_some_and(|c| c.done_ns <= t_ns) {
                let c = in_flight.pop().expect("peeked");
                clock.set_epoch_nanos(EPOCH_NS + c.done_ns);
                if c.fails {
                    c.permit.on_error();
                } else {
                    c.permit.on_success();
                }
                log.after_operation(c.done_ns);
            }
        };
    for (seq, call) in calls.enumerate() {
        complete_until(call.at_ns, &mut in_flight, log);
        clock.set_epoch_nanos(EPOCH_NS + call.at_ns);
        let admitted = cb.try_acquire_permission();
        log.after_operation(call.at_ns);
        match admitted {
            Ok(permit) => {
                on_call(&call, true);
                in_flight.push(InFlight {
                    done_ns: call.at_ns + call.latency_ns,
                    seq: seq as u64,
                    fails: call.fails,
                    permit,
                });
            }
            Err(_) => on_call(&call, false),
        }
    }
    complete_until(end_ns, &mut in_flight, log);
    clock.set_epoch_nanos(EPOCH_NS + end_ns);
    cb.poll_timers();
    log.after_operation(end_ns);
}

#[cfg(test)]
mod tests {
    use super::*;
    use breaker_core::CircuitBreakerConfig;
    use std::time::Duration;

    fn call(at_ms: u64, latency_ms: u64, fails: bool) -> Call {
        Call {
            at_ns: at_ms * 1_000_000,
            latency_ns: latency_ms * 1_000_000,
            fails,
            in_outage: false,
        }
    }

    #[test]
    fn outcomes_are_recorded_when_the_dependency_answers() {
        let clock = ManualClock::at_epoch_millis(EPOCH_NS / 1_000_000);
        let config = CircuitBreakerConfig::builder()
            .sliding_window_size(4)
            .minimum_number_of_calls(4)
            .wait_duration_in_open_state(Duration::from_secs(5))
            .permitted_number_of_calls_in_half_open_state(1)
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap();
        let cb = CircuitBreaker::new("t", config);
        let mut log = TransitionLog::new(&cb);
        // Four failing calls at 0..3 ms answer at 1000..1003 ms. A call at 500 ms is
        // admitted (no outcome is in yet) and succeeds at 510 ms, so the 3rd failure, at
        // 1002 ms, makes 4 buffered calls with 3 failures (75 % >= 50 %): OPEN. The call at
        // 2000 ms is rejected; the one at 6004 ms, strictly after the 5 s wait, is admitted
        // in HALF_OPEN and its success 20 ms later closes the breaker (1 permitted call).
        let calls = vec![
            call(0, 1000, true),
            call(1, 1000, true),
            call(2, 1000, true),
            call(3, 1000, true),
            call(500, 10, false),
            call(2000, 10, false),
            call(6004, 20, false),
        ];
        let mut admitted = Vec::new();
        run(
            &cb,
            &mut log,
            &clock,
            calls.into_iter(),
            10_000_000_000,
            |c, ok| admitted.push((c.at_ns / 1_000_000, ok)),
        );
        assert_eq!(
            admitted,
            vec![
                (0, true),
                (1, true),
                (2, true),
                (3, true),
                (500, true),
                (2000, false),
                (6004, true)
            ]
        );
        let log = log.transitions();
        let ms = |t: &Transition| (t.at_ns / 1_000_000, t.from, t.to);
        assert_eq!(
            log.iter().map(ms).collect::<Vec<_>>(),
            vec![
                (1002, State::Closed, State::Open),
                (6004, State::Open, State::HalfOpen),
                (6024, State::HalfOpen, State::Closed),
            ]
        );
    }
}
