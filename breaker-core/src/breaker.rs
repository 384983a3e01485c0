//! [`CircuitBreaker`]: a cheap, clonable handle to one named breaker.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;
use parking_lot::{Mutex, MutexGuard};

use crate::classify::Outcome;
use crate::clock::{Clock, SystemClock};
use crate::config::CircuitBreakerConfig;
use crate::error::{CallNotPermitted, IllegalStateTransition};
use crate::events::{
    CircuitBreakerEvent, Delivery, EventBuffer, EventKind, EventSink, Subscribers, SubscriptionId,
};
use crate::fast_window::{FastWindow, Recorded};
use crate::machine::{Machine, OpenWait};
use crate::metrics::Metrics;
use crate::names::Name;
use crate::permit::Permit;
use crate::shared::{
    SharedSlot, SharedState, SharedView, TrialEnd, TrialGrant, WeakCircuitBreaker,
};
use crate::state::State;
use crate::throwable::Throwable;

/// A circuit breaker: Resilience4j's `CircuitBreaker`.
///
/// Cloning is cheap and every clone is the same breaker. Permission checks in CLOSED,
/// DISABLED and METRICS_ONLY take no lock; in CLOSED, with a full COUNT_BASED window and
/// nobody subscribed, an outcome like the one it replaces in the window (the common case) is
/// recorded with one compare-and-swap and no lock; every other operation takes one short
/// lock. Events are delivered after the lock is released.
///
/// ```
/// use breaker_core::{CircuitBreaker, CircuitBreakerConfig, State};
/// let config = CircuitBreakerConfig::builder()
///     .sliding_window_size(4)
///     .minimum_number_of_calls(4)
///     .build()?;
/// let cb = CircuitBreaker::new("inventory", config);
/// for _ in 0..2 {
///     cb.try_acquire_permission()?.on_success();
/// }
/// for _ in 0..2 {
///     cb.try_acquire_permission()?.on_error();
/// }
/// // 2 failures of 4 calls = 50 %, at the default threshold of 50 %: OPEN.
/// assert_eq!(cb.state(), State::Open);
/// assert_eq!(cb.metrics().failure_rate, 50.0);
/// assert!(cb.try_acquire_permission().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct CircuitBreaker {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    /// State in the low 3 bits, generation above: read without the lock.
    word: AtomicU64,
    /// The lock-free CLOSED path (shared with the machine, which opens and closes it).
    fast: Arc<FastWindow>,
    /// OPEN and FORCED_OPEN: a permission requested before this instant (epoch ns) is
    /// rejected without the lock (no due timer, deadline not passed); 0 in other states.
    reject_before: AtomicU64,
    /// OPEN: the deadline, for `retry_after`; 0 otherwise.
    open_deadline: AtomicU64,
    /// Rejections counted without the lock, not yet added to the state's metrics (they are
    /// added under the lock before every other operation).
    fast_rejections: AtomicU64,
    /// The process-wide [`SystemClock`], read without dynamic dispatch; `None` for any other
    /// clock, which is read through `clock`.
    system: Option<SystemClock>,
    name: Arc<str>,
    /// The same name as a rejection carries it (inline when short: no reference count).
    reject_name: Name,
    clock: Arc<dyn Clock>,
    /// No exception settings: every error is a failure.
    plain_errors: AtomicBool,
    has_result_predicate: AtomicBool,
    /// The machine, under `parking_lot`'s mutex: free, it is taken with one compare-and-swap;
    /// held, a waiter spins briefly, then parks until the holder unlocks (see
    /// [`CircuitBreaker::lock`]), so
    /// waiters burn no CPU while a holder that was preempted (or is reading a slow user
    /// clock, or allocating for a reconfiguration) keeps it. Critical sections are a few
    /// dozen nanoseconds and never wait for anything (events are delivered and timers
    /// scheduled after the unlock).
    machine: CacheLine<Mutex<Machine>>,
    config: ArcSwap<CircuitBreakerConfig>,
    subscribers: Subscribers,
    /// Events on their way to the subscribers, in production order.
    delivery: Delivery,
    /// The store sharing this breaker's state with other processes (issue #16), if any.
    shared: SharedSlot,
}

