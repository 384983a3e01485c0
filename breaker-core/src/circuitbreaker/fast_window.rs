//! The lock-free path: most outcomes of the CLOSED state recorded with one compare-and-swap
//! and no lock, in a COUNT_BASED or a TIME_BASED window, and HALF_OPEN's trial permissions
//! taken and its successes recorded the same way.
//!
//! **COUNT_BASED.** With a full count window, the thresholds checked after the last outcome
//! and nobody subscribed, an outcome whose code (failed, slow) equals the code of the
//! outcome it replaces changes neither the ring nor the totals: only the window's head
//! moves, and the verdict stays "below both thresholds". That is the common case (a service
//! that succeeds keeps succeeding). Such an outcome is recorded by moving the head in the
//! word; every other outcome goes through the machine under the lock.
//!
//! **TIME_BASED.** An outcome that ends in the second of the window's newest bucket is added
//! to the word's counts (deltas on top of the totals the machine published), if the totals
//! with it stay below the minimum number of calls or below both rate thresholds (the same
//! `f32` arithmetic as the machine's); anything else takes the lock.
//!
//! **HALF_OPEN.** The word holds the trial permissions left; taking one is one
//! compare-and-swap that decrements them. A trial call of the published HALF_OPEN state (its
//! generation) that succeeds before the `maxWaitDurationInHalfOpenState` deadline and is not
//! slow is counted without the lock:
//!
//! - *striped* (when the verdict is due at the trial window's full size, as it is unless
//!   `minimumNumberOfCalls` is below `permittedNumberOfCallsInHalfOpenState`): in the
//!   recording thread's stripe ([`TrialStripe`]), with a plain load and store, no locked
//!   instruction. Then, if no permission is left, the thread adds up the outcomes; if they
//!   complete the window it settles the verdict under the lock. Two last successes that end
//!   at once may each miss the other's store: then the verdict waits for the next locked
//!   operation (with no permission left, every call takes the lock; so do reads of the state
//!   and metrics), which adopts the stripes first and makes the verdict as of the time the
//!   last success ended, so the OPEN wait starts when Resilience4j's would.
//! - otherwise in the word's success count, by compare-and-swap, if the window stays below
//!   its minimum number of calls (no verdict due).
//!
//! Everything else takes the lock: a failure or a slow call, the outcome that brings the
//! verdict (unstriped), a call admitted by another state, no permission left (the refusal is
//! counted there), the deadline reached, a thread without a stripe of its own (striped), and
//! every operation on a HALF_OPEN state of more than [`MAX_TRIALS`] permitted calls.
//!
//! The word:
//!
//! ```text
//!  COUNT:  63                   24 23             3   2   1   0
//!         [ version (40 bit)      | head (21 bit)  | 0 | 0 | F ]
//!  TIME:   63                43 42        33 32     23 22     13 12      3   2   1   0
//!         [ version (21 bit)   | slow&failed | slow    | failed  | calls   | 0 | 1 | F ]
//!  HALF:   63                28  27  26          15 14           3   2   1   0
//!         [ version (36 bit)   | S | successes    | permits      | 1 | 0 | F ]
//! ```
//!
//! - `F` (FAST): the path is open. Only the holder of the breaker's lock sets it
//!   ([`publish_count`](FastWindow::publish_count), [`publish_time`](FastWindow::publish_time)),
//!   after the machine, with the lock held, found the conditions above true; the lock holder
//!   clears it ([`seal`](FastWindow::seal)) before anything that could change the window,
//!   the state or the config, and takes over what the lock-free updates did (the head; the
//!   counts, added to the newest bucket).
//! - `version` (COUNT, TIME and HALF): the low bits of `seq`, which every publish bumps, so
//!   a lock-free update that read the word before a seal cannot succeed after a later
//!   publish even if the head came back to the same slot, the counts (which restart from 0
//!   at every TIME publish) to the same values, or the permissions and successes to the same
//!   counts in a later HALF_OPEN state (that would take 2^40, 2^21 or 2^36 publishes
//!   between one thread's load and its CAS, each a locked operation). A TIME outcome is
//!   checked against the published totals it read after the word; its CAS succeeds only on
//!   the word of that very publish, so it never lands on later totals it was not checked
//!   against (issue 23: it used to, and a failure reaching the threshold then stayed
//!   without a verdict until some later call took the lock).
//! - HALF `S` (striped): successes go to the stripes, not the word.
//!
//! The ring and the published values are read, never written, by the lock-free path: the
//! machine writes them only between a seal and the next publish. A lock-free update reads
//! the word (acquire: what the last publish released), then what it needs, and
//! compare-and-swaps the word (release). If a seal came in between, the CAS fails (FAST is
//! clear, or the version or the counts moved) and the outcome takes the lock. If the CAS
//! succeeded, it precedes the seal in the word's order; the seal's acquire then makes the
//! update's reads happen before any write the machine makes after sealing, so they saw the
//! window as published.
//!
//! Striped trial successes are the one lock-free write outside the word: a stripe store can
//! land after a seal (the thread checked the published state before it). So the machine
//! adopts the stripes at every locked operation in HALF_OPEN, sealed path or not, counting
//! per stripe generation so that nothing is adopted twice, and after it leaves a HALF_OPEN
//! state it still adopts that state's late successes, into the state that followed.
//!
//! Rings are allocated once per power-of-two size class and reused by every later window of
//! that class (never two live windows at once: a breaker has one CLOSED window at a time, and
//! OPEN carries the very window CLOSED had), so a config change never frees memory the
//! lock-free path might read, and no allocation is made per call or per state change.

