//! Sliding windows that aggregate call outcomes: Resilience4j's
//! `FixedSizeSlidingWindowMetrics` (COUNT_BASED) and `SlidingTimeWindowMetrics`
//! (TIME_BASED, one bucket per whole epoch second).

use crate::sync::{AtomicU8, Ordering};

/// Totals of the calls in a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub calls: u32,
    pub failed: u32,
    pub slow: u32,
    pub slow_failed: u32,
}

impl Totals {
    #[inline]
    fn add(&mut self, o: Totals) {
        self.calls += o.calls;
        self.failed += o.failed;
        self.slow += o.slow;
        self.slow_failed += o.slow_failed;
    }
    #[inline]
    fn sub(&mut self, o: Totals) {
        self.calls -= o.calls;
        self.failed -= o.failed;
        self.slow -= o.slow;
        self.slow_failed -= o.slow_failed;
    }
    #[inline]
    fn one(failed: bool, slow: bool) -> Totals {
        Totals {
            calls: 1,
            failed: failed as u32,
            slow: slow as u32,
            slow_failed: (failed && slow) as u32,
        }
    }
}

/// A ring of outcome codes ([`FAILED`] | [`SLOW`]), shared between a count window (written
/// under the breaker's lock) and the lock-free CLOSED path (which only reads it; see
/// [`crate::fast_window`]). Relaxed atomics: a plain byte load or store on every target.
pub(crate) type Ring = std::sync::Arc<[AtomicU8]>;

/// A new ring of `capacity` zero codes.
pub(crate) fn new_ring(capacity: usize) -> Ring {
    (0..capacity).map(|_| AtomicU8::new(0)).collect()
}

/// The last `size` outcomes, as a ring of 2-bit codes.
#[derive(Debug)]
pub(crate) struct CountWindow {
    /// At least `size` slots; the window uses the first `size`.
    ring: Ring,
    size: usize,
    head: usize,
    len: usize,
    totals: Totals,
}

/// The outcome code of a failed call.
pub(crate) const FAILED: u8 = 1;
/// The outcome code of a slow call.
pub(crate) const SLOW: u8 = 2;

/// The code of one outcome.
#[inline]
pub(crate) fn code(failed: bool, slow: bool) -> u8 {
    (failed as u8 * FAILED) | (slow as u8 * SLOW)
}

impl CountWindow {
    /// An empty window of `size` calls (at least 1) on a ring of its own.
    pub fn new(size: u32) -> Self {
        let size = size.max(1) as usize;
        Self::on_ring(new_ring(size), size)
    }

    /// An empty window of `size` calls (at least 1) on `ring`, which must have at least
    /// `size` slots; its first `size` are cleared. The ring may be reused by the next window
    /// once this one is dropped, never by two live windows.
    pub fn on_ring(ring: Ring, size: usize) -> Self {
        let size = size.max(1);
        assert!(ring.len() >= size, "ring shorter than its window");
        for slot in &ring[..size] {
            slot.store(0, Ordering::Relaxed);
        }
        CountWindow {
            ring,
            size,
            head: 0,
            len: 0,
            totals: Totals::default(),
        }
    }

    /// A full window: the `(failed, slow)` totals it would hold after recording one more
    /// outcome, without recording it. `None` while it is still filling.
    #[inline]
    pub fn totals_after(&self, failed: bool, slow: bool) -> Option<(u32, u32)> {
        if self.len != self.size {
            return None;
        }
        let old = self.ring[self.head].load(Ordering::Relaxed);
        let t = &self.totals;
        Some((
            t.failed + u32::from(failed) - u32::from(old & FAILED),
            t.slow + u32::from(slow) - u32::from(old >> 1),
        ))
    }

