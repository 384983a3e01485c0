//! The permit semaphore behind both bulkheads: Java's `java.util.concurrent.Semaphore` as
//! Resilience4j uses it (fair or not, resizable), made async and lock-free on the hot path.
//!
//! One 64-bit word holds everything the hot path needs:
//!
//! ```text
//!  63            33 32                    1   0
//! [ total (31 bit) | available (32 bit)    | W ]
//! ```
//!
//! - `available`: free permits (`availablePermits()`).
//! - `total`: the permits the bulkhead owns (its `maxConcurrentCalls` once pending changes
//!   are done); the over-release guard keeps `available <= total`.
//! - `W`: the wait queue is not empty.
//!
//! Acquiring and releasing without waiters is one compare-and-swap on the word. The wait
//! queue (FIFO; entries are calls waiting for one permit, or a pending decrease of the limit
//! waiting for several at once) sits behind a mutex and is only touched when `W` is set or a
//! caller has to wait. Every change of `W` happens under that mutex, so a release that sees
//! `W` clear can add its permit with a plain CAS: if a waiter enqueues meanwhile, the CAS
//! fails (the word changed) and the release retries through the queue.
//!
//! Fairness is Java's: a fair semaphore never lets a caller take a permit while anyone is
//! queued; a non-fair one lets newcomers barge past the queue. Among queued entries the
//! order is always arrival order, and an entry that needs more permits than are free holds
//! the ones behind it back (as in `AbstractQueuedSynchronizer`).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use arc_swap::ArcSwap;

use crate::sync::{lock, Arc, AtomicBool, AtomicU64, Mutex, Ordering};
/// Configs are shared through `arc-swap`, which stores `std`'s `Arc` (also under loom).
type StdArc<T> = std::sync::Arc<T>;

const WAITERS: u64 = 1;
const AVAIL_MAX: u64 = u32::MAX as u64;
const TOTAL_SHIFT: u32 = 33;
/// The largest limit the word holds (Java's `Integer.MAX_VALUE`).
pub(crate) const TOTAL_MAX: u64 = (1 << 31) - 1;

#[inline]
fn available_of(w: u64) -> u64 {
    (w >> 1) & AVAIL_MAX
}
#[inline]
fn total_of(w: u64) -> u64 {
    w >> TOTAL_SHIFT
}
#[inline]
fn pack(available: u64, total: u64, waiters: bool) -> u64 {
    (total << TOTAL_SHIFT) | (available.min(AVAIL_MAX) << 1) | waiters as u64
}

/// One queued call: granted (under the queue lock) by the release that serves it.
pub(crate) struct Waiter {
    granted: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Waiter {
    fn new() -> Self {
        Waiter {
            granted: AtomicBool::new(false),
            waker: Mutex::new(None),
        }
    }
}

enum Entry<C> {
    /// A call waiting for one permit.
    Call(Arc<Waiter>),
    /// A decrease of the limit waiting until `need` permits are free at once; `target`
    /// becomes the config in force when it gets them.
    Shrink { need: u64, target: StdArc<C> },
}

impl<C> Entry<C> {
    fn need(&self) -> u64 {
        match self {
            Entry::Call(_) => 1,
            Entry::Shrink { need, .. } => *need,
        }
    }
}

struct Queue<C> {
    entries: VecDeque<Entry<C>>,
    /// How many entries are calls (the thread-pool bulkhead bounds them by `queueCapacity`).
    calls: usize,
}

/// What [`Semaphore::acquire_or_enqueue`] did.
pub(crate) enum Admission {
    /// A permit was taken at once.
    Granted,
    /// The caller is queued; poll [`WaitPermit`] to learn when it is served.
    Queued(Arc<Waiter>),
    /// The queue is at its capacity: rejected.
    Full,
}

/// A resizable FIFO semaphore whose config `C` changes together with its limit.
pub(crate) struct Semaphore<C> {
    word: AtomicU64,
    fair: bool,
    /// Fixed mode: a release beyond `total` is refused (no inflation).
    guard: AtomicBool,
    queue: Mutex<Queue<C>>,
    /// The config in force; replaced by [`resize`](Self::resize) at once or, for a decrease
    /// that has to wait, when the decrease gets its permits.
    config: ArcSwap<C>,
}

impl<C> Semaphore<C> {
    /// `permits` free permits (at most [`TOTAL_MAX`]); `guard`: refuse over-releases.
    pub(crate) fn new(permits: u64, fair: bool, guard: bool, config: StdArc<C>) -> Self {
        let permits = permits.min(TOTAL_MAX);
        Semaphore {
            word: AtomicU64::new(pack(permits, permits, false)),
            fair,
            guard: AtomicBool::new(guard),
            queue: Mutex::new(Queue {
                entries: VecDeque::new(),
                calls: 0,
            }),
            config: ArcSwap::new(config),
        }
    }