use std::sync::OnceLock;

use crate::striped::{thread_index, STRIPES};
use crate::sync::{AtomicU64, Ordering};
use crate::window::{code, new_ring, Ring, Totals};

const FAST: u64 = 1;
/// The word holds TIME_BASED counts.
const TIME: u64 = 2;
/// The word holds HALF_OPEN's trial permissions and successes.
const HALF: u64 = 4;
/// The mode bits: neither is a COUNT_BASED head.
const MODE: u64 = TIME | HALF;

const HEAD_SHIFT: u32 = 3;
const HEAD_BITS: u32 = 21;
const HEAD_MASK: u64 = (1 << HEAD_BITS) - 1;
const VERSION_SHIFT: u32 = HEAD_SHIFT + HEAD_BITS;

const COUNT_SHIFT: u32 = 3;
/// Each TIME count's bits: an outcome that would bring a count to [`COUNT_MAX`] takes the
/// lock, which adds the counts to the window and publishes again from 0 (one locked
/// operation per 1,023 lock-free outcomes in a second at most).
const COUNT_BITS: u32 = 10;
const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;
/// TIME: the version above the four counts (21 bits).
const TIME_VERSION_SHIFT: u32 = COUNT_SHIFT + 4 * COUNT_BITS;

const PERMITS_SHIFT: u32 = 3;
const TRIAL_BITS: u32 = 12;
const TRIAL_MASK: u64 = (1 << TRIAL_BITS) - 1;
const SUCCESSES_SHIFT: u32 = PERMITS_SHIFT + TRIAL_BITS;
/// HALF: trial successes go to the recording thread's stripe (see [`TrialStripe`]).
const STRIPED: u64 = 1 << (SUCCESSES_SHIFT + TRIAL_BITS);
const HALF_VERSION_SHIFT: u32 = SUCCESSES_SHIFT + TRIAL_BITS + 1;

/// A trial stripe's count: the HALF_OPEN generation above these bits, successes below.
const STRIPE_COUNT_BITS: u32 = 16;
const STRIPE_COUNT_MASK: u64 = (1 << STRIPE_COUNT_BITS) - 1;

