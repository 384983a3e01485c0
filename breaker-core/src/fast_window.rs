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
//!  TIME:   63 62        48 47        33 32        18 17         3   2   1   0
//!         [ 0 | slow&failed | slow       | failed     | calls      | 0 | 1 | F ]
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
//! - COUNT and HALF `version`: the low bits of `seq`, which every publish bumps, so a
//!   lock-free update that read the word before a seal cannot succeed after a later publish
//!   even if the head came back to the same slot, or the permissions and successes to the
//!   same counts in a later HALF_OPEN state (that would take 2^40, or 2^36, publishes
//!   between one thread's load and its CAS, each a locked operation).
//! - HALF `S` (striped): successes go to the stripes, not the word.
//! - TIME: the counts restart from 0 at every publish, so a word can repeat; a publish also
//!   bumps `seq`, which a lock-free update reads before its check and again after its CAS:
//!   if it moved, the update may have been checked against older totals and the breaker
//!   checks the thresholds again under the lock.
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
const COUNT_BITS: u32 = 15;
const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;

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
    /// Recorded, but the totals it was checked against may have changed meanwhile: check
    /// the thresholds again under the lock.
    YesCheckAgain,
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
    /// Bumped by every publish (the COUNT and HALF versions are its low bits).
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
        let seq = h.seq.load(Ordering::Relaxed);
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
            if counts.calls as u64 == COUNT_MAX || counts.slow_failed as u64 == COUNT_MAX {
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
                Ok(_) => break,
                Err(current) if current & (FAST | MODE) == FAST | TIME => w = current,
                Err(_) => return Recorded::No,
            }
        }
        if h.seq.load(Ordering::Acquire) == seq {
            Recorded::Yes
        } else {
            Recorded::YesCheckAgain
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
        self.next_seq();
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
        h.word.store(TIME | FAST, Ordering::Release);
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
mod tests {
    use super::*;
    use crate::window::CountWindow;

    #[test]
    fn classes_hold_their_sizes() {
        for size in 1..=4100usize {
            let c = class(size);
            assert!(1usize << c >= size, "size {size}");
            assert!(c == 0 || 1usize << (c - 1) < size, "size {size}");
        }
        assert_eq!(class(MAX_SIZE), CLASSES - 1);
    }

    #[test]
    fn only_equal_codes_pass_and_the_head_wraps() {
        let fast = FastWindow::default();
        let rec = |failed, elapsed| fast.try_record(failed, elapsed, 0, 0) == Recorded::Yes;
        assert!(!rec(false, 0), "closed until published");
        let mut w = CountWindow::on_ring(fast.ring(3), 3);
        for failed in [false, true, false] {
            w.record(failed, false);
        }
        fast.publish_count(w.head(), 3, 1_000);
        // Ring: [ok, failed, ok], head 0.
        assert!(rec(false, 10), "ok replaces ok");
        assert!(!rec(false, 10), "ok would replace a failure");
        assert!(
            !rec(true, 2_000),
            "failed and slow replaces a plain failure"
        );
        assert!(rec(true, 999), "failure replaces failure");
        assert!(rec(false, 1_000), "1000 ns is not slower than 1000 ns");
        assert_eq!(
            fast.seal(),
            Some(Sealed::Head(0)),
            "three outcomes: back to slot 0"
        );
        assert!(!fast.is_open());
        assert!(!rec(false, 0), "sealed");
        assert_eq!(fast.seal(), None);
    }

    #[test]
    fn a_publish_invalidates_an_old_word_even_at_the_same_head() {
        let fast = FastWindow::default();
        let _w = CountWindow::on_ring(fast.ring(2), 2);
        fast.publish_count(0, 2, u64::MAX);
        let stale = fast.hot.word.load(Ordering::Relaxed);
        assert_eq!(fast.seal(), Some(Sealed::Head(0)));
        fast.publish_count(0, 2, u64::MAX);
        let now = fast.hot.word.load(Ordering::Relaxed);
        assert_eq!(head_of(stale), head_of(now));
        assert_ne!(stale, now, "the version moved");
    }

    const SECOND: u64 = 1_000_000_000;

    /// A time window published at second 100 with 8 calls, 3 failed, 1 slow; minimum 10
    /// calls; thresholds 50 % / 40 %.
    fn time_window() -> FastWindow {
        let fast = FastWindow::default();
        let totals = Totals {
            calls: 8,
            failed: 3,
            slow: 1,
            slow_failed: 0,
        };
        fast.publish_time(100, totals, 10, 50.0, 40.0, 1_000);
        fast
    }

    #[test]
    fn time_counts_add_up_within_the_published_second() {
        let fast = time_window();
        let at = 100 * SECOND + 5;
        assert_eq!(
            fast.try_record(true, 5_000, at, 0),
            Recorded::Yes,
            "9 calls < 10"
        );
        // 10 calls, 4 failed (40 %), 2 slow (20 %): below both.
        assert_eq!(fast.try_record(false, 5_000, at, 0), Recorded::Yes);
        // 11 calls, 5 failed: 45.45 % < 50 %.
        assert_eq!(fast.try_record(true, 10, at, 0), Recorded::Yes);
        // 12 calls, 6 failed: 50 % reaches the threshold: the machine must trip.
        assert_eq!(fast.try_record(true, 10, at, 0), Recorded::No);
        assert_eq!(
            fast.try_record(false, 10, 101 * SECOND, 0),
            Recorded::No,
            "next second"
        );
        assert_eq!(
            fast.try_record(false, 10, 99 * SECOND, 0),
            Recorded::No,
            "older second"
        );
        assert_eq!(
            fast.seal(),
            Some(Sealed::Counts(Totals {
                calls: 3,
                failed: 2,
                slow: 2,
                slow_failed: 1,
            }))
        );
        assert_eq!(fast.try_record(false, 10, at, 0), Recorded::No, "sealed");
    }

    #[test]
    fn time_counts_stop_before_they_overflow() {
        let fast = FastWindow::default();
        fast.publish_time(7, Totals::default(), 1, 100.0, 100.0, u64::MAX);
        for _ in 0..COUNT_MAX {
            assert_eq!(fast.try_record(false, 0, 7 * SECOND, 0), Recorded::Yes);
        }
        assert_eq!(fast.try_record(false, 0, 7 * SECOND, 0), Recorded::No);
        let Some(Sealed::Counts(t)) = fast.seal() else {
            panic!("time counts")
        };
        assert_eq!(t.calls as u64, COUNT_MAX);
    }

    /// HALF_OPEN of generation 7: 2 permissions left, 1 outcome in the trial window, the
    /// verdict at 3 calls, a deadline at 1000 ns, slow above 100 ns.
    fn half_window() -> FastWindow {
        let fast = FastWindow::default();
        fast.publish_half(7, 2, 1, 3, 1_000, 100, None);
        fast
    }

    #[test]
    fn trial_permissions_run_out_and_come_back_with_a_publish() {
        let fast = half_window();
        assert_eq!(fast.try_acquire_trial(10), Some(7));
        assert_eq!(fast.try_acquire_trial(1_000), None, "deadline reached");
        assert_eq!(fast.try_acquire_trial(999), Some(7));
        assert_eq!(fast.try_acquire_trial(10), None, "no permission left");
        assert_eq!(
            fast.seal(),
            Some(Sealed::Trials {
                permits: 0,
                successes: 0
            })
        );
        assert_eq!(fast.try_acquire_trial(10), None, "sealed");
        fast.publish_half(8, 1, 0, 1, u64::MAX, 100, None);
        assert_eq!(fast.try_acquire_trial(u64::MAX - 1), Some(8));
    }

    #[test]
    fn only_a_success_of_this_state_before_the_verdict_goes_lock_free() {
        let fast = half_window();
        assert_eq!(fast.try_record(true, 10, 10, 7), Recorded::No, "a failure");
        assert_eq!(
            fast.try_record(false, 101, 10, 7),
            Recorded::No,
            "a slow call"
        );
        assert_eq!(
            fast.try_record(false, 10, 10, 6),
            Recorded::No,
            "another state's call"
        );
        assert_eq!(
            fast.try_record(false, 10, 1_000, 7),
            Recorded::No,
            "deadline reached"
        );
        // 1 + 1 = 2 calls < 3: no verdict yet.
        assert_eq!(fast.try_record(false, 100, 999, 7), Recorded::Yes);
        // 1 + 1 + 1 = 3 calls: the verdict, under the lock.
        assert_eq!(fast.try_record(false, 10, 10, 7), Recorded::No);
        assert_eq!(fast.try_acquire_trial(10), Some(7));
        assert_eq!(
            fast.seal(),
            Some(Sealed::Trials {
                permits: 1,
                successes: 1
            })
        );
        assert_eq!(fast.try_record(false, 10, 10, 7), Recorded::No, "sealed");
    }

    /// Striped HALF_OPEN of generation 7: 2 permissions left, 1 outcome in a window of 3
    /// (the verdict at 3), none of them from stripes.
    fn striped_half_window() -> FastWindow {
        let fast = FastWindow::default();
        fast.publish_half(7, 2, 1, 3, 1_000, 100, Some(0));
        fast
    }

    #[test]
    fn striped_successes_count_per_thread_and_the_last_one_settles() {
        let fast = striped_half_window();
        assert_eq!(fast.try_acquire_trial(10), Some(7));
        // A permission is left: this success cannot complete the window.
        assert_eq!(fast.record_trial_in_stripe(0, 20, 7), Recorded::Yes);
        assert_eq!(fast.trial_stripes(7), (1, 20));
        assert_eq!(fast.try_acquire_trial(10), Some(7));
        // No permission left: 1 published + 1 striped + this one = 3 = the minimum.
        assert_eq!(fast.record_trial_in_stripe(3, 30, 7), Recorded::YesSettle);
        assert_eq!(fast.trial_stripes(7), (2, 30));
        assert_eq!(fast.trial_stripes(6), (0, 0), "another state's successes");
        // The word holds none of them, and the thread without a stripe takes the lock.
        assert_eq!(
            fast.seal(),
            Some(Sealed::Trials {
                permits: 0,
                successes: 0
            })
        );
        assert_eq!(fast.record_trial_in_stripe(STRIPES, 40, 7), Recorded::No);
    }

    #[test]
    fn a_stripe_restarts_its_count_for_a_new_half_open_state() {
        let fast = striped_half_window();
        assert_eq!(fast.record_trial_in_stripe(1, 20, 7), Recorded::Yes);
        assert_eq!(fast.record_trial_in_stripe(1, 25, 7), Recorded::Yes);
        assert_eq!(fast.trial_stripes(7), (2, 25));
        fast.seal();
        // Generation 9, 2 stripe successes already adopted: a new count from 1.
        fast.publish_half(9, 3, 2, 3, u64::MAX, 100, Some(2));
        assert_eq!(fast.record_trial_in_stripe(1, 30, 9), Recorded::Yes);
        assert_eq!(fast.trial_stripes(9), (1, 30));
        assert_eq!(
            fast.trial_stripes(7),
            (0, 0),
            "overwritten by the new state"
        );
    }

    #[test]
    fn a_striped_success_of_a_closed_path_goes_to_the_lock() {
        let fast = striped_half_window();
        fast.seal();
        // Checked before the seal, stored after it: counted, and the lock decides.
        assert_eq!(fast.record_trial_in_stripe(0, 20, 7), Recorded::YesSettle);
        assert_eq!(fast.trial_stripes(7), (1, 20));
    }

    #[test]
    fn a_later_half_open_publish_never_equals_an_earlier_word() {
        let fast = half_window();
        let stale = fast.hot.word.load(Ordering::Relaxed);
        fast.seal();
        fast.publish_half(7, 2, 1, 3, 1_000, 100, None);
        assert_ne!(
            stale,
            fast.hot.word.load(Ordering::Relaxed),
            "the version moved"
        );
        // A count word, a time word and a half word never look alike.
        fast.seal();
        let _ring = fast.ring(4);
        fast.publish_count(0, 4, 100);
        assert_eq!(
            fast.try_acquire_trial(10),
            None,
            "a count word has no permissions"
        );
        assert_eq!(fast.seal(), Some(Sealed::Head(0)));
        fast.publish_time(0, Totals::default(), 10, 50.0, 50.0, 100);
        assert_eq!(
            fast.try_acquire_trial(10),
            None,
            "a time word has no permissions"
        );
    }

    #[test]
    fn rate_below_is_resilience4js_f32_rule() {
        // 1 of 3 = 33.333332 in f32.
        assert!(!rate_below(1, 3, 33.333332));
        assert!(rate_below(1, 3, 33.333336));
        assert!(rate_below(0, 3, f32::MIN_POSITIVE));
        assert!(!rate_below(3, 3, 100.0));
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    //! The lock-free path against the machine's side of the protocol, on the real
    //! [`FastWindow`] and [`CountWindow`], with a loom mutex standing in for the breaker's
    //! lock.
    use super::*;
    use crate::sync::loom_model as model;
    use crate::sync::{Arc, Mutex};
    use crate::window::{CountWindow, FAILED};
    use loom::thread;

    /// What the breaker's lock guards here: the window, and the codes recorded under the
    /// lock, in lock order.
    struct Locked {
        window: CountWindow,
        log: Vec<u8>,
    }

    /// The machine's side of one outcome under the lock: seal, adopt the head, record,
    /// publish again.
    fn locked_record(fast: &FastWindow, locked: &Mutex<Locked>, failed: bool) {
        let mut l = crate::sync::lock(locked);
        if let Some(Sealed::Head(head)) = fast.seal() {
            l.window.set_head(head);
        }
        l.window.record(failed, false);
        l.log.push(failed as u8);
        fast.publish_count(l.window.head(), l.window.capacity(), u64::MAX);
    }

    /// One outcome as the breaker records it: lock-free if it can, else under the lock.
    /// Returns whether it went lock-free.
    fn outcome(fast: &FastWindow, locked: &Mutex<Locked>, failed: bool) -> bool {
        let lock_free = fast.try_record(failed, 0, 0, 0) == Recorded::Yes;
        if !lock_free {
            locked_record(fast, locked, failed);
        }
        lock_free
    }

    /// Seals and returns the window's head and its ring's codes, checking that the totals
    /// match the ring.
    fn settle(fast: &FastWindow, locked: &Mutex<Locked>) -> (usize, Vec<u8>, Vec<u8>) {
        let mut l = crate::sync::lock(locked);
        if let Some(Sealed::Head(head)) = fast.seal() {
            l.window.set_head(head);
        }
        let size = l.window.capacity();
        let ring = fast.ring(size);
        let codes: Vec<u8> = ring[..size]
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .collect();
        let failed = codes.iter().filter(|c| *c & FAILED != 0).count() as u32;
        assert_eq!(l.window.totals().failed, failed, "totals match the ring");
        (l.window.head(), codes, l.log.clone())
    }

    fn window_of(fast: &FastWindow, codes: &[bool]) -> Arc<Mutex<Locked>> {
        let mut w = CountWindow::on_ring(fast.ring(codes.len()), codes.len());
        for &failed in codes {
            w.record(failed, false);
        }
        fast.publish_count(w.head(), w.capacity(), u64::MAX);
        Arc::new(Mutex::new(Locked {
            window: w,
            log: Vec::new(),
        }))
    }

    /// Two threads record two outcomes each into a full window of 2 holding one success and
    /// one failure, with the path open: whatever the interleaving, every outcome moves the
    /// head exactly once and the totals match the ring.
    #[test]
    fn loom_every_outcome_moves_the_head_once() {
        model(|| {
            let fast = Arc::new(FastWindow::default());
            let locked = window_of(&fast, &[false, true]);
            let t = {
                let (fast, locked) = (fast.clone(), locked.clone());
                thread::spawn(move || {
                    outcome(&fast, &locked, false);
                    outcome(&fast, &locked, true);
                })
            };
            outcome(&fast, &locked, true);
            outcome(&fast, &locked, false);
            t.join().unwrap();
            let (head, _, _) = settle(&fast, &locked);
            assert_eq!(head, (2 + 4) % 2);
        });
    }

    /// A lock-free success races a locked failure that overwrites the very slot it reads
    /// (window of 1 holding a success). A success that went lock-free must come before the
    /// failure, so the window ends holding the failure; otherwise both took the lock and the
    /// window holds whichever came last. A stale read (a lock-free success after the
    /// failure) would leave the failure where the success belongs.
    #[test]
    fn loom_a_lock_free_outcome_never_reads_an_overwritten_slot() {
        model(|| {
            let fast = Arc::new(FastWindow::default());
            let locked = window_of(&fast, &[false]);
            let t = {
                let (fast, locked) = (fast.clone(), locked.clone());
                thread::spawn(move || outcome(&fast, &locked, false))
            };
            locked_record(&fast, &locked, true);
            let lock_free = t.join().unwrap();
            let (head, codes, log) = settle(&fast, &locked);
            assert_eq!(head, 0);
            let expected = if lock_free {
                assert_eq!(log, [1]);
                FAILED
            } else {
                assert_eq!(log.len(), 2);
                log[1]
            };
            assert_eq!(codes, [expected]);
        });
    }

    /// TIME_BASED: two threads record lock-free into the newest second while the lock
    /// holder seals, adds the counts to its window and publishes again (what a metrics read
    /// does): no outcome is lost or counted twice, whatever the interleaving, and an outcome
    /// that may have been checked against totals older than the ones it landed on says so.
    const NOW: u64 = 1_700_000_000 * 1_000_000_000;

    fn publish_time_window(fast: &FastWindow, w: &crate::window::TimeWindow) {
        fast.publish_time(w.newest_second(), w.totals(), 1_000, 50.0, 50.0, u64::MAX);
    }

    fn settle_time_window(fast: &FastWindow, w: &mut crate::window::TimeWindow) {
        if let Some(Sealed::Counts(t)) = fast.seal() {
            w.add_to_newest(t);
        }
    }

    /// One success as the breaker records it in a time window.
    fn time_outcome(fast: &FastWindow, window: &Mutex<crate::window::TimeWindow>) {
        match fast.try_record(false, 0, NOW, 0) {
            Recorded::Yes | Recorded::YesCheckAgain => {}
            Recorded::No => {
                let mut w = crate::sync::lock(window);
                settle_time_window(fast, &mut w);
                w.record(NOW, false, false);
                publish_time_window(fast, &w);
            }
            Recorded::YesSettle => panic!("a time window has no trials to settle"),
        }
    }

    /// TIME_BASED: one outcome recorded lock-free into the newest second (or under the lock
    /// if the path is sealed when it looks) while the lock holder seals, adds the counts to
    /// its window and publishes again (what a metrics read does): the outcome is neither
    /// lost nor counted twice, whatever the interleaving.
    ///
    /// One recording thread against the sealer: with two recording threads and the sealer
    /// the model did not finish in 27 minutes on the loaded 2-core machine. The race
    /// between two recording threads (a CAS on the same word, no sealer) is the next model.
    #[test]
    fn loom_time_counts_are_handed_over_exactly_once() {
        model(|| {
            let fast = Arc::new(FastWindow::default());
            let window = Arc::new(Mutex::new(crate::window::TimeWindow::new(10, NOW)));
            publish_time_window(&fast, &crate::sync::lock(&window));
            let t = {
                let (fast, window) = (fast.clone(), window.clone());
                thread::spawn(move || time_outcome(&fast, &window))
            };
            {
                let mut w = crate::sync::lock(&window);
                settle_time_window(&fast, &mut w);
                publish_time_window(&fast, &w);
            }
            t.join().unwrap();
            let mut w = crate::sync::lock(&window);
            settle_time_window(&fast, &mut w);
            assert_eq!(w.totals().calls, 1, "the outcome, once");
        });
    }

    /// HALF_OPEN: what the machine does under the lock when a trial call cannot go
    /// lock-free: seal, adopt, act, publish again. Here: take a permission if one is left
    /// (`acquire`), or record a success (`!acquire`), of the state of `generation`.
    struct Trials {
        generation: u64,
        permits: u32,
        successes: u32,
    }

    fn publish_trials(fast: &FastWindow, t: &Trials) {
        fast.publish_half(
            t.generation,
            t.permits,
            t.successes,
            2,
            u64::MAX,
            u64::MAX,
            None,
        );
    }

    fn settle_trials(fast: &FastWindow, t: &mut Trials) {
        if let Some(Sealed::Trials { permits, successes }) = fast.seal() {
            t.permits = permits;
            t.successes += successes;
        }
    }

    /// A HALF_OPEN state of generation 1 with `permits` trial permissions left and no
    /// outcome yet, published.
    fn published_trials(permits: u32) -> (Arc<FastWindow>, Arc<Mutex<Trials>>) {
        let fast = Arc::new(FastWindow::default());
        let trials = Trials {
            generation: 1,
            permits,
            successes: 0,
        };
        publish_trials(&fast, &trials);
        (fast, Arc::new(Mutex::new(trials)))
    }

    fn acquire(fast: &FastWindow, trials: &Mutex<Trials>) -> Option<u64> {
        if let Some(generation) = fast.try_acquire_trial(0) {
            return Some(generation);
        }
        let mut t = crate::sync::lock(trials);
        settle_trials(fast, &mut t);
        let granted = (t.permits > 0).then(|| {
            t.permits -= 1;
            t.generation
        });
        publish_trials(fast, &t);
        granted
    }

    /// Two threads race for the one trial permission left (and the lock holder seals and
    /// publishes again meanwhile, as any locked operation does): exactly one gets it.
    #[test]
    fn loom_one_trial_permission_goes_to_one_call() {
        model(|| {
            let (fast, trials) = published_trials(1);
            let t = {
                let (fast, trials) = (fast.clone(), trials.clone());
                thread::spawn(move || acquire(&fast, &trials).is_some())
            };
            let mine = acquire(&fast, &trials).is_some();
            let theirs = t.join().unwrap();
            assert!(mine ^ theirs, "one permission, one call ({mine}, {theirs})");
            let mut t = crate::sync::lock(&trials);
            settle_trials(&fast, &mut t);
            assert_eq!(t.permits, 0);
        });
    }

    /// A success of generation 1 recorded while the lock holder ends that HALF_OPEN state
    /// and publishes generation 2 with the same counts (so the words could look alike but
    /// for the version): the success lands in generation 1 (before the seal) or not at all
    /// lock-free, never in generation 2.
    #[test]
    fn loom_a_stale_trial_success_never_lands_in_a_later_state() {
        model(|| {
            let (fast, trials) = published_trials(0);
            let t = {
                let fast = fast.clone();
                thread::spawn(move || fast.try_record(false, 0, 0, 1) == Recorded::Yes)
            };
            let landed_in_1 = {
                let mut t = crate::sync::lock(&trials);
                settle_trials(&fast, &mut t);
                let landed = t.successes;
                // A new HALF_OPEN state, counts as generation 1 started with.
                *t = Trials {
                    generation: 2,
                    permits: 0,
                    successes: 0,
                };
                publish_trials(&fast, &t);
                landed
            };
            let lock_free = t.join().unwrap();
            let mut t = crate::sync::lock(&trials);
            settle_trials(&fast, &mut t);
            assert_eq!(t.successes, 0, "nothing of generation 1 in generation 2");
            assert_eq!(
                landed_in_1 == 1,
                lock_free,
                "a lock-free success landed in 1"
            );
        });
    }

    /// The machine's side of a striped HALF_OPEN state of generation 1 with a window of 2
    /// (the verdict at 2): permits left, outcomes in the window, stripe successes adopted.
    struct Striped {
        permits: u32,
        calls: u32,
        adopted: u32,
    }

    impl Striped {
        /// What every locked operation starts with: seal, take the permits back, adopt the
        /// stripes' new successes. Returns whether the verdict is due.
        fn seal_and_adopt(&mut self, fast: &FastWindow) -> bool {
            if let Some(Sealed::Trials { permits, successes }) = fast.seal() {
                assert_eq!(successes, 0, "striped successes never go to the word");
                self.permits = permits;
            }
            let (counted, _) = fast.trial_stripes(1);
            assert!(counted >= self.adopted, "stripe counts only grow");
            self.calls += counted - self.adopted;
            self.adopted = counted;
            self.calls >= 2
        }

        /// What it ends with: publish again while no verdict is due.
        fn publish(&self, fast: &FastWindow) {
            if self.calls < 2 {
                fast.publish_half(
                    1,
                    self.permits,
                    self.calls,
                    2,
                    u64::MAX,
                    u64::MAX,
                    Some(self.adopted),
                );
            }
        }
    }

    /// One trial call on the thread owning `stripe`: a permission (lock-free, or under the
    /// lock), then a success counted in the stripe. Returns whether it asked to settle.
    fn striped_trial(fast: &FastWindow, machine: &Mutex<Striped>, stripe: usize) -> bool {
        if fast.try_acquire_trial(0).is_none() {
            let mut m = crate::sync::lock(machine);
            m.seal_and_adopt(fast);
            assert!(m.permits > 0, "two permissions for two calls");
            m.permits -= 1;
            m.publish(fast);
        }
        match fast.record_trial_in_stripe(stripe, 0, 1) {
            Recorded::Yes => false,
            Recorded::YesSettle => true,
            other => panic!("a striped success recorded as {other:?}"),
        }
    }

    /// Striped HALF_OPEN: two trial calls on two threads succeed while the lock holder seals,
    /// adopts and publishes again (what a metrics read does). Every success is adopted
    /// exactly once, and the last one either asks to settle or is left for the next locked
    /// operation, which finds the verdict due: no interleaving loses the verdict.
    #[test]
    fn loom_striped_trial_successes_are_adopted_once_and_settled() {
        model(|| {
            let fast = Arc::new(FastWindow::default());
            let machine = Arc::new(Mutex::new(Striped {
                permits: 2,
                calls: 0,
                adopted: 0,
            }));
            crate::sync::lock(&machine).publish(&fast);
            let t = {
                let (fast, machine) = (fast.clone(), machine.clone());
                thread::spawn(move || striped_trial(&fast, &machine, 1))
            };
            {
                let mut m = crate::sync::lock(&machine);
                m.seal_and_adopt(&fast);
                m.publish(&fast);
            }
            let mine = striped_trial(&fast, &machine, 0);
            let theirs = t.join().unwrap();
            let mut m = crate::sync::lock(&machine);
            assert!(
                m.seal_and_adopt(&fast),
                "both successes are in: the verdict is due"
            );
            assert_eq!((m.calls, m.adopted), (2, 2), "each success adopted once");
            let _ = (mine, theirs);
        });
    }

    /// TIME_BASED: two threads record into the newest second at once, with the path open
    /// and nobody sealing meanwhile: both counts land, once each (a lost CAS retries or
    /// takes the lock, never drops the outcome).
    #[test]
    fn loom_two_time_outcomes_both_land() {
        model(|| {
            let fast = Arc::new(FastWindow::default());
            let window = Arc::new(Mutex::new(crate::window::TimeWindow::new(10, NOW)));
            publish_time_window(&fast, &crate::sync::lock(&window));
            let t = {
                let (fast, window) = (fast.clone(), window.clone());
                thread::spawn(move || time_outcome(&fast, &window))
            };
            time_outcome(&fast, &window);
            t.join().unwrap();
            let mut w = crate::sync::lock(&window);
            settle_time_window(&fast, &mut w);
            assert_eq!(w.totals().calls, 2, "both outcomes, once each");
        });
    }
}
