//! [`StripedCounter`]: a counter that most threads add to without a locked instruction, for a
//! count bumped on a hot path and read rarely (retry's
//! `numberOfSuccessfulCallsWithoutRetryAttempt`, bumped by every call that succeeds at once).
//!
//! Resilience4j counts these with a `LongAdder`, which stripes the count over cells to spread
//! contention. Here each of the first [`STRIPES`] threads that count anything gets a slot of
//! its own in every counter, which only it ever writes: it adds with a plain load and store,
//! no read-modify-write, so the increment does not wait for the stores before it to drain (on
//! x86 a locked instruction does, and a call's future has just written its state). Later
//! threads share one atomic cell. A read sums the slots and the cell.
//!
//! Single writer per slot: slot indices come from a process-wide counter, one per thread,
//! never reused, so no two threads ever write one slot. Coherence then makes every slot's
//! value, and so the sum a thread reads, move only up.

use std::cell::Cell;

use crate::sync::{AtomicU64, Ordering};

/// Threads with a slot of their own (the first to count, in the whole process); the others
/// share the atomic cell. One cache line of slots per counter.
pub(crate) const STRIPES: usize = 8;

/// A monotonic counter; see the module docs.
#[derive(Debug)]
pub(crate) struct StripedCounter {
    slots: [AtomicU64; STRIPES],
    shared: AtomicU64,
}

impl Default for StripedCounter {
    fn default() -> Self {
        StripedCounter {
            slots: std::array::from_fn(|_| AtomicU64::new(0)),
            shared: AtomicU64::new(0),
        }
    }
}

impl StripedCounter {
    /// Adds one for the current thread.
    #[inline]
    pub(crate) fn add_one(&self) {
        self.add_one_at(thread_index());
    }

    /// Adds one for the thread whose index is `index`: the thread that owns that index, or
    /// any thread for an index of [`STRIPES`] or more.
    #[inline]
    fn add_one_at(&self, index: usize) {
        match self.slots.get(index) {
            // Only the thread with this index writes the slot: no read-modify-write needed.
            Some(slot) => slot.store(slot.load(Ordering::Relaxed) + 1, Ordering::Relaxed),
            None => {
                self.shared.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The count: every addition that happened before this call, and perhaps some that run
    /// concurrently with it.
    pub(crate) fn sum(&self) -> u64 {
        self.slots
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .fold(self.shared.load(Ordering::Relaxed), u64::wrapping_add)
    }
}

/// The calling thread's slot index, given at its first count.
///
/// Inlined into another crate, the thread-local's accessor is a pointer that crate loads
/// from this crate's `static` and calls indirectly (a few ns on every count); compiled in
/// this crate, the access is one load relative to the thread pointer. So callers on a hot
/// path that other crates inline call it from a function of their own, not inlined.
#[inline(always)]
pub(crate) fn thread_index() -> usize {
    thread_local! {
        static INDEX: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    INDEX.with(|i| match i.get() {
        usize::MAX => {
            let assigned = next_index();
            i.set(assigned);
            assigned
        }
        assigned => assigned,
    })
}

#[cold]
fn next_index() -> usize {
    // Not loom's: a real process-wide counter, only ever read-modify-written.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    // Saturates far beyond STRIPES, so it never wraps back onto a slot that has a writer.
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        .min(usize::MAX - 1)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn every_thread_counts_once_per_call_slot_or_not() {
        // More threads than slots: some share the atomic cell.
        let c = Arc::new(StripedCounter::default());
        let threads: Vec<_> = (0..STRIPES as u64 + 4)
            .map(|t| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 + t {
                        c.add_one();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let n = STRIPES as u64 + 4;
        assert_eq!(c.sum(), 1000 * n + n * (n - 1) / 2);
    }

    #[test]
    fn a_thread_keeps_its_index() {
        let first = thread_index();
        assert_eq!(thread_index(), first);
        let other = std::thread::spawn(thread_index).join().unwrap();
        assert_ne!(other, first);
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::sync::{loom_model as model, Arc};
    use loom::thread;

    /// Two threads with slots of their own and one without add twice each while a reader
    /// sums twice: the reader's sums never go down and never exceed what was added, and the
    /// final sum is every addition.
    #[test]
    fn loom_striped_sums_are_monotonic_and_complete() {
        model(|| {
            let c = Arc::new(StripedCounter::default());
            let adders: Vec<_> = [0, 1, STRIPES]
                .into_iter()
                .map(|index| {
                    let c = c.clone();
                    thread::spawn(move || {
                        c.add_one_at(index);
                        c.add_one_at(index);
                    })
                })
                .collect();
            let a = c.sum();
            let b = c.sum();
            assert!(a <= b && b <= 6, "{a} then {b}");
            for t in adders {
                t.join().unwrap();
            }
            assert_eq!(c.sum(), 6);
        });
    }
}