/// The largest `permittedNumberOfCallsInHalfOpenState` (and trial minimum) the lock-free
/// HALF_OPEN path serves; a larger HALF_OPEN state takes the lock for every call.
pub(crate) const MAX_TRIALS: u32 = TRIAL_MASK as u32;

/// The largest count window the lock-free path serves (its head must fit in 21 bits);
/// larger windows always record under the lock.
pub(crate) const MAX_SIZE: usize = 1 << HEAD_BITS;

/// Size classes: rings of 1, 2, 4, ... [`MAX_SIZE`] slots.
const CLASSES: usize = HEAD_BITS as usize + 1;

#[inline]
fn head_of(w: u64) -> usize {
    ((w >> HEAD_SHIFT) & HEAD_MASK) as usize
}

#[inline]
fn with_head(w: u64, head: usize) -> u64 {
    (w & !(HEAD_MASK << HEAD_SHIFT)) | ((head as u64) << HEAD_SHIFT)
}

/// The `i`-th count of a TIME word (calls, failed, slow, slow and failed).
#[inline]
fn count_of(w: u64, i: u32) -> u32 {
    ((w >> (COUNT_SHIFT + i * COUNT_BITS)) & COUNT_MAX) as u32
}

/// Whether `a` and `b` are words of the same TIME publish, with the path open.
#[inline]
fn same_time_publish(a: u64, b: u64) -> bool {
    b & (FAST | MODE) == FAST | TIME && a >> TIME_VERSION_SHIFT == b >> TIME_VERSION_SHIFT
}

/// Whether `a` and `b` are words of the same HALF_OPEN publish, with the path open.
#[inline]
fn same_half_publish(a: u64, b: u64) -> bool {
    b & (FAST | MODE) == FAST | HALF && a >> HALF_VERSION_SHIFT == b >> HALF_VERSION_SHIFT
}

#[inline]
fn counts_of(w: u64) -> Totals {
    Totals {
        calls: count_of(w, 0),
        failed: count_of(w, 1),
        slow: count_of(w, 2),
        slow_failed: count_of(w, 3),
    }
}

/// What one outcome adds to a TIME word.
#[inline]
fn one_count(failed: bool, slow: bool) -> u64 {
    let bit = |i: u32| 1u64 << (COUNT_SHIFT + i * COUNT_BITS);
    bit(0) | (failed as u64 * bit(1)) | (slow as u64 * bit(2)) | ((failed && slow) as u64 * bit(3))
}

/// The size class of a window of `size` (1..=[`MAX_SIZE`]) calls.
#[inline]
fn class(size: usize) -> usize {
    size.next_power_of_two().trailing_zeros() as usize
}

/// Resilience4j's "below the threshold" for `count` of `calls` (`calls` > 0): its `f32`
/// rate, `count * 100 / calls`, under `threshold` (a threshold is above 0, so no count is
/// below it).
#[inline]
fn rate_below(count: u32, calls: u32, threshold: f32) -> bool {
    count == 0 || (count as f32 * 100.0f32 / calls as f32) < threshold
}

/// What a lock-free attempt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recorded {
    /// Not recorded: take the lock.
    No,
    /// Recorded.
    Yes,
    /// Recorded in a trial stripe, and it may have been the trial window's last outcome:
    /// settle the verdict under the lock.
    YesSettle,
}

/// What the lock-free updates did while the path was open, as [`FastWindow::seal`] hands it
/// to the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sealed {
    /// COUNT_BASED: the window's next slot.
    Head(usize),
    /// TIME_BASED: outcomes to add to the newest bucket.
    Counts(Totals),
    /// HALF_OPEN: the trial permissions left, and the successes (neither failed nor slow)
    /// to add to the trial window.
    Trials { permits: u32, successes: u32 },
}

/// The lock-free path's shared state (see the module docs). One per breaker, shared by the
/// breaker (which records through it) and its machine (which seals and publishes it under
/// the lock).
#[derive(Debug)]
pub(crate) struct FastWindow {
    hot: Hot,
    rings: [OnceLock<Ring>; CLASSES],
    trial_stripes: [TrialStripe; STRIPES],
}

