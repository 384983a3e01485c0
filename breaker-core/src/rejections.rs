//! The count of calls rejected without the lock, kept with plain stores instead of a
//! read-modify-write.
//!
//! Every thread that rejects calls gets a *slot*, a small index it holds until it exits (then
//! the index goes back to a free list for the next new thread). Each breaker has one counter
//! (stripe) per slot, and only the slot's holder ever writes that stripe, so "load, add one,
//! store" loses nothing: there is a single writer. Threads beyond [`STRIPES`] live slot
//! holders (or a thread being torn down) use a shared counter with `fetch_add`. The total is
//! the sum of all stripes plus the shared counter; it only grows.
//!
//! Why a single writer per stripe holds across slot reuse: the exiting holder's last store
//! to a stripe is sequenced before it pushes its index onto the free list under a mutex, and
//! the next holder pops the index under the same mutex before its first load, so that load
//! sees the previous holder's last store (mutex release/acquire), and the two holders'
//! writes never overlap.
//!
//! Readers ([`Rejections::total`]) run under the breaker's lock; successive critical
//! sections are ordered by that lock, and each stripe's values are read in its modification
//! order, so a later total is never smaller than an earlier one (what the breaker relies on
//! to fold only the new rejections into the state's metrics).

#[cfg(not(loom))]
use std::cell::Cell;
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::Mutex;

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};

/// Stripes per breaker (8 bytes each): threads that reject concurrently beyond this many
/// share one `fetch_add` counter.
#[cfg(not(loom))]
pub(crate) const STRIPES: usize = 32;
#[cfg(loom)]
pub(crate) const STRIPES: usize = 2;

/// Rejection counters of one breaker.
#[derive(Debug)]
pub(crate) struct Rejections {
    stripes: [AtomicU64; STRIPES],
    shared: AtomicU64,
}

impl Default for Rejections {
    fn default() -> Self {
        Rejections {
            stripes: std::array::from_fn(|_| AtomicU64::new(0)),
            shared: AtomicU64::new(0),
        }
    }
}

