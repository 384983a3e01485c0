//! [`WindowMax`]: the largest value of a recent time window, as Micrometer's `TimeWindowMax`
//! reports a timer's `_max` (a ring of three buffers rotated every 40 s: the maximum of the
//! last two minutes or so).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const BUFFERS: usize = 3;

/// Micrometer's `distributionStatisticExpiry` default: two minutes.
pub(crate) const EXPIRY_NANOS: u64 = 120_000_000_000;

/// The maximum of the values recorded over the last [`EXPIRY_NANOS`] (and up to a third
/// more), lock-free: three ring buffers, each recording every value, the oldest reset and
/// made the newest every `expiry / 3`.
#[derive(Debug)]
pub(crate) struct WindowMax {
    ring: [AtomicU64; BUFFERS],
    current: AtomicUsize,
    /// When the current buffer became the oldest (epoch ns); 0 before the first use.
    rotated_at: AtomicU64,
    every: u64,
}

impl WindowMax {
    pub(crate) fn new(expiry_nanos: u64) -> Self {
        WindowMax {
            ring: Default::default(),
            current: AtomicUsize::new(0),
            rotated_at: AtomicU64::new(0),
            every: (expiry_nanos / BUFFERS as u64).max(1),
        }
    }

    /// Records `value` at `now` (epoch ns).
    pub(crate) fn record(&self, now: u64, value: u64) {
        self.rotate(now);
        for b in &self.ring {
            b.fetch_max(value, Ordering::Relaxed);
        }
    }

    /// The maximum of the window ending at `now`.
    pub(crate) fn poll(&self, now: u64) -> u64 {
        self.rotate(now);
        self.ring[self.current.load(Ordering::Acquire) % BUFFERS].load(Ordering::Relaxed)
    }

    fn rotate(&self, now: u64) {
        let last = self.rotated_at.load(Ordering::Acquire);
        if last == 0 {
            let _ = self.rotated_at.compare_exchange(
                0,
                now.max(1),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            return;
        }
        let elapsed = now.saturating_sub(last);
        if elapsed < self.every {
            return;
        }
        let steps = elapsed / self.every;
        let next = last + steps * self.every;
        // One thread rotates; the others record into the buffers as they are.
        if self
            .rotated_at
            .compare_exchange(last, next, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        for _ in 0..steps.min(BUFFERS as u64) {
            let cur = self.current.load(Ordering::Acquire) % BUFFERS;
            self.ring[cur].store(0, Ordering::Relaxed);
            self.current.store((cur + 1) % BUFFERS, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn keeps_the_maximum_for_the_expiry_then_forgets_it() {
        let m = WindowMax::new(120 * S);
        let t0 = 1_000 * S;
        m.record(t0, 7);
        m.record(t0 + S, 3);
        assert_eq!(m.poll(t0 + 2 * S), 7);
        // Still there after 119 s (two rotations of 40 s: the third buffer still has it).
        assert_eq!(m.poll(t0 + 119 * S), 7);
        // Gone once every buffer that saw it has been reset (three rotations).
        assert_eq!(m.poll(t0 + 121 * S), 0);
        m.record(t0 + 122 * S, 2);
        assert_eq!(m.poll(t0 + 123 * S), 2);
        // A long idle period resets everything at once.
        assert_eq!(m.poll(t0 + 10_000 * S), 0);
    }
}