/// HALF_OPEN trial successes of one thread (the thread whose [`thread_index`] this is): only
/// that thread writes it, with plain stores.
#[derive(Debug)]
struct TrialStripe {
    /// The generation of the HALF_OPEN state counted (above [`STRIPE_COUNT_BITS`]) and its
    /// successes counted here (below).
    successes: AtomicU64,
    /// When the latest of them ended (epoch ns), written before `successes`.
    last_end: AtomicU64,
}

/// The word and what the last publish released, on one cache line.
#[derive(Debug)]
#[repr(C, align(64))]
struct Hot {
    word: AtomicU64,
    /// Bumped by every publish (the words' versions are its low bits).
    seq: AtomicU64,
    /// `slowCallDurationThreshold` in ns.
    slow_threshold: AtomicU64,
    /// COUNT: the window's size (calls) in the low 32 bits, its ring's size class above.
    /// TIME: the newest bucket's epoch second.
    /// HALF: the HALF_OPEN state's generation.
    shape: AtomicU64,
    /// TIME: the window's calls (low 32 bits) and failed calls (high 32 bits).
    /// HALF: the trial window's calls (low 32 bits) and its minimum number of calls (high).
    calls_failed: AtomicU64,
    /// TIME: the window's slow calls (low 32 bits), the minimum number of calls (high).
    /// HALF, striped: the stripe successes the published trial window already holds.
    slow_minimum: AtomicU64,
    /// TIME: the failure-rate threshold's `f32` bits (low), the slow-call one's (high).
    thresholds: AtomicU64,
    /// HALF: the `maxWaitDurationInHalfOpenState` deadline (epoch ns; `u64::MAX` for none).
    deadline: AtomicU64,
}

impl Default for FastWindow {
    fn default() -> Self {
        FastWindow {
            hot: Hot {
                word: AtomicU64::new(0),
                seq: AtomicU64::new(0),
                slow_threshold: AtomicU64::new(u64::MAX),
                shape: AtomicU64::new(0),
                calls_failed: AtomicU64::new(0),
                slow_minimum: AtomicU64::new(0),
                thresholds: AtomicU64::new(0),
                deadline: AtomicU64::new(0),
            },
            rings: Default::default(),
            trial_stripes: std::array::from_fn(|_| TrialStripe {
                successes: AtomicU64::new(0),
                last_end: AtomicU64::new(0),
            }),
        }
    }
}

impl FastWindow {
    /// Records an outcome that took `elapsed_nanos` and ended at `end_nanos` (epoch ns), of
    /// a call admitted by the state of `generation`, without the lock, if the path is open
    /// and allows it (see the module docs).
    #[inline(always)]
    pub(crate) fn try_record(
        &self,
        failed: bool,
        elapsed_nanos: u64,
        end_nanos: u64,
        generation: u64,
    ) -> Recorded {
        let h = &self.hot;
        let w = h.word.load(Ordering::Acquire);
        if w & FAST == 0 {
            return Recorded::No;
        }
        let slow = elapsed_nanos > h.slow_threshold.load(Ordering::Relaxed);
        match w & MODE {
            0 => self.try_record_count(w, code(failed, slow)),
            TIME => self.try_record_time(w, failed, slow, end_nanos),
            _ if failed || slow => Recorded::No,
            _ => self.try_record_trial_success(w, end_nanos, generation),
        }
    }

