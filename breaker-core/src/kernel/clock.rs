//! Time sources.
//!
//! Resilience4j reads time from an injectable `java.time.Clock` (OPEN deadlines, time-based
//! window buckets) and from a timestamp function (call durations). Here one [`Clock`] serves
//! both: it returns nanoseconds since the Unix epoch, so time-based window buckets are whole
//! epoch seconds exactly as in Resilience4j, and differences of two readings are call
//! durations.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::sleep::{ManualSleep, Sleep, Sleepers};

/// A source of time for a circuit breaker (Resilience4j's `clock` and
/// `currentTimestampFunction` settings in one).
///
/// `now_nanos` returns nanoseconds since the Unix epoch and must never go backwards.
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    /// Nanoseconds since 1970-01-01T00:00:00Z. Monotonic: never smaller than a previous reading.
    fn now_nanos(&self) -> u64;

    /// A cheap reading that may lag [`now_nanos`](Self::now_nanos) by a bounded amount
    /// (for [`SystemClock`], one tick of about a millisecond). Monotonic on its own. This is
    /// the reading a breaker takes on every call: permission, call duration, OPEN deadline,
    /// time-based window. The default is [`now_nanos`](Self::now_nanos).
    #[inline]
    fn recent_nanos(&self) -> u64 {
        self.now_nanos()
    }

    /// Waits until this clock has moved `duration` past [`now_nanos`](Self::now_nanos)
    /// (the retry wait between attempts, a rate limiter's reservation, a bulkhead's
    /// `maxWaitDuration`). The default waits in real time ([`Sleep::real`]): a tokio timer
    /// inside a tokio runtime (feature `tokio`), otherwise a timer thread. [`ManualClock`]
    /// completes it when advanced past the deadline instead. A zero duration completes at
    /// once.
    fn sleep(&self, duration: Duration) -> Sleep {
        Sleep::real(duration)
    }

    /// Waits until [`now_nanos`](Self::now_nanos) reads `deadline_nanos` (epoch ns) or later.
    fn sleep_until(&self, deadline_nanos: u64) -> Sleep {
        self.sleep(Duration::from_nanos(
            deadline_nanos.saturating_sub(self.now_nanos()),
        ))
    }
}

/// The default clock: wall-clock time at start-up, advanced by the monotonic clock
/// (`Instant`), so it never jumps back when the system time is adjusted.
///
/// [`recent_nanos`](Clock::recent_nanos), which breakers read on every call, is a cached
/// reading refreshed about every millisecond by one process-wide background thread
/// (`breaker-clock`) while breakers are in use; the thread parks itself after about a second
/// without readers and the next reading wakes it (that reading is exact). A reading costs one
/// atomic load instead of a `clock_gettime` call (see BENCHMARKS.md), at the price of
/// durations and deadlines measured to about a millisecond. [`SystemClock::precise`] reads
/// the monotonic clock every time instead.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    /// Epoch nanoseconds at [`base`]: epoch time = `offset` + nanoseconds since `base()`.
    offset: u64,
    precise: bool,
}

impl SystemClock {
    /// A clock anchored at the current wall-clock time, with cached (millisecond) readings
    /// on the hot path.
    pub fn new() -> Self {
        let since_base = precise_since_base();
        let epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        SystemClock {
            offset: epoch.saturating_sub(since_base),
            precise: false,
        }
    }

    /// A clock anchored at the current wall-clock time whose every reading, on the hot path
    /// too, is an exact `Instant::now()` (about 20-30 ns each instead of about 1 ns).
    pub fn precise() -> Self {
        SystemClock {
            precise: true,
            ..SystemClock::new()
        }
    }

    /// The process-wide shared system clock (cached readings).
    pub fn shared() -> Arc<dyn Clock> {
        static SHARED: OnceLock<Arc<dyn Clock>> = OnceLock::new();
        SHARED.get_or_init(|| Arc::new(SystemClock::new())).clone()
    }

    /// An exact reading, kept out of line so that the cached one inlines small.
    #[inline(never)]
    fn precise_nanos(&self) -> u64 {
        self.now_nanos()
    }

    /// Whether `clock` is the one [`shared`](Self::shared) returns.
    pub(crate) fn is_shared(clock: &Arc<dyn Clock>) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(clock), Arc::as_ptr(&Self::shared()))
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        self.offset + precise_since_base()
    }

    #[inline(always)]
    fn recent_nanos(&self) -> u64 {
        if self.precise {
            self.precise_nanos()
        } else {
            self.offset + coarse_since_base()
        }
    }
}

// ----- the cached reading behind SystemClock::recent_nanos ---------------------------------

/// How often the background thread refreshes the cached reading.
const TICK: Duration = Duration::from_millis(1);
/// Ticks without a reader after which the thread parks (about a second).
const IDLE_TICKS: u32 = 1_000;