impl Rejections {
    /// Counts one rejection by the current thread.
    #[inline]
    pub fn add_one(&self) {
        match current_slot() {
            Some(slot) => self.add_one_in(slot),
            None => {
                self.shared.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Counts one rejection in `slot`'s stripe. The caller holds `slot` (single writer).
    #[inline]
    fn add_one_in(&self, slot: usize) {
        let stripe = &self.stripes[slot];
        stripe.store(stripe.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Every rejection counted so far (see the module docs for why it never decreases
    /// between two reads under the breaker's lock).
    pub fn total(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .sum::<u64>()
            + self.shared.load(Ordering::Relaxed)
    }
}

// ----- slots --------------------------------------------------------------------------------

/// Slot indices handed out so far, and the ones given back by exited threads.
#[cfg(not(loom))]
struct SlotPool {
    next: AtomicUsize,
    free: Mutex<Vec<usize>>,
}

#[cfg(not(loom))]
fn pool() -> &'static SlotPool {
    static POOL: std::sync::OnceLock<SlotPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| SlotPool {
        next: AtomicUsize::new(0),
        free: Mutex::new(Vec::with_capacity(STRIPES)),
    })
}

#[cfg(not(loom))]
impl SlotPool {
    fn take(&self) -> Option<usize> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = free.pop() {
            return Some(slot);
        }
        let slot = self.next.load(Ordering::Relaxed);
        if slot < STRIPES {
            self.next.store(slot + 1, Ordering::Relaxed);
            Some(slot)
        } else {
            None
        }
    }

    fn give_back(&self, slot: usize) {
        // Capacity STRIPES, reserved up front: never reallocates here.
        self.free
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(slot);
    }
}

/// The current thread's slot, returned to the pool when the thread exits.
#[cfg(not(loom))]
struct SlotGuard(Option<usize>);

#[cfg(not(loom))]
impl Drop for SlotGuard {
    fn drop(&mut self) {
        if let Some(slot) = self.0 {
            // From now on this thread counts in the shared counter (`SLOT` has no destructor,
            // so it stays readable through the rest of the thread's teardown); only then may
            // another thread take the slot.
            let _ = SLOT.try_with(|s| s.set(Some(None)));
            pool().give_back(slot);
        }
    }
}

#[cfg(not(loom))]
thread_local! {
    /// `None` until the thread first rejects a call.
    static SLOT: Cell<Option<Option<usize>>> = const { Cell::new(None) };
    /// Holds the slot until the thread exits.
    static GUARD: Cell<Option<SlotGuard>> = const { Cell::new(None) };
}

/// The current thread's slot: `None` when every slot is held by a live thread, or while the
/// thread is being torn down.
#[cfg(not(loom))]
#[inline]
fn current_slot() -> Option<usize> {
    match SLOT.try_with(Cell::get) {
        Ok(Some(slot)) => slot,
        Ok(None) => first_slot(),
        Err(_) => None,
    }
}

#[cfg(not(loom))]
#[cold]
#[inline(never)]
fn first_slot() -> Option<usize> {
    let slot = pool().take();
    // The guard gives the slot back when this thread's thread-locals are destroyed; if it
    // cannot be registered (thread already tearing down), do not use the slot at all.
    let registered = GUARD.try_with(|g| g.set(Some(SlotGuard(slot)))).is_ok();
    let slot = if registered {
        slot
    } else {
        if let Some(s) = slot {
            pool().give_back(s);
        }
        None
    };
    let _ = SLOT.try_with(|s| s.set(Some(slot)));
    slot
}

#[cfg(loom)]
fn current_slot() -> Option<usize> {
    None
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn counts_every_rejection_across_threads_and_slot_reuse() {
        let r = std::sync::Arc::new(Rejections::default());
        // More threads than stripes, in waves, so slots are exhausted (shared counter) and
        // reused by later threads.
        for _wave in 0..3 {
            let handles: Vec<_> = (0..STRIPES + 8)
                .map(|_| {
                    let r = r.clone();
                    std::thread::spawn(move || {
                        for _ in 0..1_000 {
                            r.add_one();
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
        }
        assert_eq!(r.total(), 3 * (STRIPES as u64 + 8) * 1_000);
    }
}

/// The slot hand-off protocol under loom: a thread counts in a slot, exits (gives the slot
/// back), a second thread takes the same slot and counts on; a reader racing both, under a
/// lock, never sees the total go down, and the final total is exact.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::{Arc, Mutex as LoomMutex};

    #[test]
    fn slot_handoff_loses_nothing() {
        loom::model(|| {
            let r = Arc::new(Rejections::default());
            // The free list, as the pool holds it: the slot moves through a mutex.
            let free: Arc<LoomMutex<Vec<usize>>> = Arc::new(LoomMutex::new(Vec::new()));
            let breaker_lock = Arc::new(LoomMutex::new(0u64));

            let first = {
                let (r, free) = (r.clone(), free.clone());
                loom::thread::spawn(move || {
                    r.add_one_in(0);
                    r.add_one_in(0);
                    free.lock().unwrap().push(0);
                })
            };
            let second = {
                let (r, free) = (r.clone(), free.clone());
                loom::thread::spawn(move || {
                    let slot = loop {
                        if let Some(s) = free.lock().unwrap().pop() {
                            break s;
                        }
                        loom::thread::yield_now();
                    };
                    r.add_one_in(slot);
                })
            };
            let reader = {
                let (r, lock) = (r.clone(), breaker_lock.clone());
                loom::thread::spawn(move || {
                    for _ in 0..2 {
                        let mut folded = lock.lock().unwrap();
                        let (t, before) = (r.total(), *folded);
                        assert!(t >= before, "total went down: {t} < {before}");
                        *folded = t;
                    }
                })
            };
            first.join().unwrap();
            second.join().unwrap();
            reader.join().unwrap();
            let folded = *breaker_lock.lock().unwrap();
            assert!(r.total() >= folded);
            assert_eq!(r.total(), 3);
        });
    }
}