    /// HALF_OPEN: a success of a trial call of the published state, if no verdict is due.
    #[inline(always)]
    fn try_record_trial_success(&self, mut w: u64, end_nanos: u64, generation: u64) -> Recorded {
        let h = &self.hot;
        // Read after the word: what its publish released (the CAS below fails otherwise).
        if h.shape.load(Ordering::Relaxed) != generation
            || end_nanos >= h.deadline.load(Ordering::Relaxed)
        {
            return Recorded::No;
        }
        if w & STRIPED != 0 {
            return self.record_trial_in_own_stripe(end_nanos, generation);
        }
        let calls_minimum = h.calls_failed.load(Ordering::Relaxed);
        let (calls, minimum) = (calls_minimum as u32 as u64, calls_minimum >> 32);
        loop {
            let successes = (w >> SUCCESSES_SHIFT) & TRIAL_MASK;
            if calls + successes + 1 >= minimum {
                // The verdict is due (and `successes` stays below `minimum <= MAX_TRIALS`).
                return Recorded::No;
            }
            match h.word.compare_exchange_weak(
                w,
                w + (1 << SUCCESSES_SHIFT),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Recorded::Yes,
                Err(current) if same_half_publish(w, current) => w = current,
                Err(_) => return Recorded::No,
            }
        }
    }

    /// [`record_trial_in_stripe`](Self::record_trial_in_stripe) for the calling thread. A
    /// call of its own, compiled in this crate: the thread-local index is then one load
    /// relative to the thread pointer (inlined into another crate, it is an indirect call).
    #[inline(never)]
    fn record_trial_in_own_stripe(&self, end_nanos: u64, generation: u64) -> Recorded {
        self.record_trial_in_stripe(thread_index(), end_nanos, generation)
    }

    /// HALF_OPEN, striped: the success of a trial call of the state of `generation`, checked
    /// against the published state, counted in the stripe of the thread whose index is
    /// `index` (the calling thread's; threads without a stripe take the lock). A plain load
    /// and store: no locked instruction.
    ///
    /// Then, if no trial permission is left, the trial window may be complete: the published
    /// outcomes plus every stripe's successes of this generation not yet adopted. If they
    /// reach the minimum, the verdict is settled under the lock ([`Recorded::YesSettle`]).
    /// Two last successes that end at once may each miss the other's store; then every
    /// locked operation adopts the stripes first and settles a complete window, as of the
    /// time its last success ended, before anything else (the machine's `seal_fast` and
    /// `fire_due_timers`), and with no permission left every call takes the lock.
    #[inline(always)]
    pub(crate) fn record_trial_in_stripe(
        &self,
        index: usize,
        end_nanos: u64,
        generation: u64,
    ) -> Recorded {
        let Some(stripe) = self.trial_stripes.get(index) else {
            return Recorded::No;
        };
        let tag = generation << STRIPE_COUNT_BITS;
        // Only this thread writes its stripe: no read-modify-write needed.
        let current = stripe.successes.load(Ordering::Relaxed);
        let next = if current & !STRIPE_COUNT_MASK == tag {
            current + 1
        } else {
            tag | 1
        };
        stripe.last_end.store(end_nanos, Ordering::Relaxed);
        stripe.successes.store(next, Ordering::Release);
        let h = &self.hot;
        let w = h.word.load(Ordering::Acquire);
        if w & (FAST | MODE) != FAST | HALF {
            // Closed (a lock holder is at work, or the path is shut) or no longer on
            // HALF_OPEN: the lock adopts this success, into the state that followed if this
            // one has ended.
            return Recorded::YesSettle;
        }
        if (w >> PERMITS_SHIFT) & TRIAL_MASK != 0 {
            // A permission is left, so a trial call is still to come (or, if another
            // HALF_OPEN state is published, the next locked operation adopts this success
            // into it as a late one).
            return Recorded::Yes;
        }
        self.last_trial_outcome(w, generation)
    }