/// The process-wide cached reading, on one cache line written once per tick.
struct Coarse {
    /// Nanoseconds since [`base`], the latest tick (monotonic: only raised with `fetch_max`).
    since_base: AtomicU64,
    /// The ticker is running: `since_base` is at most about one tick old.
    awake: AtomicBool,
    /// Someone read the clock since the last tick.
    used: AtomicBool,
    /// The ticker thread could not be started: every reading is exact.
    no_ticker: AtomicBool,
}

static COARSE: Coarse = Coarse {
    since_base: AtomicU64::new(0),
    awake: AtomicBool::new(false),
    used: AtomicBool::new(false),
    no_ticker: AtomicBool::new(false),
};

/// The instant every [`SystemClock`] reading is measured from.
fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

#[inline]
fn precise_since_base() -> u64 {
    let d = base().elapsed();
    d.as_secs() * 1_000_000_000 + u64::from(d.subsec_nanos())
}

/// The cached reading: one load (and, once per tick, one store) while the ticker runs.
#[inline(always)]
fn coarse_since_base() -> u64 {
    if COARSE.awake.load(Ordering::Relaxed) {
        if !COARSE.used.load(Ordering::Relaxed) {
            COARSE.used.store(true, Ordering::Relaxed);
        }
        COARSE.since_base.load(Ordering::Relaxed)
    } else {
        coarse_wake()
    }
}

/// Brings the cached reading up to the exact time (it only moves forward). For a timer that
/// wakes up: under load the ticker thread can lag by several milliseconds, and a timer task
/// that read the cached time would find its deadline not yet reached.
#[cfg_attr(not(feature = "tokio"), allow(dead_code))]
pub(crate) fn refresh_cached_reading() {
    COARSE
        .since_base
        .fetch_max(precise_since_base(), Ordering::Relaxed);
}

/// The ticker is parked (or not started): read the exact time, publish it, wake the ticker.
#[cold]
#[inline(never)]
fn coarse_wake() -> u64 {
    let now = precise_since_base();
    let published = COARSE.since_base.fetch_max(now, Ordering::Relaxed).max(now);
    if COARSE.no_ticker.load(Ordering::Relaxed) {
        return published;
    }
    COARSE.used.store(true, Ordering::Relaxed);
    if !COARSE.awake.swap(true, Ordering::AcqRel) {
        match ticker() {
            Some(t) => t.unpark(),
            None => {
                COARSE.no_ticker.store(true, Ordering::Relaxed);
                COARSE.awake.store(false, Ordering::Release);
            }
        }
    }
    published
}

/// The ticker thread, started on first use; `None` if it cannot be spawned.
fn ticker() -> Option<&'static std::thread::Thread> {
    static TICKER: OnceLock<Option<std::thread::Thread>> = OnceLock::new();
    TICKER
        .get_or_init(|| {
            std::thread::Builder::new()
                .name("breaker-clock".into())
                .spawn(tick_forever)
                .ok()
                .map(|h| h.thread().clone())
        })
        .as_ref()
}

fn tick_forever() {
    let mut idle = 0u32;
    loop {
        // Parked while nobody reads; a reader sets `awake` before unparking us.
        while !COARSE.awake.load(Ordering::Acquire) {
            std::thread::park();
            idle = 0;
        }
        COARSE
            .since_base
            .fetch_max(precise_since_base(), Ordering::Relaxed);
        std::thread::sleep(TICK);
        if COARSE.used.swap(false, Ordering::Relaxed) {
            idle = 0;
        } else {
            idle += 1;
            if idle >= IDLE_TICKS {
                COARSE.awake.store(false, Ordering::Release);
            }
        }
    }
}

/// A clock that only moves when told to: for tests and simulations.
///
/// Cloning shares the same time. Breakers that use it apply due timers
/// (`maxWaitDurationInHalfOpenState`, automatic OPEN -> HALF_OPEN) on their next operation
/// after the clock passes the deadline, and [`Clock::sleep`] on it completes when the clock is
/// advanced past the deadline, so every time-dependent behaviour is testable without
/// sleeping.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
    sleepers: Arc<Mutex<Sleepers>>,
}

impl ManualClock {
    /// A clock reading `epoch_millis` milliseconds since the Unix epoch.
    pub fn at_epoch_millis(epoch_millis: u64) -> Self {
        let clock = ManualClock::default();
        clock.set_epoch_nanos(epoch_millis * 1_000_000);
        clock
    }

    /// Moves the clock forward by `by`, waking every [`Clock::sleep`] that is then due.
    pub fn advance(&self, by: Duration) {
        let now =
            self.nanos.fetch_add(by.as_nanos() as u64, Ordering::SeqCst) + by.as_nanos() as u64;
        Sleepers::wake_due(&self.sleepers, now);
    }

