//! [`CircuitBreaker`]: a cheap, clonable handle to one named breaker.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use arc_swap::ArcSwap;
use parking_lot::{Mutex, MutexGuard};

use crate::clock::{Clock, SystemClock};
use crate::config::CircuitBreakerConfig;
use crate::events::{CircuitBreakerEvent, Delivery, EventKind, EventSink, Subscribers};
use crate::fast_window::FastWindow;
use crate::machine::Machine;
use crate::metrics::Metrics;
use crate::names::Name;
use crate::shared::{TrialEnd, TrialGrant};
use crate::state::State;

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

// The store hook (issue #16) lives beside the handle it is given: `Inner` holds the
// attached store, and the store's methods receive the breaker.

/// A store that shares a breaker's state with other processes. Implemented by
/// `breaker_redis`; attach one with [`CircuitBreaker::attach_shared_state`].
///
/// Every method is called on the caller's thread, outside the breaker's lock, and must
/// return within a bound the implementation documents (they sit on the call path of
/// transitions and HALF_OPEN trial calls).
pub trait SharedState: Send + Sync + 'static {
    /// The breaker made the transition `from -> to`: through its calls (`manual` false:
    /// a window that tripped, a HALF_OPEN that decided, an OPEN wait that passed) or through
    /// a `transition_to_*` / `reset()` call (`manual` true). Not called for the changes the
    /// store makes itself with [`CircuitBreaker::apply_shared_state`].
    fn on_transition(&self, breaker: &CircuitBreaker, from: State, to: State, manual: bool);

    /// The breaker granted a HALF_OPEN trial permission in episode `episode`
    /// ([`Permit::episode`](crate::Permit::episode)); may the call run?
    fn acquire_trial(&self, breaker: &CircuitBreaker, episode: u64) -> TrialGrant;

    /// A trial call granted in `episode` ended.
    fn end_trial(&self, breaker: &CircuitBreaker, episode: u64, end: TrialEnd);
}

/// A handle to a breaker that does not keep it alive (a store's list of its breakers).
#[derive(Clone, Debug)]
pub struct WeakCircuitBreaker(pub(crate) Weak<Inner>);

impl WeakCircuitBreaker {
    /// The breaker, if some handle still holds it.
    pub fn upgrade(&self) -> Option<CircuitBreaker> {
        self.0.upgrade().map(CircuitBreaker::from_inner)
    }
}

/// The breaker's attached store, if any: set once.
pub(crate) type SharedSlot = std::sync::OnceLock<Arc<dyn SharedState>>;

mod admission;
mod control;

#[cfg(all(test, not(loom)))]
mod striped_trial_tests;