    /// The end of [`record_trial_in_stripe`](Self::record_trial_in_stripe) once no
    /// permission is left: whether this success may have completed the trial window. Out of
    /// line, so that the common case saves no registers (stores the next locked
    /// instruction would wait for).
    #[cold]
    #[inline(never)]
    fn last_trial_outcome(&self, w: u64, generation: u64) -> Recorded {
        let h = &self.hot;
        if h.shape.load(Ordering::Relaxed) != generation {
            // Another HALF_OPEN state is published: this one ended, maybe before it adopted
            // this success; the lock hands it to the state that followed.
            return Recorded::YesSettle;
        }
        let calls_minimum = h.calls_failed.load(Ordering::Relaxed);
        let adopted = h.slow_minimum.load(Ordering::Relaxed) as u32;
        let (striped, _) = self.trial_stripes(generation);
        let outcomes = u64::from(calls_minimum as u32)
            + ((w >> SUCCESSES_SHIFT) & TRIAL_MASK)
            + u64::from(striped.saturating_sub(adopted));
        if outcomes >= calls_minimum >> 32 {
            Recorded::YesSettle
        } else {
            Recorded::Yes
        }
    }

    /// The trial successes of the HALF_OPEN state of `generation` counted in the stripes so
    /// far, and when the latest of them ended (epoch ns; 0 if none). Every count a stripe
    /// shows was stored after its end time.
    pub(crate) fn trial_stripes(&self, generation: u64) -> (u32, u64) {
        let tag = generation << STRIPE_COUNT_BITS;
        let mut sum = 0u32;
        let mut last_end = 0u64;
        for stripe in &self.trial_stripes {
            let v = stripe.successes.load(Ordering::Acquire);
            if v & !STRIPE_COUNT_MASK == tag {
                sum += (v & STRIPE_COUNT_MASK) as u32;
                last_end = last_end.max(stripe.last_end.load(Ordering::Relaxed));
            }
        }
        (sum, last_end)
    }

    /// HALF_OPEN: takes one trial permission of the published HALF_OPEN state at `now`
    /// (epoch ns) without the lock, returning that state's generation; `None` when the path
    /// is not open on HALF_OPEN, no permission is left or its deadline is reached (the
    /// caller takes the lock).
    #[inline(always)]
    pub(crate) fn try_acquire_trial(&self, now: u64) -> Option<u64> {
        let h = &self.hot;
        let mut w = h.word.load(Ordering::Acquire);
        if w & (FAST | MODE) != FAST | HALF {
            return None;
        }
        let generation = h.shape.load(Ordering::Relaxed);
        if now >= h.deadline.load(Ordering::Relaxed) {
            return None;
        }
        loop {
            if (w >> PERMITS_SHIFT) & TRIAL_MASK == 0 {
                return None;
            }
            match h.word.compare_exchange_weak(
                w,
                w - (1 << PERMITS_SHIFT),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(generation),
                Err(current) if same_half_publish(w, current) => w = current,
                Err(_) => return None,
            }
        }
    }

    #[inline(always)]
    fn try_record_count(&self, mut w: u64, code: u8) -> Recorded {
        let h = &self.hot;
        loop {
            // Read after the word: what the publish that set FAST released, or newer (then
            // a seal came in between and the CAS below fails).
            let shape = h.shape.load(Ordering::Relaxed);
            let size = shape as u32 as usize;
            let head = head_of(w);
            let Some(slot) = self
                .rings
                .get((shape >> 32) as usize)
                .and_then(OnceLock::get)
                .and_then(|ring| ring.get(..size))
                .and_then(|ring| ring.get(head))
            else {
                return Recorded::No;
            };
            if slot.load(Ordering::Relaxed) != code {
                return Recorded::No;
            }
            let next = if head + 1 >= size { 0 } else { head + 1 };
            match h.word.compare_exchange_weak(
                w,
                with_head(w, next),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Recorded::Yes,
                Err(current) if current & (FAST | MODE) == FAST => w = current,
                Err(_) => return Recorded::No,
            }
        }
    }

