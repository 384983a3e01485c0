//! Time sources.
//!
//! Resilience4j reads time from an injectable `java.time.Clock` (OPEN deadlines, time-based
//! window buckets) and from a timestamp function (call durations). Here one [`Clock`] serves
//! both: it returns nanoseconds since the Unix epoch, so time-based window buckets are whole
//! epoch seconds exactly as in Resilience4j, and differences of two readings are call
//! durations.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A source of time for a circuit breaker (Resilience4j's `clock` and
/// `currentTimestampFunction` settings in one).
///
/// `now_nanos` returns nanoseconds since the Unix epoch and must never go backwards.
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    /// Nanoseconds since 1970-01-01T00:00:00Z. Monotonic: never smaller than a previous reading.
    fn now_nanos(&self) -> u64;
}

/// The default clock: wall-clock time at start-up, advanced by the monotonic clock
/// (`Instant`), so it never jumps back when the system time is adjusted.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
    origin_epoch_nanos: u64,
}

impl SystemClock {
    /// A clock anchored at the current wall-clock time.
    pub fn new() -> Self {
        let origin = Instant::now();
        let origin_epoch_nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        SystemClock {
            origin,
            origin_epoch_nanos,
        }
    }

    /// The process-wide shared system clock.
    pub fn shared() -> Arc<dyn Clock> {
        static SHARED: std::sync::OnceLock<Arc<dyn Clock>> = std::sync::OnceLock::new();
        SHARED.get_or_init(|| Arc::new(SystemClock::new())).clone()
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
        self.origin_epoch_nanos + self.origin.elapsed().as_nanos() as u64
    }
}

/// A clock that only moves when told to: for tests and simulations.
///
/// Cloning shares the same time. Breakers that use it apply due timers
/// (`maxWaitDurationInHalfOpenState`, automatic OPEN -> HALF_OPEN) on their next operation
/// after the clock passes the deadline, so every time-dependent behaviour is testable without
/// sleeping.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock reading `epoch_millis` milliseconds since the Unix epoch.
    pub fn at_epoch_millis(epoch_millis: u64) -> Self {
        let clock = ManualClock::default();
        clock.set_epoch_nanos(epoch_millis * 1_000_000);
        clock
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        self.nanos.fetch_add(by.as_nanos() as u64, Ordering::SeqCst);
    }

    /// Sets the time in nanoseconds since the epoch. Setting it backwards breaks the
    /// [`Clock`] contract; the breaker then behaves as if no time had passed.
    pub fn set_epoch_nanos(&self, nanos: u64) {
        self.nanos.store(nanos, Ordering::SeqCst);
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