    /// The number of calls the window holds when full.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.size
    }

    /// Whether the window holds `capacity` calls.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.size
    }

    /// The window's totals.
    #[inline]
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// The totals counted afresh from the ring (to check the running ones).
    #[cfg(debug_assertions)]
    pub fn recount(&self) -> Totals {
        let mut t = Totals::default();
        for slot in &self.ring[..self.len] {
            let c = slot.load(Ordering::Relaxed);
            t.add(Totals::one(c & FAILED != 0, c & SLOW != 0));
        }
        t
    }

    /// The slot the next outcome goes to.
    #[inline]
    pub fn head(&self) -> usize {
        self.head
    }

    /// Whether the window lives on `ring`.
    pub fn is_on(&self, ring: &Ring) -> bool {
        std::sync::Arc::ptr_eq(&self.ring, ring)
    }

    /// Moves the next slot to `head` (< capacity) on a full window whose slots from the
    /// current head up to `head` already hold the codes of the outcomes that moved it: what
    /// the lock-free path did, recording outcomes equal to the ones they replaced, which
    /// changes neither the ring nor the totals.
    #[inline]
    pub fn set_head(&mut self, head: usize) {
        debug_assert!(self.is_full() && head < self.size);
        self.head = head;
    }

    /// Records `n` outcomes that neither failed nor were slow: what `n` calls of
    /// `record(false, false)` do, in one step while the window is filling.
    pub fn record_successes(&mut self, n: u32) {
        let n = n as usize;
        if self.len + n <= self.size {
            // Filling: the head is at `len`, and the slots from it on are still cleared,
            // which is the success code.
            debug_assert_eq!(self.head, self.len);
            self.len += n;
            self.totals.calls += n as u32;
            self.head = if self.len == self.size { 0 } else { self.len };
        } else {
            for _ in 0..n {
                self.record(false, false);
            }
        }
    }

    #[inline]
    pub fn record(&mut self, failed: bool, slow: bool) {
        let code = code(failed, slow);
        // The code that falls out of a full ring (none while it fills: 0 counts nothing).
        let slot = &self.ring[self.head];
        let old = if self.len == self.size {
            slot.load(Ordering::Relaxed)
        } else {
            self.len += 1;
            self.totals.calls += 1;
            0
        };
        if old != code {
            slot.store(code, Ordering::Relaxed);
        }
        self.head += 1;
        if self.head == self.size {
            self.head = 0;
        }
        // One read-modify-write per counter, added before subtracted so nothing underflows
        // (a set bit in `old` was counted in the totals).
        let both = |c: u8| (c == FAILED | SLOW) as u32;
        let t = &mut self.totals;
        t.failed = t.failed + u32::from(code & FAILED) - u32::from(old & FAILED);
        t.slow = t.slow + u32::from(code >> 1) - u32::from(old >> 1);
        t.slow_failed = t.slow_failed + both(code) - both(old);
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    epoch_second: u64,
    totals: Totals,
}

/// One bucket per whole epoch second; the window holds the calls that completed in the last
/// `size` seconds (the current one included).
#[derive(Debug, Clone)]
pub(crate) struct TimeWindow {
    buckets: Box<[Bucket]>,
    head: usize,
    totals: Totals,
}

impl TimeWindow {
    pub fn new(size_seconds: u32, now_nanos: u64) -> Self {
        let now = now_nanos / 1_000_000_000;
        let buckets = (0..size_seconds.max(1) as u64)
            .map(|i| Bucket {
                epoch_second: now + i,
                totals: Totals::default(),
            })
            .collect();
        TimeWindow {
            buckets,
            head: 0,
            totals: Totals::default(),
        }
    }

    /// Moves the window to the current second, dropping buckets that fell out of it
    /// (Resilience4j's `moveWindowToCurrentEpochSecond`).
    #[inline]
    pub fn advance(&mut self, now_nanos: u64) {
        let now = now_nanos / 1_000_000_000;
        if now > self.buckets[self.head].epoch_second {
            self.rotate(now);
        }
    }

    /// [`advance`](Self::advance) to a later second `now`.
    #[inline(never)]
    fn rotate(&mut self, now: u64) {
        let head_second = self.buckets[self.head].epoch_second;
        let n = self.buckets.len() as u64;
        let mut to_move = (now - head_second).min(n);
        while to_move > 0 {
            to_move -= 1;
            self.head = (self.head + 1) % self.buckets.len();
            let b = &mut self.buckets[self.head];
            self.totals.sub(b.totals);
            *b = Bucket {
                epoch_second: now - to_move,
                totals: Totals::default(),
            };
        }
    }

    /// The epoch second of the newest bucket.
    #[inline]
    pub fn newest_second(&self) -> u64 {
        self.buckets[self.head].epoch_second
    }

