//! [`ParamsCell`]: the numbers a permission reads from the config in force, readable without
//! a reference count or a lock (a sequence lock over a few atomics).
//!
//! Reading them through the config's `ArcSwap` cost a protected load per permission; the
//! permission path instead reads five words and checks that no change ran meanwhile. Only
//! [`RateLimiter`](super::RateLimiter)'s config changes write it, one at a time (they hold
//! the limiter's change lock).
//!
//! The protocol is the classic sequence lock, with atomics throughout: a writer makes the
//! sequence odd, writes the values, and makes it even again (release); a reader reads the
//! sequence (acquire), the values, then (after an acquire fence) the sequence again, and
//! keeps the values only if it was even and did not move.

use super::cycle::Params;
use crate::sync::{fence, AtomicU64, Ordering};

/// What a permission needs to know about the config in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Published {
    /// The cycle arithmetic's numbers.
    pub(crate) params: Params,
    /// `exact_resilience4j`.
    pub(crate) exact: bool,
    /// Read the clock's cached reading (`Clock::recent_nanos`) rather than an exact one.
    pub(crate) coarse_clock: bool,
    /// `drainPermissionsOnResult` is set.
    pub(crate) drains: bool,
}

const EXACT: u64 = 1 << 32;
const COARSE: u64 = 1 << 33;
const DRAINS: u64 = 1 << 34;

/// A [`Published`] behind a sequence lock.
pub(crate) struct ParamsCell {
    seq: AtomicU64,
    /// The params' version (low 32 bits) and the flags.
    version_flags: AtomicU64,
    period: AtomicU64,
    limit: AtomicU64,
    timeout: AtomicU64,
}

impl ParamsCell {
    pub(crate) fn new(p: Published) -> Self {
        let (vf, period, limit, timeout) = Self::words(p);
        ParamsCell {
            seq: AtomicU64::new(0),
            version_flags: AtomicU64::new(vf),
            period: AtomicU64::new(period),
            limit: AtomicU64::new(limit),
            timeout: AtomicU64::new(timeout),
        }
    }

    fn words(p: Published) -> (u64, u64, u64, u64) {
        let flags = (p.exact as u64 * EXACT)
            | (p.coarse_clock as u64 * COARSE)
            | (p.drains as u64 * DRAINS);
        (
            u64::from(p.params.version) | flags,
            p.params.period as u64,
            p.params.limit as u64,
            p.params.timeout as u64,
        )
    }

    /// The values in force (waits out a change that is being written).
    #[inline]
    pub(crate) fn load(&self) -> Published {
        loop {
            let s1 = self.seq.load(Ordering::Acquire);
            let vf = self.version_flags.load(Ordering::Relaxed);
            let period = self.period.load(Ordering::Relaxed);
            let limit = self.limit.load(Ordering::Relaxed);
            let timeout = self.timeout.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if s1 & 1 == 0 && self.seq.load(Ordering::Relaxed) == s1 {
                return Published {
                    params: Params {
                        version: vf as u32,
                        period: period as i64,
                        limit: limit as i64,
                        timeout: timeout as i64,
                    },
                    exact: vf & EXACT != 0,
                    coarse_clock: vf & COARSE != 0,
                    drains: vf & DRAINS != 0,
                };
            }
            std::hint::spin_loop();
            #[cfg(loom)]
            loom::thread::yield_now();
        }
    }

    /// Puts `p` in force. Callers must not store concurrently (they hold the limiter's
    /// change lock).
    pub(crate) fn store(&self, p: Published) {
        let (vf, period, limit, timeout) = Self::words(p);
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        self.version_flags.store(vf, Ordering::Relaxed);
        self.period.store(period, Ordering::Relaxed);
        self.limit.store(limit, Ordering::Relaxed);
        self.timeout.store(timeout, Ordering::Relaxed);
        self.seq.store(s.wrapping_add(2), Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn published(version: u32, n: i64) -> Published {
        Published {
            params: Params {
                version,
                period: n,
                limit: n,
                timeout: -n,
            },
            exact: version.is_multiple_of(2),
            coarse_clock: true,
            drains: false,
        }
    }

    #[test]
    fn round_trips_every_field() {
        let cell = ParamsCell::new(published(7, 500));
        assert_eq!(cell.load(), published(7, 500));
        cell.store(published(u32::MAX, i64::MAX));
        assert_eq!(cell.load(), published(u32::MAX, i64::MAX));
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::sync::loom_model as model;
    use crate::sync::Arc;
    use loom::thread;

    fn published(n: i64) -> Published {
        Published {
            params: Params {
                version: n as u32,
                period: n,
                limit: n,
                timeout: n,
            },
            exact: n % 2 == 1,
            coarse_clock: n % 2 == 1,
            drains: n % 2 == 1,
        }
    }

    /// A reader racing two changes sees one whole set of values, never a mix.
    #[test]
    fn loom_a_reader_never_sees_a_torn_config() {
        model(|| {
            let cell = Arc::new(ParamsCell::new(published(1)));
            let writer = {
                let cell = cell.clone();
                thread::spawn(move || {
                    cell.store(published(2));
                    cell.store(published(3));
                })
            };
            let seen = cell.load();
            assert!((1..=3).any(|n| seen == published(n)), "torn: {seen:?}");
            writer.join().unwrap();
            assert_eq!(cell.load(), published(3));
        });
    }
}