    /// The config in force.
    #[inline]
    pub(crate) fn config(&self) -> arc_swap::Guard<StdArc<C>> {
        self.config.load()
    }

    /// The config in force, as an `Arc`.
    pub(crate) fn config_full(&self) -> StdArc<C> {
        self.config.load_full()
    }

    /// Free permits (`availablePermits()`).
    pub(crate) fn available(&self) -> u64 {
        available_of(self.word.load(Ordering::Acquire))
    }

    /// Whether a decrease of the limit is waiting for permits.
    pub(crate) fn is_shrink_pending(&self) -> bool {
        lock(&self.queue)
            .entries
            .iter()
            .any(|e| matches!(e, Entry::Shrink { .. }))
    }

    /// Calls waiting in the queue.
    pub(crate) fn queued_calls(&self) -> usize {
        lock(&self.queue).calls
    }

    /// Takes one permit if one is free and (fair) nobody is queued; never waits. One CAS;
    /// a rejection writes nothing.
    #[inline]
    pub(crate) fn try_acquire(&self) -> bool {
        let mut w = self.word.load(Ordering::Acquire);
        loop {
            if (self.fair && w & WAITERS != 0) || available_of(w) == 0 {
                return false;
            }
            match self.word.compare_exchange_weak(
                w,
                w - (1 << 1),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => w = now,
            }
        }
    }

    /// Gives `n` permits back, serving queued entries first. Returns `false` if the
    /// over-release guard refused them (fixed mode: the bulkhead already holds every permit
    /// it owns).
    #[inline]
    pub(crate) fn release(&self, n: u64) -> bool {
        let guard = self.guard.load(Ordering::Relaxed);
        let mut w = self.word.load(Ordering::Acquire);
        loop {
            if w & WAITERS != 0 {
                return self.release_slow(n);
            }
            let (a, t) = (available_of(w), total_of(w));
            let add = if guard { n.min(t.saturating_sub(a)) } else { n };
            if add == 0 {
                return n == 0;
            }
            let new = pack(a + add, t, false);
            match self
                .word
                .compare_exchange_weak(w, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return add == n,
                Err(now) => w = now,
            }
        }
    }

    #[cold]
    fn release_slow(&self, n: u64) -> bool {
        let mut wake = Vec::new();
        let accepted = {
            let mut q = lock(&self.queue);
            let guard = self.guard.load(Ordering::Relaxed);
            self.settle(&mut q, n, 0, guard, &mut wake)
        };
        wake_all(wake);
        accepted
    }

    /// Under the queue lock: adds `add` free permits (guarded) and `grow` owned ones, then
    /// grants queued entries from the head while they fit. Returns whether all of `add` was
    /// accepted.
    fn settle(
        &self,
        q: &mut Queue<C>,
        add: u64,
        grow: u64,
        guard: bool,
        wake: &mut Vec<Waker>,
    ) -> bool {
        loop {
            let w = self.word.load(Ordering::Acquire);
            let t0 = (total_of(w) + grow).min(TOTAL_MAX);
            let a0 = available_of(w) + grow;
            let added = if guard {
                add.min(t0.saturating_sub(a0))
            } else {
                add
            };
            let (mut a, mut t) = (a0 + added, t0);
            let mut served = 0;
            for e in &q.entries {
                let need = e.need();
                if need > a {
                    break;
                }
                a -= need;
                if let Entry::Shrink { .. } = e {
                    t -= need;
                }
                served += 1;
            }
            let new = pack(a, t, q.entries.len() > served);
            if self
                .word
                .compare_exchange(w, new, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                for _ in 0..served {
                    match q.entries.pop_front() {
                        Some(Entry::Call(waiter)) => {
                            q.calls -= 1;
                            waiter.granted.store(true, Ordering::Release);
                            if let Some(w) = lock(&waiter.waker).take() {
                                wake.push(w);
                            }
                        }
                        Some(Entry::Shrink { target, .. }) => self.config.store(target),
                        None => {}
                    }
                }
                return added == add;
            }
        }
    }