/// Who asked for a machine operation: the hook of an attached store hears about the
/// transitions of the first two, not of the changes it applies itself.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    Calls,
    Manual,
    Store,
}

/// Keeps the machine (its lock word and window totals are written on every outcome) off the
/// cache lines of the fields every permission reads (state word, limits, flags), so a second
/// thread's permission check does not pull the line the lock holder is writing.
#[repr(align(128))]
struct CacheLine<T>(T);

#[inline]
fn pack(state: State, generation: u64) -> u64 {
    (generation << 3) | state as u64
}

impl CircuitBreaker {
    /// A breaker named `name` in `config.initial_state()` (no event is published for it).
    /// Its clock is `config.clock()` for its whole life.
    pub fn new(name: impl Into<Arc<str>>, config: CircuitBreakerConfig) -> Self {
        let config = Arc::new(config);
        let clock = config.clock().clone();
        let system = SystemClock::is_shared(&clock).then(SystemClock::new);
        let now = match &system {
            Some(c) => c.recent_nanos(),
            None => clock.recent_nanos(),
        };
        let machine = Machine::new(config.clone(), now);
        let word = pack(machine.state(), machine.generation());
        let (reject_before, open_deadline) = fast_rejection_limits(&machine, false);
        let name: Arc<str> = name.into();
        let reject_name = Name::new(&name);
        let cb = CircuitBreaker {
            inner: Arc::new(Inner {
                word: AtomicU64::new(word),
                fast: machine.fast_window().clone(),
                reject_before: AtomicU64::new(reject_before),
                open_deadline: AtomicU64::new(open_deadline),
                fast_rejections: AtomicU64::new(0),
                system,
                name,
                reject_name,
                clock,
                plain_errors: AtomicBool::new(plain_errors(&config)),
                has_result_predicate: AtomicBool::new(config.has_record_result()),
                machine: CacheLine(Mutex::new(machine)),
                config: ArcSwap::new(config),
                subscribers: Subscribers::default(),
                delivery: Delivery::default(),
                shared: SharedSlot::new(),
            }),
        };
        let armed = cb.lock().take_armed_timer();
        if let Some(at) = armed {
            cb.schedule_timer(at);
        }
        cb
    }

    /// A breaker with Resilience4j's default config.
    pub fn with_defaults(name: impl Into<Arc<str>>) -> Self {
        Self::new(name, CircuitBreakerConfig::default())
    }

    /// The breaker's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The config in force (replaced atomically by [`replace_config`](Self::replace_config)).
    pub fn config(&self) -> Arc<CircuitBreakerConfig> {
        self.inner.config.load_full()
    }

