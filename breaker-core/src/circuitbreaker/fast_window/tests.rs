//! Unit tests of the lock-free path (`super`).

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

/// Issue 23: every TIME publish carries a new version (the counts restart from 0, so the
/// words of two publishes differed only by it), and counts at their maximum stay out of it.
#[test]
fn time_publishes_carry_a_version_the_counts_never_reach() {
    let fast = FastWindow::default();
    // A minimum no count reaches: every outcome is below the thresholds.
    fast.publish_time(7, Totals::default(), u32::MAX, 50.0, 50.0, 0);
    let first = fast.hot.word.load(Ordering::Relaxed);
    fast.seal();
    fast.publish_time(7, Totals::default(), u32::MAX, 50.0, 50.0, 0);
    let second = fast.hot.word.load(Ordering::Relaxed);
    assert_ne!(first, second, "two publishes of equal totals, two words");
    assert_eq!(
        second >> TIME_VERSION_SHIFT,
        (first >> TIME_VERSION_SHIFT) + 1
    );
    // Failed and slow (slower than 0 ns): all four counts grow, up to COUNT_MAX.
    for _ in 0..COUNT_MAX {
        assert_eq!(fast.try_record(true, 1, 7 * SECOND, 0), Recorded::Yes);
    }
    assert_eq!(fast.try_record(true, 1, 7 * SECOND, 0), Recorded::No);
    let full = fast.hot.word.load(Ordering::Relaxed);
    assert_eq!(full >> TIME_VERSION_SHIFT, second >> TIME_VERSION_SHIFT);
    let max = COUNT_MAX as u32;
    assert_eq!(
        fast.seal(),
        Some(Sealed::Counts(Totals {
            calls: max,
            failed: max,
            slow: max,
            slow_failed: max,
        }))
    );
}