    /// Takes `1` permit now if the rules allow it, else queues the caller, unless `limit`
    /// calls already wait (the thread-pool bulkhead's `queueCapacity`).
    pub(crate) fn acquire_or_enqueue(&self, limit: Option<usize>) -> Admission {
        let mut q = lock(&self.queue);
        loop {
            let w = self.word.load(Ordering::Acquire);
            if available_of(w) >= 1 && (!self.fair || q.entries.is_empty()) {
                if self
                    .word
                    .compare_exchange(w, w - (1 << 1), Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return Admission::Granted;
                }
                continue;
            }
            if limit.is_some_and(|l| q.calls >= l) {
                return Admission::Full;
            }
            if self
                .word
                .compare_exchange(w, w | WAITERS, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                let waiter = Arc::new(Waiter::new());
                q.entries.push_back(Entry::Call(waiter.clone()));
                q.calls += 1;
                return Admission::Queued(waiter);
            }
        }
    }

    /// Takes `waiter` out of the queue (it gives up or is dropped). Returns `true` if it had
    /// already been granted its permit, which the caller then owns.
    pub(crate) fn cancel(&self, waiter: &Arc<Waiter>) -> bool {
        let mut wake = Vec::new();
        let granted = {
            let mut q = lock(&self.queue);
            if waiter.granted.load(Ordering::Acquire) {
                true
            } else {
                if let Some(i) = q
                    .entries
                    .iter()
                    .position(|e| matches!(e, Entry::Call(w) if Arc::ptr_eq(w, waiter)))
                {
                    q.entries.remove(i);
                    q.calls -= 1;
                }
                // The entries behind it may fit now; the W bit follows the queue.
                self.settle(&mut q, 0, 0, false, &mut wake);
                false
            }
        };
        wake_all(wake);
        granted
    }

    /// Changes the limit to `limit` permits (at most [`TOTAL_MAX`]; Resilience4j's
    /// `changeConfig`): an increase adds permits at once; a decrease takes the difference as
    /// soon as that many are free at the same time, queued in arrival order (a fair semaphore
    /// then admits nobody until it is done; a non-fair one lets calls barge). `target`
    /// becomes the config in force when the change is done. A change made while an earlier
    /// decrease still waits replaces it. `guard` sets the over-release guard from now on.
    ///
    /// The difference is computed under the queue lock from the permits the semaphore owns
    /// (`total`, which a waiting decrease has not lowered yet), never from a config read
    /// before: two concurrent changes apply one after the other and the last one's `limit`
    /// is the limit (issue 23: computing both from the same old config applied both
    /// differences, and the limit drifted for good).
    pub(crate) fn resize_to(&self, limit: u64, target: StdArc<C>, guard: bool) {
        let mut wake = Vec::new();
        {
            let mut q = lock(&self.queue);
            self.guard.store(guard, Ordering::Relaxed);
            q.entries.retain(|e| !matches!(e, Entry::Shrink { .. }));
            let owned = total_of(self.word.load(Ordering::Acquire));
            let delta = limit.min(TOTAL_MAX) as i64 - owned as i64;
            if delta >= 0 {
                self.config.store(target);
                self.settle(&mut q, 0, delta as u64, guard, &mut wake);
            } else {
                let need = delta.unsigned_abs();
                loop {
                    let w = self.word.load(Ordering::Acquire);
                    let (a, t) = (available_of(w), total_of(w));
                    if a >= need && (!self.fair || q.entries.is_empty()) {
                        let new = pack(a - need, t.saturating_sub(need), w & WAITERS != 0);
                        if self
                            .word
                            .compare_exchange(w, new, Ordering::AcqRel, Ordering::Acquire)
                            .is_ok()
                        {
                            self.config.store(target);
                            break;
                        }
                        continue;
                    }
                    if self
                        .word
                        .compare_exchange(w, w | WAITERS, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                    {
                        q.entries.push_back(Entry::Shrink { need, target });
                        break;
                    }
                }
                // Removing an earlier decrease may have let queued calls through.
                self.settle(&mut q, 0, 0, guard, &mut wake);
            }
        }
        wake_all(wake);
    }
}

fn wake_all(wake: Vec<Waker>) {
    for w in wake {
        w.wake();
    }
}

/// Waits for a queued caller's permit. Dropping it before it completes takes the caller out
/// of the queue, and gives the permit back if it had been granted meanwhile: a waiter that
/// gives up never consumes a permit.
pub(crate) struct WaitPermit<'a, C> {
    semaphore: &'a Semaphore<C>,
    waiter: Option<Arc<Waiter>>,
}

impl<'a, C> WaitPermit<'a, C> {
    pub(crate) fn new(semaphore: &'a Semaphore<C>, waiter: Arc<Waiter>) -> Self {
        WaitPermit {
            semaphore,
            waiter: Some(waiter),
        }
    }