    /// The breaker's clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    /// Whether two handles are the same breaker.
    pub fn ptr_eq(&self, other: &CircuitBreaker) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Locks the machine: one compare-and-swap when it is free; held, a short spin, then
    /// the thread parks (see `Inner::machine`). A panic inside a critical section unlocks it
    /// on unwinding (the guard's drop), as the poisoning-ignoring std mutex did before.
    #[inline]
    fn lock(&self) -> MutexGuard<'_, Machine> {
        match self.inner.machine.0.try_lock() {
            Some(guard) => guard,
            None => self.lock_contended(),
        }
    }

    /// Another thread holds the machine. A critical section is a few dozen nanoseconds, so
    /// first wait by reading (not writing) the lock word for [`SPINS_BEFORE_PARKING`]
    /// rounds; a holder still there after that was preempted or is slow (a user clock, a
    /// reconfiguration's allocations): park until it unlocks (`parking_lot`'s `lock`, which
    /// spins a little more, then yields a few times, then parks), instead of yielding in a
    /// loop that burns the CPU the holder needs.
    #[cold]
    #[inline(never)]
    fn lock_contended(&self) -> MutexGuard<'_, Machine> {
        let machine = &self.inner.machine.0;
        for _ in 0..SPINS_BEFORE_PARKING {
            std::hint::spin_loop();
            if !machine.is_locked() {
                if let Some(guard) = machine.try_lock() {
                    return guard;
                }
            }
        }
        machine.lock()
    }

    /// Runs one operation on the machine under the lock, then publishes its events.
    ///
    /// The clock is read once the lock is held, so an operation that waited for the lock
    /// never acts at an earlier time than the one before it: an OPEN wait cannot start in
    /// the past (and so end early), and events are stamped in the order they happen.
    #[inline]
    pub(crate) fn with_machine<R>(
        &self,
        f: impl FnOnce(&mut Machine, u64, &mut EventSink) -> R,
    ) -> R {
        self.with_locked_machine(self.lock(), Origin::Calls, f)
    }

    /// [`with_machine`](Self::with_machine) with the lock already taken.
    #[inline]
    fn with_locked_machine<R>(
        &self,
        mut m: MutexGuard<'_, Machine>,
        origin: Origin,
        f: impl FnOnce(&mut Machine, u64, &mut EventSink) -> R,
    ) -> R {
        let mut sink = EventSink::default();
        let now = self.now_nanos();
        let mut moved = None;
        let (r, armed, events) = {
            m.seal_fast();
            let fast = self.inner.fast_rejections.load(Ordering::Relaxed);
            if fast != 0 {
                m.add_not_permitted(self.inner.fast_rejections.swap(0, Ordering::Relaxed));
            }
            let subscribed = self.inner.subscribers.any();
            m.set_quiet(!subscribed);
            // What the lock-free path left pending (late trial successes, a verdict the
            // stripes made due) comes before the operation, whatever it is.
            m.settle_pending(now, &mut sink);
            let r = f(&mut m, now, &mut sink);
            m.publish_fast(!subscribed);
            let word = pack(m.state(), m.generation());
            let (reject_before, open_deadline) = fast_rejection_limits(&m, subscribed);
            let old = self.inner.word.load(Ordering::Relaxed);
            if old != word {
                moved = Some((State::from_u8((old & 7) as u8), m.state()));
            }
            if old != word || self.inner.reject_before.load(Ordering::Relaxed) != reject_before {
                self.inner
                    .reject_before
                    .store(reject_before, Ordering::Relaxed);
                self.inner
                    .open_deadline
                    .store(open_deadline, Ordering::Relaxed);
                self.inner.word.store(word, Ordering::Release);
            }
            let armed = m.take_armed_timer();
            // Queued under the lock: the queue's order is the order of production. The
            // claim (nobody else delivering) delivers after the unlock.
            let events = if subscribed {
                self.inner.delivery.append(&sink, now)
            } else {
                None
            };
            drop(m);
            (r, armed, events)
        };
        if let Some(at) = armed {
            self.schedule_timer(at);
        }
        if let Some(claim) = events {
            claim.deliver(|kind, at| self.dispatch(kind, at));
        }
        if let Some((from, to)) = moved {
            if origin != Origin::Store {
                if let Some(store) = self.inner.shared.get() {
                    store.on_transition(self, from, to, origin == Origin::Manual);
                }
            }
        }
        r
    }

    fn dispatch(&self, kind: EventKind, at: u64) {
        let event = CircuitBreakerEvent {
            circuit_breaker_name: self.inner.name.clone(),
            kind,
            creation_time_nanos: at,
        };
        self.inner.subscribers.publish(&event);
    }

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
    fn try_acquire_not_admitting(&self, word: u64) -> Result<Permit<'_>, CallNotPermitted> {
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
    fn try_acquire_trial(&self) -> (u64, u64) {
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
    fn try_acquire_with_lock(&self) -> Result<Permit<'_>, CallNotPermitted> {
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
    fn try_acquire_locked(
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
    fn granted(&self, granted_at: u64, admitted: u64) -> Result<Permit<'_>, CallNotPermitted> {
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
    fn confirm_trial(
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
    fn end_trial(&self, admitted: u64, end: TrialEnd) {
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
    fn trial_ended(
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
    fn settle_trials(&self) {
        self.with_machine(|_, _, _| {});
    }

    /// [`record`](Self::record) under the lock.
    #[inline(never)]
    fn record_locked(
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
    fn record_full(
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

    /// The breaker's time: the clock's cheap [`recent_nanos`](Clock::recent_nanos) reading,
    /// the only one the breaker takes, so the machine sees one monotonic source.
    #[inline(always)]
    pub(crate) fn now_nanos(&self) -> u64 {
        match &self.inner.system {
            Some(c) => c.recent_nanos(),
            None => self.clock_nanos(),
        }
    }

    /// A reading of a clock other than the shared [`SystemClock`].
    #[inline(never)]
    fn clock_nanos(&self) -> u64 {
        self.inner.clock.recent_nanos()
    }

    #[inline]
    pub(crate) fn errors_are_all_failures(&self) -> bool {
        self.inner.plain_errors.load(Ordering::Relaxed)
    }

    /// Whether anyone subscribed to the events (then an error is described for its event).
    #[inline]
    pub(crate) fn subscribed(&self) -> bool {
        self.inner.subscribers.any()
    }

    #[inline]
    pub(crate) fn has_result_predicate(&self) -> bool {
        self.inner.has_result_predicate.load(Ordering::Relaxed)
    }

    /// The current state (`getState()`). A plain read: an OPEN breaker whose wait has passed
    /// still reports OPEN until a permission is requested. Due timers
    /// (`maxWaitDurationInHalfOpenState`, automatic transition) fire first.
    pub fn state(&self) -> State {
        let state = State::from_u8((self.inner.word.load(Ordering::Acquire) & 7) as u8);
        if matches!(state, State::Open | State::HalfOpen) {
            self.with_machine(|m, now, sink| m.current_state(now, sink))
        } else {
            state
        }
    }

    /// A snapshot of the current state's metrics (`getMetrics()`). A time-based window slides
    /// to the current second first.
    pub fn metrics(&self) -> Metrics {
        self.with_machine(|m, now, sink| m.metrics(now, sink))
    }

    /// Fires the timers that are due (`maxWaitDurationInHalfOpenState`, automatic
    /// OPEN -> HALF_OPEN). Every operation does this first; call it to make an idle breaker
    /// with a [`ManualClock`](crate::ManualClock) catch up. With the `tokio` feature and a
    /// runtime, timers also fire on their own.
    pub fn poll_timers(&self) {
        self.with_machine(|m, now, sink| m.fire_due_timers(now, sink));
    }

    fn manual(&self, to: State, wait: OpenWait) -> Result<(), IllegalStateTransition> {
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
    fn schedule_timer(&self, at: u64) {
        #[cfg(feature = "tokio")]
        crate::timer::schedule(self, at);
    }

    /// The earliest pending timer, for the scheduler.
    #[allow(dead_code)]
    pub(crate) fn next_timer(&self) -> Option<u64> {
        self.lock().next_timer()
    }

    #[allow(dead_code)]
    pub(crate) fn downgrade(&self) -> std::sync::Weak<Inner> {
        Arc::downgrade(&self.inner)
    }

    #[allow(dead_code)]
    pub(crate) fn from_inner(inner: Arc<Inner>) -> Self {
        CircuitBreaker { inner }
    }
}

/// The states whose permission checks take no lock: CLOSED, DISABLED, METRICS_ONLY (a bit
/// per state number).
const ADMITS_WITHOUT_LOCK: u8 =
    1 << State::Closed as u8 | 1 << State::Disabled as u8 | 1 << State::MetricsOnly as u8;

/// Rounds of waiting for a held machine lock by reading it before parking (about 100 x
/// the CPU's spin-loop pause: a few microseconds at most, well above a critical section).
const SPINS_BEFORE_PARKING: u32 = 100;

/// The states that may reject without the lock: OPEN, FORCED_OPEN.
const REJECTS_WITHOUT_LOCK: u8 = 1 << State::Open as u8 | 1 << State::ForcedOpen as u8;

/// `(reject_before, open_deadline)` for the state `m` is in: OPEN rejects without the lock
/// strictly before its automatic-transition timer and up to its deadline inclusive (the
/// first request strictly after it moves to HALF_OPEN); FORCED_OPEN always; other states
/// never, and no state while anyone is `subscribed` (a rejection publishes NOT_PERMITTED).
/// `open_deadline` is OPEN's deadline, 0 in other states.
fn fast_rejection_limits(m: &Machine, subscribed: bool) -> (u64, u64) {
    if subscribed {
        return (0, m.open_deadline_if_open());
    }
    match m.state() {
        State::Open => {
            let deadline = m.open_deadline();
            let limit = deadline.saturating_add(1);
            let limit = match m.next_timer() {
                Some(at) => limit.min(at),
                None => limit,
            };
            (limit, deadline)
        }
        State::ForcedOpen => (u64::MAX, 0),
        _ => (0, 0),
    }
}

fn plain_errors(c: &CircuitBreakerConfig) -> bool {
    c.record_exceptions.is_empty()
        && c.ignore_exceptions.is_empty()
        && c.record_exception.is_none()
        && c.ignore_exception.is_none()
}

impl fmt::Debug for CircuitBreaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreaker")
            .field("name", &self.inner.name)
            .field(
                "state",
                &State::from_u8((self.inner.word.load(Ordering::Relaxed) & 7) as u8),
            )
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod striped_trial_tests {
    //! HALF_OPEN's striped trial successes when the last one's "settle now" is missed: two
    //! last successes that end at once can each miss the other's stripe store. Simulated
    //! here by counting a success in the stripe and not acting on the answer.
    use super::*;
    use crate::{ManualClock, Permit};

    const T0_MS: u64 = 1_700_000_000_000;

    fn half_open(clock: &ManualClock) -> CircuitBreaker {
        half_open_with(clock, 2)
    }

    fn config(clock: &ManualClock, permitted: i64) -> CircuitBreakerConfig {
        CircuitBreakerConfig::builder()
            .permitted_number_of_calls_in_half_open_state(permitted)
            .minimum_number_of_calls(permitted)
            .failure_rate_threshold(50.0)
            .wait_duration_in_open_state(Duration::from_secs(10))
            .clock(Arc::new(clock.clone()))
            .build()
            .expect("valid config")
    }

    fn half_open_with(clock: &ManualClock, permitted: i64) -> CircuitBreaker {
        let cb = CircuitBreaker::new("striped", config(clock, permitted));
        cb.transition_to_open_state().expect("CLOSED -> OPEN");
        cb.transition_to_half_open_state()
            .expect("OPEN -> HALF_OPEN");
        cb
    }

    /// Counts `permit`'s success in this thread's stripe, ending now, as the lock-free path
    /// does, but without settling, although it was the last outcome: the race's outcome.
    fn unseen_success(cb: &CircuitBreaker, permit: Permit<'_>) {
        let answer = late_success(cb, permit);
        assert_eq!(answer, Recorded::YesSettle, "it was the last outcome");
    }

    /// Counts `permit`'s success in this thread's stripe without settling, whatever the
    /// answer (returned): a success checked against the published state just before a seal
    /// and stored just after it.
    fn late_success(cb: &CircuitBreaker, permit: Permit<'_>) -> Recorded {
        let end = cb.now_nanos();
        let answer = cb.inner.fast.record_trial_in_stripe(
            crate::striped::thread_index(),
            end,
            permit.episode(),
        );
        std::mem::forget(permit);
        answer
    }

    #[test]
    fn a_trial_success_stored_after_its_state_ended_counts_in_the_next_one() {
        let clock = ManualClock::at_epoch_millis(T0_MS);
        let cb = half_open(&clock);
        let first = cb.try_acquire_permission().expect("trial 1");
        let second = cb.try_acquire_permission().expect("trial 2");
        first.on_success();
        cb.transition_to_closed_state()
            .expect("HALF_OPEN -> CLOSED");
        let _ = late_success(&cb, second);
        // As any outcome of an earlier state, it is recorded in the current one (as in
        // Resilience4j, and as the lock-free compare-and-swap that failed used to do).
        let m = cb.metrics();
        assert_eq!(m.number_of_successful_calls, 1);
        assert_eq!(m.number_of_buffered_calls, 1);
    }

    #[test]
    fn a_reconfiguration_first_settles_a_verdict_the_stripes_made_due() {
        let clock = ManualClock::at_epoch_millis(T0_MS);
        let cb = half_open_with(&clock, 3);
        let trials: Vec<_> = (0..3)
            .map(|_| cb.try_acquire_permission().expect("a trial"))
            .collect();
        let mut trials = trials.into_iter();
        trials.next().unwrap().on_success();
        trials.next().unwrap().on_success();
        unseen_success(&cb, trials.next().unwrap());
        // The verdict (CLOSED: 3 of 3 succeeded) comes before the new config, which would
        // otherwise replace the complete trial window with an empty one and no permission.
        cb.replace_config(config(&clock, 2));
        assert_eq!(cb.state(), State::Closed);
    }

    #[test]
    fn a_shrunk_trial_window_takes_what_it_holds_and_the_rest_count_after_it() {
        let clock = ManualClock::at_epoch_millis(T0_MS);
        let cb = half_open_with(&clock, 4);
        let trials: Vec<_> = (0..4)
            .map(|_| cb.try_acquire_permission().expect("a trial"))
            .collect();
        // A fresh trial window of 2 (no permission left: 4 are in flight).
        cb.replace_config(config(&clock, 2));
        let mut trials = trials.into_iter();
        trials.next().unwrap().on_success();
        assert_eq!(cb.state(), State::HalfOpen);
        // Three more succeed before anything settles: two fill the window (CLOSED), the
        // third is an outcome after the verdict and counts in CLOSED.
        for t in trials {
            let _ = late_success(&cb, t);
        }
        assert_eq!(cb.state(), State::Closed);
        let m = cb.metrics();
        assert_eq!(
            m.number_of_successful_calls, 2,
            "4 successes, 2 in the trial window"
        );
    }

    #[test]
    fn an_unsettled_last_success_closes_the_breaker_on_the_next_read() {
        let clock = ManualClock::at_epoch_millis(T0_MS);
        let cb = half_open(&clock);
        let first = cb.try_acquire_permission().expect("trial 1");
        let second = cb.try_acquire_permission().expect("trial 2");
        first.on_success();
        assert_eq!(cb.state(), State::HalfOpen, "one of two trials in");
        unseen_success(&cb, second);
        // Both successes are in: 0 % failures, CLOSED (Resilience4j decides on the second).
        assert_eq!(cb.state(), State::Closed);
        assert!(cb.try_acquire_permission().is_ok());
    }

    #[test]
    fn an_unsettled_last_success_opens_the_breaker_as_of_its_end() {
        let clock = ManualClock::at_epoch_millis(T0_MS);
        let cb = half_open(&clock);
        let first = cb.try_acquire_permission().expect("trial 1");
        let second = cb.try_acquire_permission().expect("trial 2");
        clock.advance(Duration::from_millis(1));
        first.on_error();
        clock.advance(Duration::from_millis(1));
        // Ends at T0 + 2 ms; nothing touches the breaker for 5 s after it.
        unseen_success(&cb, second);
        clock.advance(Duration::from_secs(5));
        // 1 failure of 2 = 50 % >= 50 %: OPEN, decided as of the success's end, so the
        // 10 s wait runs from T0 + 2 ms (strictly after T0 + 10.002 s admits a trial call).
        let rejected = cb.try_acquire_permission().expect_err("OPEN");
        assert_eq!(rejected.state(), State::Open);
        // T0 + 5.002 s now, the deadline T0 + 10.002 s: 5 s left (+ 1 ms, see `retry_after`);
        // decided now, it would be 10 s.
        assert_eq!(
            rejected.retry_after(),
            Some(Duration::from_millis(5_000 + 1))
        );
        clock.set_epoch_nanos((T0_MS + 10_002) * 1_000_000);
        assert!(cb.try_acquire_permission().is_err(), "not strictly after");
        clock.advance(Duration::from_nanos(1));
        let trial = cb.try_acquire_permission().expect("a trial call");
        assert_eq!(trial.admitted_in(), State::HalfOpen);
    }
}