    /// Sets the time in nanoseconds since the epoch, waking every [`Clock::sleep`] that is
    /// then due. Setting it backwards breaks the [`Clock`] contract; the breaker then behaves
    /// as if no time had passed.
    pub fn set_epoch_nanos(&self, nanos: u64) {
        self.nanos.store(nanos, Ordering::SeqCst);
        Sleepers::wake_due(&self.sleepers, nanos);
    }

    /// How many [`Clock::sleep`] futures on this clock are registered and not yet due: lets a
    /// test wait until its tasks are parked on the clock before advancing it.
    pub fn pending_sleeps(&self) -> usize {
        Sleepers::len(&self.sleepers)
    }

    /// The earliest deadline (epoch ns) of the registered [`Clock::sleep`] futures, if any.
    pub fn next_sleep_deadline(&self) -> Option<u64> {
        Sleepers::next_deadline(&self.sleepers)
    }

    /// Sets the time in milliseconds since the epoch.
    pub fn set_epoch_millis(&self, millis: u64) {
        self.set_epoch_nanos(millis * 1_000_000);
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        self.nanos.load(Ordering::SeqCst)
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        self.sleep_until(
            self.now_nanos()
                .saturating_add(duration.as_nanos().min(u64::MAX as u128) as u64),
        )
    }

    fn sleep_until(&self, deadline_nanos: u64) -> Sleep {
        let nanos = Arc::clone(&self.nanos);
        Sleep::from_future(ManualSleep {
            deadline: deadline_nanos,
            now: Arc::new(move || nanos.load(Ordering::SeqCst)),
            sleepers: Arc::downgrade(&self.sleepers),
            id: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::at_epoch_millis(1_700_000_000_000);
        assert_eq!(c.now_nanos(), 1_700_000_000_000_000_000);
        c.advance(Duration::from_millis(1500));
        assert_eq!(c.now_nanos(), 1_700_000_001_500_000_000);
        let shared = c.clone();
        shared.advance(Duration::from_nanos(1));
        assert_eq!(c.now_nanos(), 1_700_000_001_500_000_001);
    }

    fn poll_once(s: &mut Sleep) -> bool {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        std::pin::Pin::new(s).poll(&mut cx).is_ready()
    }

    #[test]
    fn manual_sleep_completes_when_advanced_to_its_deadline() {
        let c = ManualClock::at_epoch_millis(1_000);
        let mut s = c.sleep(Duration::from_millis(250));
        assert!(!poll_once(&mut s));
        assert_eq!(c.pending_sleeps(), 1);
        assert_eq!(c.next_sleep_deadline(), Some(1_250_000_000));
        c.advance(Duration::from_millis(249));
        assert!(!poll_once(&mut s));
        c.advance(Duration::from_millis(1));
        assert_eq!(c.pending_sleeps(), 0, "advance() removed the due sleeper");
        assert!(poll_once(&mut s));
        let mut zero = c.sleep(Duration::ZERO);
        assert!(poll_once(&mut zero));
    }

    #[test]
    fn dropped_manual_sleep_unregisters() {
        let c = ManualClock::at_epoch_millis(0);
        let mut s = c.sleep(Duration::from_secs(1));
        assert!(!poll_once(&mut s));
        assert_eq!(c.pending_sleeps(), 1);
        drop(s);
        assert_eq!(c.pending_sleeps(), 0);
    }

    #[test]
    fn manual_sleep_wakes_a_waiting_task() {
        let c = ManualClock::at_epoch_millis(0);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let waiter = {
                let c = c.clone();
                tokio::spawn(async move { c.sleep(Duration::from_millis(10)).await })
            };
            while c.pending_sleeps() == 0 {
                tokio::task::yield_now().await;
            }
            c.advance(Duration::from_millis(10));
            waiter.await.unwrap();
        });
    }

    #[test]
    fn real_sleep_outside_a_runtime_uses_a_thread() {
        let start = Instant::now();
        let mut s = SystemClock::precise().sleep(Duration::from_millis(20));
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        while std::pin::Pin::new(&mut s).poll(&mut cx).is_pending() {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(start.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn system_clock_recent_reading_follows_the_exact_one() {
        for c in [SystemClock::new(), SystemClock::precise()] {
            let mut last = c.recent_nanos();
            let exact_before = c.now_nanos();
            std::thread::sleep(Duration::from_millis(20));
            for _ in 0..1000 {
                let r = c.recent_nanos();
                assert!(r >= last, "recent readings go backwards");
                last = r;
            }
            // 20 ms later the cached reading has moved past the exact one taken before.
            assert!(last > exact_before, "cached reading stuck");
            assert!(last <= c.now_nanos());
        }
    }

    #[test]
    fn system_clock_is_epoch_based_and_monotonic() {
        let c = SystemClock::new();
        let a = c.now_nanos();
        let b = c.now_nanos();
        assert!(b >= a);
        // 2020-01-01 in nanoseconds: any sane machine is past it.
        assert!(a > 1_577_836_800_000_000_000);
    }
}
