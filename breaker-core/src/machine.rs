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

    fn try_acquire_half_open(&mut self, sink: &mut EventSink) -> Result<u64, Refusal> {
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
    fn counts_in_half_open(&self, generation: u64) -> bool {
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
    fn adopt_trial_stripes(&mut self) {
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
    fn publish_half_open(&self) {
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
    fn closed_verdict(
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

    fn new_state_object(&mut self, state: State, attempts: u32) {
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

    fn enter_simple(&mut self, state: State, now: u64, attempts: u32) {
        self.new_state_object(state, attempts);
        self.metrics = match state {
            State::Closed | State::MetricsOnly => {
                StateMetrics::for_closed(&self.config, now, &self.fast)
            }
            _ => StateMetrics::empty(),
        };
    }

    fn enter_open(
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

    fn enter_half_open(&mut self, now: u64, attempts: u32) {
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

fn slow_nanos(c: &CircuitBreakerConfig) -> u64 {
    c.slow_call_duration_threshold
        .as_nanos()
        .min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod need_tests {
    use super::*;

    /// The integer thresholds agree with the float comparison for every count and a spread
    /// of thresholds, including ones that sit exactly on a rate.
    #[test]
    fn smallest_reaching_matches_the_float_rule() {
        let thresholds = [
            0.5f32, 1.0, 10.0, 12.5, 25.0, 33.333332, 33.333336, 49.99, 50.0, 50.01, 66.66667,
            70.0, 99.0, 99.99, 100.0,
        ];
        for calls in 1..=300u32 {
            for &thr in &thresholds {
                let need = smallest_reaching(calls, thr);
                for k in 0..=calls {
                    assert_eq!(
                        k >= need,
                        rate(k, calls) >= thr,
                        "calls {calls}, threshold {thr}, k {k}"
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod quiet_path_tests {
    use super::*;

    /// `try_record_quiet` (falling back to `on_outcome`) leaves the machine exactly
    /// where `on_outcome` alone does: same state, metrics and events, step by step, over
    /// random outcomes, durations, window sizes and thresholds, through trips and recoveries.
    #[test]
    fn quiet_closed_path_matches_on_outcome() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut fast_taken = 0u32;
        for _ in 0..300 {
            let size = rng.i64(1..=40);
            let config = Arc::new(
                CircuitBreakerConfig::builder()
                    .sliding_window_size(size)
                    .minimum_number_of_calls(rng.i64(1..=50))
                    .failure_rate_threshold(rng.f32() * 99.0 + 1.0)
                    .slow_call_rate_threshold(rng.f32() * 99.0 + 1.0)
                    .slow_call_duration_threshold(Duration::from_millis(10))
                    .permitted_number_of_calls_in_half_open_state(rng.i64(1..=5))
                    .wait_duration_in_open_state(Duration::from_millis(5))
                    .build()
                    .unwrap(),
            );
            let mut now = 1_700_000_000_000_000_000u64;
            let mut a = Machine::new(config.clone(), now);
            let mut b = Machine::new(config.clone(), now);
            a.set_quiet(true);
            b.set_quiet(true);
            for step in 0..400 {
                now += rng.u64(0..3_000_000);
                let (mut sa, mut sb) = (EventSink::default(), EventSink::default());
                let ra = a.try_acquire(now, &mut sa);
                let rb = b.try_acquire(now, &mut sb);
                assert_eq!(ra, rb);
                if let Ok(ga) = ra {
                    let outcome = match rng.u8(0..10) {
                        0..=2 => Outcome::Failure,
                        3 => Outcome::Ignored,
                        _ => Outcome::Success,
                    };
                    let elapsed = Duration::from_millis(rng.u64(0..15));
                    if outcome != Outcome::Ignored
                        && a.try_record_quiet(outcome == Outcome::Failure, elapsed, ga, now)
                    {
                        fast_taken += 1;
                    } else {
                        a.on_outcome(outcome, elapsed, None, ga, now, &mut sa);
                    }
                    b.on_outcome(outcome, elapsed, None, ga, now, &mut sb);
                }
                assert_eq!(
                    sa.iter().collect::<Vec<_>>(),
                    sb.iter().collect::<Vec<_>>(),
                    "step {step}"
                );
                assert_eq!(a.state(), b.state(), "step {step}");
                let (mut s1, mut s2) = (EventSink::default(), EventSink::default());
                let (ma, mb) = (a.metrics(now, &mut s1), b.metrics(now, &mut s2));
                assert_eq!(format!("{ma:?}"), format!("{mb:?}"), "step {step}");
                if rng.u8(0..50) == 0 {
                    // A threshold change keeps the window: the fast path must not use the
                    // old integer thresholds.
                    let c = Arc::new(
                        CircuitBreakerConfig::builder()
                            .sliding_window_size(size)
                            .failure_rate_threshold(rng.f32() * 99.0 + 1.0)
                            .slow_call_duration_threshold(Duration::from_millis(10))
                            .wait_duration_in_open_state(Duration::from_millis(5))
                            .build()
                            .unwrap(),
                    );
                    a.reconfigure(c.clone(), now);
                    b.reconfigure(c, now);
                }
            }
        }
        assert!(fast_taken > 10_000, "fast path taken {fast_taken} times");
    }
}