    #[inline(always)]
    fn try_record_time(&self, mut w: u64, failed: bool, slow: bool, end_nanos: u64) -> Recorded {
        let h = &self.hot;
        // Read after the word: what its publish released, or newer (then a seal came in
        // between, and the CAS below fails on the version).
        if end_nanos / 1_000_000_000 != h.shape.load(Ordering::Relaxed) {
            // A new second: the machine moves the window.
            return Recorded::No;
        }
        let calls_failed = h.calls_failed.load(Ordering::Relaxed);
        let slow_minimum = h.slow_minimum.load(Ordering::Relaxed);
        let thresholds = h.thresholds.load(Ordering::Relaxed);
        let one = one_count(failed, slow);
        loop {
            let counts = counts_of(w);
            // Every count is at most `calls`.
            if counts.calls as u64 == COUNT_MAX {
                return Recorded::No;
            }
            let calls = calls_failed as u32 + counts.calls + 1;
            let failed_calls = (calls_failed >> 32) as u32 + counts.failed + failed as u32;
            let slow_calls = slow_minimum as u32 + counts.slow + slow as u32;
            let below = calls < (slow_minimum >> 32) as u32
                || (rate_below(failed_calls, calls, f32::from_bits(thresholds as u32))
                    && rate_below(slow_calls, calls, f32::from_bits((thresholds >> 32) as u32)));
            if !below {
                return Recorded::No;
            }
            match h
                .word
                .compare_exchange_weak(w, w + one, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Recorded::Yes,
                // Another lock-free outcome of this publish: check again with its counts.
                Err(current) if same_time_publish(w, current) => w = current,
                // A seal, maybe a later publish: the totals read are no longer current.
                Err(_) => return Recorded::No,
            }
        }
    }

    /// The ring of `size`'s class, if allocated.
    #[inline]
    pub(crate) fn ring_of(&self, size: usize) -> Option<&Ring> {
        self.rings.get(class(size))?.get()
    }

    /// A ring for a window of `size` calls (at most [`MAX_SIZE`]): its class's, allocated
    /// on first use. Call with the breaker's lock held and the path sealed.
    pub(crate) fn ring(&self, size: usize) -> Ring {
        debug_assert!((1..=MAX_SIZE).contains(&size));
        self.rings[class(size)]
            .get_or_init(|| new_ring(size.next_power_of_two()))
            .clone()
    }

    /// Closes the path (call with the breaker's lock held). Returns what the lock-free
    /// updates did since it was opened, or `None` if it was closed already.
    #[inline]
    pub(crate) fn seal(&self) -> Option<Sealed> {
        let h = &self.hot;
        // Only a lock holder sets FAST, and the lock orders its store before this load: a
        // clear bit stays clear while the lock is held.
        if h.word.load(Ordering::Relaxed) & FAST == 0 {
            return None;
        }
        let w = h.word.fetch_and(!FAST, Ordering::AcqRel);
        Some(match w & MODE {
            0 => Sealed::Head(head_of(w)),
            TIME => Sealed::Counts(counts_of(w)),
            _ => Sealed::Trials {
                permits: ((w >> PERMITS_SHIFT) & TRIAL_MASK) as u32,
                successes: ((w >> SUCCESSES_SHIFT) & TRIAL_MASK) as u32,
            },
        })
    }

    /// Bumps `seq` for a publish and returns its new value (only the lock holder writes it).
    #[inline]
    fn next_seq(&self) -> u64 {
        let h = &self.hot;
        let seq = h.seq.load(Ordering::Relaxed).wrapping_add(1);
        h.seq.store(seq, Ordering::Relaxed);
        seq
    }

    /// Opens the path for a full count window of `size` calls on its class's ring, whose
    /// next slot is `head`, with calls slower than `slow_threshold_nanos` counted slow. Call
    /// with the breaker's lock held, after [`seal`](Self::seal) (or with the path never
    /// opened).
    #[inline]
    pub(crate) fn publish_count(&self, head: usize, size: usize, slow_threshold_nanos: u64) {
        debug_assert!(head < size && size <= MAX_SIZE);
        let h = &self.hot;
        debug_assert!(
            h.word.load(Ordering::Relaxed) & FAST == 0,
            "publish without seal"
        );
        let version = self.next_seq();
        h.shape
            .store(size as u64 | (class(size) as u64) << 32, Ordering::Relaxed);
        h.slow_threshold
            .store(slow_threshold_nanos, Ordering::Relaxed);
        h.word.store(
            (version << VERSION_SHIFT) | ((head as u64) << HEAD_SHIFT) | FAST,
            Ordering::Release,
        );
    }

