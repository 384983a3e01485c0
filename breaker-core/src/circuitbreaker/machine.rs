//! The state machine itself, free of locks and clocks: every operation takes the current
//! time and collects the events it publishes. [`crate::CircuitBreaker`] wraps it in a mutex.
//!
//! It follows Resilience4j's `CircuitBreakerStateMachine` state object by state object:
//! every transition builds a new state (a new generation) with its own metrics, except that
//! OPEN carries the metrics of the state it was entered from.

use std::sync::Arc;
use std::time::Duration;

use crate::classify::Outcome;
use crate::config::{CircuitBreakerConfig, SlidingWindowType};
use crate::events::{EventKind, EventSink};
use crate::fast_window::{self, FastWindow, Sealed};
use crate::metrics::Metrics;
use crate::state::State;
use crate::throwable::Throwable;
use crate::window::{CountWindow, TimeWindow, Totals, Window};

const NANOS_PER_MILLI: u64 = 1_000_000;

/// The metrics object of one state: its window, effective minimum and rejection count.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct StateMetrics {
    not_permitted: u64,
    minimum_number_of_calls: u32,
    /// The integer form of the thresholds for a full count window.
    need: Need,
    window: Window,
}

/// For `calls` recorded calls and the thresholds `failure_threshold` /
/// `slow_threshold`: the smallest failed (slow) count whose `f32` rate, computed exactly as
/// Resilience4j does, reaches the threshold (`calls + 1` when none does). A full count window
/// then needs two integer compares instead of two float divisions per call.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Need {
    calls: u32,
    failure_threshold: f32,
    slow_threshold: f32,
    failed: u32,
    slow: u32,
}

impl Need {
    /// Matches no window (`calls` 0 is never looked up).
    const NONE: Need = Need {
        calls: 0,
        failure_threshold: f32::NAN,
        slow_threshold: f32::NAN,
        failed: 0,
        slow: 0,
    };

    fn compute(calls: u32, failure_threshold: f32, slow_threshold: f32) -> Need {
        Need {
            calls,
            failure_threshold,
            slow_threshold,
            failed: smallest_reaching(calls, failure_threshold),
            slow: smallest_reaching(calls, slow_threshold),
        }
    }

    #[inline]
    fn is_for(&self, calls: u32, c: &CircuitBreakerConfig) -> bool {
        self.calls == calls
            && self.failure_threshold == c.failure_rate_threshold
            && self.slow_threshold == c.slow_call_rate_threshold
    }
}

/// Resilience4j's rate of `count` among `calls` (`calls` > 0), in `f32`.
#[inline]
fn rate(count: u32, calls: u32) -> f32 {
    count as f32 * 100.0f32 / calls as f32
}