    /// Adds `t` to the newest bucket (outcomes recorded lock-free in its second).
    #[inline]
    pub fn add_to_newest(&mut self, t: Totals) {
        self.buckets[self.head].totals.add(t);
        self.totals.add(t);
    }

    /// The totals as of the last [`advance`](Self::advance).
    #[inline]
    pub fn totals(&self) -> Totals {
        self.totals
    }

    #[inline]
    pub fn record(&mut self, now_nanos: u64, failed: bool, slow: bool) {
        self.advance(now_nanos);
        let one = Totals::one(failed, slow);
        self.buckets[self.head].totals.add(one);
        self.totals.add(one);
    }
}

/// The window of one state object.
#[derive(Debug)]
pub(crate) enum Window {
    Count(CountWindow),
    Time(TimeWindow),
    /// DISABLED and FORCED_OPEN: size 0, never written.
    Empty,
}

impl Window {
    #[inline]
    pub fn record(&mut self, now_nanos: u64, failed: bool, slow: bool) {
        match self {
            Window::Count(w) => w.record(failed, slow),
            Window::Time(w) => w.record(now_nanos, failed, slow),
            Window::Empty => {}
        }
    }

    /// Whether this is a count window holding `calls` calls, its capacity.
    #[inline]
    pub fn is_full_count_window(&self, calls: u32) -> bool {
        matches!(self, Window::Count(w) if w.size == calls as usize)
    }

    /// The totals as of `now` (a time-based window slides first).
    #[inline]
    pub fn totals(&mut self, now_nanos: u64) -> Totals {
        match self {
            Window::Count(w) => w.totals,
            Window::Time(w) => {
                w.advance(now_nanos);
                w.totals
            }
            Window::Empty => Totals::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn count_window_keeps_last_n() {
        let mut w = CountWindow::new(3);
        for (f, s) in [(true, false), (false, true), (true, true), (false, false)] {
            w.record(f, s);
        }
        // last three: (false,true), (true,true), (false,false)
        assert_eq!(
            w.totals,
            Totals {
                calls: 3,
                failed: 1,
                slow: 2,
                slow_failed: 1
            }
        );
    }

    #[test]
    fn successes_in_one_step_are_successes_one_by_one() {
        // A window of 4 holding one failure, then 2 successes at once (filling), then 3
        // (past full: the oldest two, the failure and a success, fall out).
        let mut w = CountWindow::new(4);
        w.record(true, false);
        w.record_successes(2);
        assert_eq!((w.totals().calls, w.totals().failed, w.head()), (3, 1, 3));
        w.record_successes(1);
        assert_eq!((w.totals().calls, w.head(), w.is_full()), (4, 0, true));
        w.record_successes(3);
        assert_eq!((w.totals().calls, w.totals().failed, w.head()), (4, 0, 3));
        // On a reused ring: the slots of a new window are cleared first.
        let ring = new_ring(4);
        let mut old = CountWindow::on_ring(ring.clone(), 4);
        for _ in 0..4 {
            old.record(true, true);
        }
        let mut w = CountWindow::on_ring(ring, 4);
        w.record_successes(2);
        w.record(false, false);
        w.record(false, false);
        w.record_successes(1);
        assert_eq!(
            w.totals(),
            Totals {
                calls: 4,
                ..Totals::default()
            }
        );
        #[cfg(debug_assertions)]
        assert_eq!(w.recount(), w.totals());
    }

    #[test]
    fn time_window_drops_calls_older_than_size_seconds() {
        let t0 = 1_700_000_000 * S;
        let mut w = TimeWindow::new(10, t0);
        w.record(t0 + S / 2, true, false);
        w.advance(t0 + 9 * S + 999_999_999);
        assert_eq!(w.totals.calls, 1);
        w.advance(t0 + 10 * S);
        assert_eq!(w.totals.calls, 0);
    }

    #[test]
    fn time_window_gap_longer_than_window_clears_everything() {
        let t0 = 1_700_000_000 * S;
        let mut w = TimeWindow::new(3, t0);
        for i in 0..3 {
            w.record(t0 + i * S, true, false);
        }
        assert_eq!(w.totals.calls, 3);
        w.record(t0 + 100 * S, false, false);
        assert_eq!(w.totals.calls, 1);
        assert_eq!(w.totals.failed, 0);
    }
}