    /// Stops waiting: `true` if the permit was granted anyway (the caller owns it now).
    pub(crate) fn give_up(&mut self) -> bool {
        match self.waiter.take() {
            Some(w) => self.semaphore.cancel(&w),
            None => false,
        }
    }
}

impl<C> Future for WaitPermit<'_, C> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(waiter) = &self.waiter else {
            return Poll::Ready(());
        };
        if waiter.granted.load(Ordering::Acquire) {
            self.waiter = None;
            return Poll::Ready(());
        }
        *lock(&waiter.waker) = Some(cx.waker().clone());
        // Granted between the check and the registration: the granter found no waker.
        if waiter.granted.load(Ordering::Acquire) {
            self.waiter = None;
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl<C> Drop for WaitPermit<'_, C> {
    fn drop(&mut self) {
        if self.give_up() {
            self.semaphore.release(1);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn sem(permits: u64, fair: bool) -> Semaphore<u64> {
        Semaphore::new(permits, fair, true, StdArc::new(permits))
    }

    /// A waker that does nothing (`Waker::noop` is newer than the MSRV).
    fn noop_waker() -> Waker {
        struct Noop;
        impl std::task::Wake for Noop {
            fn wake(self: std::sync::Arc<Self>) {}
        }
        Waker::from(std::sync::Arc::new(Noop))
    }

    fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
        let waker = noop_waker();
        Pin::new(f).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn guard_refuses_over_release_and_exact_mode_inflates() {
        let s = sem(2, true);
        assert!(s.try_acquire());
        assert!(s.release(1));
        assert!(!s.release(1), "nothing in flight");
        assert_eq!(s.available(), 2);
        let exact = Semaphore::new(2, true, false, StdArc::new(2u64));
        assert!(exact.release(1));
        assert_eq!(exact.available(), 3);
    }

    #[test]
    fn queued_waiters_are_served_in_arrival_order() {
        let s = sem(1, true);
        assert!(s.try_acquire());
        let Admission::Queued(a) = s.acquire_or_enqueue(None) else {
            panic!("queued")
        };
        let Admission::Queued(b) = s.acquire_or_enqueue(None) else {
            panic!("queued")
        };
        let (mut wa, mut wb) = (WaitPermit::new(&s, a), WaitPermit::new(&s, b));
        assert!(poll_once(&mut wa).is_pending());
        assert!(poll_once(&mut wb).is_pending());
        assert!(!s.try_acquire(), "fair: nobody barges past the queue");
        s.release(1);
        assert!(poll_once(&mut wb).is_pending(), "b arrived second");
        assert!(poll_once(&mut wa).is_ready());
        s.release(1);
        assert!(poll_once(&mut wb).is_ready());
        s.release(1);
        assert_eq!(s.available(), 1);
    }

    #[test]
    fn a_dropped_waiter_never_consumes_a_permit() {
        let s = sem(1, true);
        assert!(s.try_acquire());
        let Admission::Queued(a) = s.acquire_or_enqueue(None) else {
            panic!("queued")
        };
        let Admission::Queued(b) = s.acquire_or_enqueue(None) else {
            panic!("queued")
        };
        drop(WaitPermit::new(&s, a)); // gives up before being served
        let mut wb = WaitPermit::new(&s, b);
        s.release(1);
        assert!(poll_once(&mut wb).is_ready(), "b moved up");
        s.release(1);
        // Granted, then dropped before it was polled: the permit comes back.
        let Admission::Granted = s.acquire_or_enqueue(None) else {
            panic!("free")
        };
        let Admission::Queued(c) = s.acquire_or_enqueue(None) else {
            panic!("queued")
        };
        let wc = WaitPermit::new(&s, c);
        s.release(1);
        drop(wc);
        assert_eq!(s.available(), 1);
        assert_eq!(s.queued_calls(), 0);
    }

    #[test]
    fn queue_limit_rejects() {
        let s = sem(1, true);
        assert!(s.try_acquire());
        let Admission::Queued(_a) = s.acquire_or_enqueue(Some(1)) else {
            panic!("queued")
        };
        assert!(matches!(s.acquire_or_enqueue(Some(1)), Admission::Full));
    }

    #[test]
    fn a_decrease_waits_for_its_permits_and_blocks_a_fair_queue() {
        let s = sem(3, true);
        for _ in 0..3 {
            assert!(s.try_acquire());
        }
        s.resize_to(1, StdArc::new(1), true);
        assert!(s.is_shrink_pending());
        assert_eq!(**s.config(), 3);
        s.release(1);
        assert_eq!(s.available(), 1);
        assert!(!s.try_acquire(), "fair: the decrease is queued first");
        s.release(1);
        assert!(!s.is_shrink_pending());
        assert_eq!(**s.config(), 1);
        assert_eq!(s.available(), 0);
        s.release(1);
        assert_eq!(s.available(), 1);
        assert!(!s.release(1), "the limit is 1 now");
    }

    #[test]
    fn a_later_change_replaces_a_waiting_decrease() {
        let s = sem(3, false);
        for _ in 0..3 {
            assert!(s.try_acquire());
        }
        s.resize_to(1, StdArc::new(1), true);
        s.resize_to(4, StdArc::new(4), true);
        assert!(!s.is_shrink_pending());
        assert_eq!(**s.config(), 4);
        assert_eq!(s.available(), 1);
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::sync::loom_model as model;
    use loom::sync::atomic::AtomicUsize;
    use loom::thread;

    /// Two callers and one queued waiter share one permit: never two in flight, every permit
    /// returned, the queue empty and its bit clear at the end.
    #[test]
    fn loom_one_permit_three_callers() {
        model(|| {
            let s = Arc::new(Semaphore::new(1, true, true, StdArc::new(())));
            let in_flight = Arc::new(AtomicUsize::new(0));
            let caller = |s: Arc<Semaphore<()>>, in_flight: Arc<AtomicUsize>| {
                move || {
                    if s.try_acquire() {
                        assert_eq!(in_flight.fetch_add(1, Ordering::SeqCst), 0);
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                        assert!(s.release(1));
                    }
                }
            };
            let t1 = thread::spawn(caller(s.clone(), in_flight.clone()));
            let t2 = {
                let (s, in_flight) = (s.clone(), in_flight.clone());
                thread::spawn(move || {
                    match s.acquire_or_enqueue(None) {
                        Admission::Granted => {}
                        Admission::Queued(w) => loom::future::block_on(WaitPermit::new(&s, w)),
                        Admission::Full => unreachable!(),
                    }
                    assert_eq!(in_flight.fetch_add(1, Ordering::SeqCst), 0);
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    assert!(s.release(1));
                })
            };
            caller(s.clone(), in_flight.clone())();
            t1.join().unwrap();
            t2.join().unwrap();
            assert_eq!(s.available(), 1);
            assert_eq!(s.word.load(Ordering::SeqCst) & WAITERS, 0);
            assert_eq!(s.queued_calls(), 0);
        });
    }

    /// A queued waiter dropped while the holder releases: the permit is never lost, whether
    /// the release grants it to the waiter first or the waiter leaves first.
    #[test]
    fn loom_cancel_races_release() {
        model(|| {
            let s = Arc::new(Semaphore::new(1, true, true, StdArc::new(())));
            assert!(s.try_acquire());
            let Admission::Queued(w) = s.acquire_or_enqueue(None) else {
                panic!("queued")
            };
            let t = {
                let s = s.clone();
                thread::spawn(move || drop(WaitPermit::new(&s, w)))
            };
            assert!(s.release(1));
            t.join().unwrap();
            assert_eq!(s.available(), 1);
            assert_eq!(s.word.load(Ordering::SeqCst) & WAITERS, 0);
        });
    }

    /// A non-fair barging acquire races a release into a queue holding a decrease: the
    /// decrease completes exactly once and the permit count stays consistent.
    #[test]
    fn loom_barging_and_shrink() {
        model(|| {
            let s = Arc::new(Semaphore::new(2, false, true, StdArc::new(2u32)));
            assert!(s.try_acquire());
            assert!(s.try_acquire());
            s.resize_to(1, StdArc::new(1), true);
            let t = {
                let s = s.clone();
                thread::spawn(move || {
                    if s.try_acquire() {
                        assert!(s.release(1));
                    }
                })
            };
            assert!(s.release(1));
            t.join().unwrap();
            assert!(s.release(1));
            assert_eq!(**s.config(), 1);
            assert_eq!(s.available(), 1);
            assert_eq!(total_of(s.word.load(Ordering::SeqCst)), 1);
        });
    }
}