/// The smallest `k` in `0..=calls` with `rate(k, calls) >= threshold`, or `calls + 1`.
/// `rate(k, calls)` never decreases as `k` grows (each float step rounds monotonically), so
/// a binary search finds it.
fn smallest_reaching(calls: u32, threshold: f32) -> u32 {
    let (mut lo, mut hi) = (0u32, calls + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if rate(mid, calls) >= threshold {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The threshold check after a recorded call (Resilience4j's `Result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    BelowMinimumCalls,
    Below,
    FailureRateAbove,
    SlowCallRateAbove,
    BothAbove,
}

impl Verdict {
    fn failure_exceeded(self) -> bool {
        matches!(self, Verdict::FailureRateAbove | Verdict::BothAbove)
    }
    fn slow_exceeded(self) -> bool {
        matches!(self, Verdict::SlowCallRateAbove | Verdict::BothAbove)
    }
}

impl StateMetrics {
    /// `forClosed` / `forMetricsOnly`: the configured window. A count window lives on the
    /// ring `fast` reads (when it is not too large for the lock-free path).
    fn for_closed(c: &CircuitBreakerConfig, now: u64, fast: &FastWindow) -> Self {
        let (window, min) = match c.sliding_window_type {
            SlidingWindowType::CountBased => {
                let size = c.sliding_window_size.max(1) as usize;
                let window = if size <= fast_window::MAX_SIZE {
                    CountWindow::on_ring(fast.ring(size), size)
                } else {
                    CountWindow::new(c.sliding_window_size)
                };
                (
                    Window::Count(window),
                    c.minimum_number_of_calls.min(c.sliding_window_size),
                )
            }
            SlidingWindowType::TimeBased => (
                Window::Time(TimeWindow::new(c.sliding_window_size, now)),
                c.minimum_number_of_calls,
            ),
        };
        StateMetrics {
            window,
            minimum_number_of_calls: min,
            not_permitted: 0,
            need: Need::NONE,
        }
    }

    /// `forHalfOpen`: a count window of `permittedNumberOfCallsInHalfOpenState` calls.
    fn for_half_open(c: &CircuitBreakerConfig) -> Self {
        let permitted = c.permitted_number_of_calls_in_half_open_state;
        StateMetrics {
            window: Window::Count(CountWindow::new(permitted)),
            minimum_number_of_calls: c.minimum_number_of_calls.min(permitted),
            not_permitted: 0,
            need: Need::NONE,
        }
    }

    /// `forDisabled` / `forForcedOpen`: size 0, never written.
    fn empty() -> Self {
        StateMetrics {
            window: Window::Empty,
            minimum_number_of_calls: 0,
            not_permitted: 0,
            need: Need::NONE,
        }
    }

    fn rates(&self, t: Totals) -> (f32, f32) {
        if t.calls == 0 || t.calls < self.minimum_number_of_calls {
            (-1.0, -1.0)
        } else {
            (rate(t.failed, t.calls), rate(t.slow, t.calls))
        }
    }

    fn record(
        &mut self,
        c: &CircuitBreakerConfig,
        now: u64,
        failed: bool,
        slow: bool,
    ) -> (Verdict, f32, f32) {
        self.window.record(now, failed, slow);
        self.evaluate(c, now)
    }

    /// The verdict on the window as of `now` (a time window slides first).
    fn evaluate(&mut self, c: &CircuitBreakerConfig, now: u64) -> (Verdict, f32, f32) {
        let t = self.window.totals(now);
        // A full count window: the integer thresholds decide "below" exactly; the rates are
        // computed only when one is reached (the callers use them only then).
        if t.calls != 0 && t.calls >= self.minimum_number_of_calls {
            if !self.need.is_for(t.calls, c) && self.window.is_full_count_window(t.calls) {
                self.need = Need::compute(
                    t.calls,
                    c.failure_rate_threshold,
                    c.slow_call_rate_threshold,
                );
            }
            if self.need.is_for(t.calls, c)
                && t.failed < self.need.failed
                && t.slow < self.need.slow
            {
                return (Verdict::Below, 0.0, 0.0);
            }
        }
        let (fr, sr) = self.rates(t);
        let verdict = if fr == -1.0 || sr == -1.0 {
            Verdict::BelowMinimumCalls
        } else {
            let f = fr >= c.failure_rate_threshold;
            let s = sr >= c.slow_call_rate_threshold;
            match (f, s) {
                (true, true) => Verdict::BothAbove,
                (true, false) => Verdict::FailureRateAbove,
                (false, true) => Verdict::SlowCallRateAbove,
                (false, false) => Verdict::Below,
            }
        };
        (verdict, fr, sr)
    }

    fn snapshot(&mut self, state: State, now: u64) -> Metrics {
        #[cfg(debug_assertions)]
        if let Window::Count(w) = &self.window {
            debug_assert_eq!(
                w.recount(),
                w.totals(),
                "window totals drifted from its ring"
            );
        }
        let t = self.window.totals(now);
        let (fr, sr) = self.rates(t);
        Metrics {
            state,
            failure_rate: fr,
            slow_call_rate: sr,
            number_of_buffered_calls: t.calls,
            number_of_failed_calls: t.failed,
            number_of_successful_calls: t.calls - t.failed,
            number_of_slow_calls: t.slow,
            number_of_slow_successful_calls: t.slow - t.slow_failed,
            number_of_slow_failed_calls: t.slow_failed,
            number_of_not_permitted_calls: self.not_permitted,
        }
    }
}

/// How an OPEN state's deadline is chosen.
#[derive(Debug, Clone, Copy)]
pub(crate) enum OpenWait {
    /// `transitionToOpenState()`: attempts + 1, wait from the interval function.
    NextAttempt,
    /// `transitionToOpenStateFor(d)`: attempts unchanged, wait `d` (whole ms).
    For(Duration),
    /// `transitionToOpenStateUntil(t)`: attempts unchanged, deadline `t` (epoch ns).
    Until(u64),
}

/// Why a permission was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub state: State,
    /// When the refusing state may admit a call (epoch ns): the OPEN deadline, the
    /// HALF_OPEN timer; 0 when unknown. See [`crate::CallNotPermitted::retry_after`].
    pub until: u64,
}

/// The mutable heart of a breaker.
///
/// `repr(C)`, cold fields first: what a recorded outcome touches (state, slow-call
/// threshold, window, integer thresholds) sits at the end, next to the lock word that
/// follows the machine in the breaker's lock, so an outcome writes as few cache lines
/// as possible (they move between cores when threads share a breaker).
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Machine {
    config: Arc<CircuitBreakerConfig>,
    /// The lock-free path (CLOSED's window, HALF_OPEN's trials) this machine opens and
    /// closes (see [`crate::fast_window`]).
    fast: Arc<FastWindow>,
    generation: u64,
    attempts: u32,
    /// OPEN: permission is granted strictly after this instant (epoch ns).
    open_deadline: u64,
    /// OPEN with automatic transition: the OPEN -> HALF_OPEN timer.
    auto_half_open_at: Option<u64>,
    /// HALF_OPEN: trial permissions left. While the lock-free path is open on HALF_OPEN it
    /// holds them, and [`seal_fast`](Self::seal_fast) takes them back.
    permits: i64,
    /// HALF_OPEN with `maxWaitDurationInHalfOpenState`: the timer's deadline.
    half_open_timer_at: Option<u64>,
    /// HALF_OPEN: the trial successes counted in the lock-free path's stripes that the trial
    /// window holds (see [`seal_fast`](Self::seal_fast)).
    stripes_adopted: u32,
    /// HALF_OPEN: when the latest outcome the trial window holds ended (epoch ns), the time
    /// a verdict completed by adopted stripe successes is made at.
    last_trial_at: u64,
    /// The last HALF_OPEN state left: its generation and the stripe successes adopted from
    /// it, so that a success counted in a stripe after it ended (checked before a seal,
    /// stored after it) still reaches the state that followed, as any late outcome does.
    retired_trials: Option<(u64, u32)>,
    /// Stripe successes of the retired HALF_OPEN state found since, to record in the
    /// current state (see [`settle_pending`](Self::settle_pending)).
    late_trials: u32,
    /// METRICS_ONLY: rate-exceeded events already published by this state object.
    failure_rate_published: bool,
    slow_call_rate_published: bool,
    /// A timer armed by the last operation, for an external scheduler to wake up at.
    armed_timer: Option<u64>,
    /// Nobody subscribed: skip building the per-call events (SUCCESS, ERROR, ...) that only
    /// subscribers see. Transitions and resets are still pushed.
    quiet: bool,
    state: State,
    slow_threshold_nanos: u64,
    metrics: StateMetrics,
}

impl Machine {
    /// The state object built by the constructor for `initialState` (no event).
    pub fn new(config: Arc<CircuitBreakerConfig>, now: u64) -> Self {
        let fast = Arc::new(FastWindow::default());
        let mut m = Machine {
            slow_threshold_nanos: slow_nanos(&config),
            metrics: StateMetrics::for_closed(&config, now, &fast),
            fast,
            config,
            state: State::Closed,
            generation: 0,
            attempts: 0,
            open_deadline: 0,
            auto_half_open_at: None,
            permits: 0,
            half_open_timer_at: None,
            stripes_adopted: 0,
            last_trial_at: 0,
            retired_trials: None,
            late_trials: 0,
            failure_rate_published: false,
            slow_call_rate_published: false,
            armed_timer: None,
            quiet: false,
        };
        match m.config.initial_state {
            State::Closed => {}
            State::Open => {
                let fresh = StateMetrics::for_closed(&m.config, now, &m.fast);
                m.enter_open(now, 0, OpenWait::NextAttempt, fresh);
            }
            State::HalfOpen => m.enter_half_open(now, 1),
            State::ForcedOpen => m.enter_simple(State::ForcedOpen, now, 1),
            s => m.enter_simple(s, now, 0),
        }
        m.generation = 0;
        m
    }

    pub fn state(&self) -> State {
        self.state
    }
    pub fn generation(&self) -> u64 {
        self.generation
    }
    /// OPEN: permission is granted strictly after this instant (epoch ns).
    pub fn open_deadline(&self) -> u64 {
        self.open_deadline
    }
    /// OPEN's deadline, 0 in other states.
    pub fn open_deadline_if_open(&self) -> u64 {
        if self.state == State::Open {
            self.open_deadline
        } else {
            0
        }
    }
    /// Adds rejections counted outside the lock to the current state's metrics.
    pub fn add_not_permitted(&mut self, n: u64) {
        self.metrics.not_permitted += n;
    }
    pub fn take_armed_timer(&mut self) -> Option<u64> {
        self.armed_timer.take()
    }
    /// The earliest pending timer deadline (epoch ns), if any.
    pub fn next_timer(&self) -> Option<u64> {
        match self.state {
            State::HalfOpen => self.half_open_timer_at,
            State::Open => self.auto_half_open_at,
            _ => None,
        }
    }

    /// Whether the per-call events are built (someone subscribed), set before every
    /// operation.
    #[inline]
    pub fn set_quiet(&mut self, quiet: bool) {
        self.quiet = quiet;
    }

    #[inline]
    fn publish(&self, sink: &mut EventSink, kind: EventKind) {
        if self.quiet && !kind.event_type().force_publish() {
            return;
        }
        if kind.event_type().force_publish() || self.state.allow_publish() {
            sink.push(kind);
        }
    }

    // ----- timers -----------------------------------------------------------------------

    /// Fires every timer due at `now`, earliest first, each with the clock reading its own
    /// deadline.
    #[inline]
    pub fn fire_due_timers(&mut self, now: u64, sink: &mut EventSink) {
        if matches!(self.state, State::HalfOpen | State::Open) {
            self.fire_due_timers_slow(now, sink);
        }
    }

    fn fire_due_timers_slow(&mut self, now: u64, sink: &mut EventSink) {
        loop {
            match self.state {
                State::HalfOpen => match self.half_open_timer_at {
                    Some(at) if at <= now => {
                        let to = self.config.transition_to_state_after_wait_duration;
                        let _ = self.transition(to, OpenWait::NextAttempt, at, sink);
                    }
                    _ => return,
                },
                State::Open => match self.auto_half_open_at {
                    Some(at) if at <= now => {
                        let _ = self.transition(State::HalfOpen, OpenWait::NextAttempt, at, sink);
                    }
                    _ => return,
                },
                _ => return,
            }
        }
    }

    /// What a locked operation does first, after [`seal_fast`](Self::seal_fast): records the
    /// late stripe successes of the retired HALF_OPEN state in the current state (as
    /// [`on_outcome`](Self::on_outcome) records any outcome of an earlier state), then makes a
    /// HALF_OPEN verdict that adopted stripe successes made due.
    pub fn settle_pending(&mut self, now: u64, sink: &mut EventSink) {
        if self.late_trials > 0 {
            let generation = self.retired_trials.map_or(0, |(g, _)| g);
            for _ in 0..std::mem::take(&mut self.late_trials) {
                self.on_outcome(
                    Outcome::Success,
                    Duration::ZERO,
                    None,
                    generation,
                    now,
                    sink,
                );
            }
        }
        if self.trial_verdict_due() {
            self.settle_trials(now, sink);
        }
    }

    /// Whether [`settle_pending`](Self::settle_pending) has anything to do: the quiet paths
    /// leave such an operation to the full one.
    fn settle_is_pending(&self) -> bool {
        self.late_trials > 0 || self.trial_verdict_due()
    }

    /// HALF_OPEN: the trial window reached its minimum number of calls without a verdict:
    /// through adopted stripe successes (an outcome recorded here decides at once), or a
    /// reconfiguration that lowered the minimum.
    fn trial_verdict_due(&self) -> bool {
        self.state == State::HalfOpen
            && matches!(&self.metrics.window,
                Window::Count(w) if w.totals().calls >= self.metrics.minimum_number_of_calls)
    }

    /// The verdict [`trial_verdict_due`](Self::trial_verdict_due) found due, made as of when
    /// the window's last outcome ended (at most `now`), as Resilience4j makes it on that
    /// outcome: CLOSED below both thresholds, OPEN otherwise.
    fn settle_trials(&mut self, now: u64, sink: &mut EventSink) {
        let at = self.last_trial_at.min(now);
        let (verdict, _, _) = self.metrics.evaluate(&self.config, at);
        debug_assert!(!matches!(verdict, Verdict::BelowMinimumCalls));
        let to = match verdict {
            Verdict::BelowMinimumCalls | Verdict::Below => State::Closed,
            _ => State::Open,
        };
        let _ = self.transition(to, OpenWait::NextAttempt, at, sink);
    }
}

fn slow_nanos(c: &CircuitBreakerConfig) -> u64 {
    c.slow_call_duration_threshold
        .as_nanos()
        .min(u64::MAX as u128) as u64
}

mod calls;
mod transitions;

#[cfg(test)]
mod need_tests;

#[cfg(test)]
mod quiet_path_tests;