    /// Opens the path for a time window whose newest bucket is `second` (epoch s) and whose
    /// totals are `totals`, with `minimum` calls before the rates count and the thresholds
    /// `failure_threshold` / `slow_threshold` (%); calls slower than `slow_threshold_nanos`
    /// count slow. Call as [`publish_count`](Self::publish_count).
    #[inline]
    pub(crate) fn publish_time(
        &self,
        second: u64,
        totals: Totals,
        minimum: u32,
        failure_threshold: f32,
        slow_threshold: f32,
        slow_threshold_nanos: u64,
    ) {
        let h = &self.hot;
        debug_assert!(
            h.word.load(Ordering::Relaxed) & FAST == 0,
            "publish without seal"
        );
        let version = self.next_seq();
        h.shape.store(second, Ordering::Relaxed);
        h.calls_failed.store(
            u64::from(totals.calls) | u64::from(totals.failed) << 32,
            Ordering::Relaxed,
        );
        h.slow_minimum.store(
            u64::from(totals.slow) | u64::from(minimum) << 32,
            Ordering::Relaxed,
        );
        h.thresholds.store(
            u64::from(failure_threshold.to_bits()) | u64::from(slow_threshold.to_bits()) << 32,
            Ordering::Relaxed,
        );
        h.slow_threshold
            .store(slow_threshold_nanos, Ordering::Relaxed);
        h.word.store(
            (version << TIME_VERSION_SHIFT) | TIME | FAST,
            Ordering::Release,
        );
    }

    /// Opens the path on the HALF_OPEN state of `generation`, with `permits` trial
    /// permissions left, a trial window holding `calls` outcomes, a verdict due at `minimum`
    /// calls (`calls < minimum <= MAX_TRIALS`, `permits <= MAX_TRIALS`), the
    /// `maxWaitDurationInHalfOpenState` deadline `deadline` (epoch ns, `u64::MAX` for none),
    /// and calls slower than `slow_threshold_nanos` counted slow. With `striped` (the stripe
    /// successes of this generation the trial window already holds), successes are counted
    /// in the recording thread's stripe instead of the word: only when the verdict is due at
    /// the window's full size, so that no permission is left while it is due. Call as
    /// [`publish_count`](Self::publish_count).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn publish_half(
        &self,
        generation: u64,
        permits: u32,
        calls: u32,
        minimum: u32,
        deadline: u64,
        slow_threshold_nanos: u64,
        striped: Option<u32>,
    ) {
        debug_assert!(permits <= MAX_TRIALS && calls < minimum && minimum <= MAX_TRIALS);
        let h = &self.hot;
        debug_assert!(
            h.word.load(Ordering::Relaxed) & FAST == 0,
            "publish without seal"
        );
        let version = self.next_seq();
        h.shape.store(generation, Ordering::Relaxed);
        h.calls_failed.store(
            u64::from(calls) | u64::from(minimum) << 32,
            Ordering::Relaxed,
        );
        h.deadline.store(deadline, Ordering::Relaxed);
        h.slow_threshold
            .store(slow_threshold_nanos, Ordering::Relaxed);
        h.slow_minimum
            .store(u64::from(striped.unwrap_or(0)), Ordering::Relaxed);
        let striped = if striped.is_some() { STRIPED } else { 0 };
        h.word.store(
            (version << HALF_VERSION_SHIFT)
                | striped
                | u64::from(permits) << PERMITS_SHIFT
                | HALF
                | FAST,
            Ordering::Release,
        );
    }

    /// Whether the path is open (for tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_open(&self) -> bool {
        self.hot.word.load(Ordering::Relaxed) & FAST != 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_models;
