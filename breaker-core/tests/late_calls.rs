//! Calls that outlive the state that admitted them (issue #9, part 1).
//!
//! By default a late call (admitted while CLOSED, or by an earlier HALF_OPEN state) that
//! finishes while a later HALF_OPEN state runs its trial calls is published but neither
//! decides HALF_OPEN nor frees a trial permit, and HALF_OPEN never has more than
//! `permittedNumberOfCallsInHalfOpenState` of its own trial calls in flight. With
//! `exact_resilience4j(true)` Resilience4j's rule applies.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use breaker_core::{
    CircuitBreaker, CircuitBreakerConfig, CircuitBreakerConfigBuilder, ErrorCatalog, EventKind,
    ManualClock, Outcome, Permit, State,
};
use proptest::prelude::*;

#[derive(Debug)]
struct BusinessException;

fn clock() -> ManualClock {
    ManualClock::at_epoch_millis(1_700_000_000_000)
}

/// The issue's config: window 2, minimum 2, one trial call, 100 ms open wait.
fn issue_config(clock: &ManualClock) -> CircuitBreakerConfigBuilder {
    CircuitBreakerConfig::builder()
        .sliding_window_size(2)
        .minimum_number_of_calls(2)
        .permitted_number_of_calls_in_half_open_state(1)
        .wait_duration_in_open_state(Duration::from_millis(100))
        .clock(Arc::new(clock.clone()))
}

fn with_ignore_list(b: CircuitBreakerConfigBuilder) -> CircuitBreakerConfig {
    b.error_catalog(ErrorCatalog::new().register_type::<BusinessException>("BusinessException"))
        .ignore_exceptions(["BusinessException"])
        .build()
        .unwrap()
}

fn events(cb: &CircuitBreaker) -> Arc<Mutex<Vec<EventKind>>> {
    let seen: Arc<Mutex<Vec<EventKind>>> = Arc::default();
    let sink = seen.clone();
    cb.subscribe(move |e| sink.lock().unwrap().push(e.kind.clone()));
    seen
}

/// Issue input 1: call A admitted in CLOSED ends with an ignored error while trial B of the
/// next HALF_OPEN is in flight. Returns whether a second trial call was then admitted.
fn ignored_late_call_then_acquire(exact: bool) -> (bool, Vec<EventKind>) {
    let clock = clock();
    let cb = CircuitBreaker::new(
        "issue-9-input-1",
        with_ignore_list(issue_config(&clock).exact_resilience4j(exact)),
    );
    let a = cb.try_acquire_permission().unwrap();
    cb.try_acquire_permission().unwrap().on_error();
    cb.try_acquire_permission().unwrap().on_error();
    assert_eq!(cb.state(), State::Open);
    clock.advance(Duration::from_millis(150));
    let b = cb.try_acquire_permission().expect("trial B");
    assert_eq!(cb.state(), State::HalfOpen);
    assert_eq!(b.admitted_in(), State::HalfOpen);
    assert_eq!(a.admitted_in(), State::Closed);
    let seen = events(&cb);
    let outcome = cb.config().classify_error(&BusinessException);
    assert_eq!(outcome, Outcome::Ignored);
    a.record(outcome);
    let second = cb.try_acquire_permission().is_ok();
    drop(b);
    let seen = seen.lock().unwrap().clone();
    (second, seen)
}

#[test]
fn an_ignored_late_call_frees_no_trial_permit() {
    let (second, seen) = ignored_late_call_then_acquire(false);
    assert!(!second, "one trial call permitted, B still in flight");
    assert!(
        matches!(seen[0], EventKind::IgnoredError { .. }),
        "the late call's event is still published: {seen:?}"
    );
    assert_eq!(seen[1], EventKind::NotPermitted);
}

#[test]
fn an_ignored_late_call_frees_a_trial_permit_in_exact_mode() {
    let (second, _) = ignored_late_call_then_acquire(true);
    assert!(second, "Resilience4j admits a second trial call here");
}

/// Issue input 2: trial H of one HALF_OPEN state hangs past `maxWaitDurationInHalfOpenState`,
/// the breaker reopens, trial T of the next HALF_OPEN is admitted, then H succeeds.
fn late_trial_success(exact: bool) -> (CircuitBreaker, Permit<'static>, Vec<EventKind>) {
    let clock = clock();
    let config = issue_config(&clock)
        .max_wait_duration_in_half_open_state(Duration::from_secs(1))
        .exact_resilience4j(exact)
        .build()
        .unwrap();
    let cb: &'static CircuitBreaker =
        Box::leak(Box::new(CircuitBreaker::new("issue-9-input-2", config)));
    cb.try_acquire_permission().unwrap().on_error();
    cb.try_acquire_permission().unwrap().on_error();
    clock.advance(Duration::from_millis(150));
    let h = cb.try_acquire_permission().expect("trial H");
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        cb.state(),
        State::Open,
        "maxWaitDurationInHalfOpenState expired"
    );
    clock.advance(Duration::from_millis(101));
    let t = cb.try_acquire_permission().expect("trial T");
    assert_eq!(t.admitted_in(), State::HalfOpen);
    assert_ne!(t.episode(), h.episode());
    let seen = events(cb);
    h.on_success();
    let seen = seen.lock().unwrap().clone();
    (cb.clone(), t, seen)
}

#[test]
fn a_late_trial_call_does_not_decide_the_next_half_open() {
    let (cb, t, seen) = late_trial_success(false);
    assert_eq!(
        cb.state(),
        State::HalfOpen,
        "T, the only trial, is in flight"
    );
    assert!(matches!(seen[..], [EventKind::Success { .. }]), "{seen:?}");
    assert_eq!(cb.metrics().number_of_buffered_calls, 0);
    assert!(
        cb.try_acquire_permission().is_err(),
        "T holds the only permit"
    );
    t.on_success();
    assert_eq!(cb.state(), State::Closed, "T decides");
}

#[test]
fn a_late_trial_call_decides_the_next_half_open_in_exact_mode() {
    let (cb, t, _) = late_trial_success(true);
    assert_eq!(
        cb.state(),
        State::Closed,
        "Resilience4j closes while T is in flight"
    );
    drop(t);
}

#[test]
fn a_late_release_frees_no_trial_permit() {
    for exact in [false, true] {
        let clock = clock();
        let cb = CircuitBreaker::new(
            "late-release",
            issue_config(&clock)
                .exact_resilience4j(exact)
                .build()
                .unwrap(),
        );
        let a = cb.try_acquire_permission().unwrap();
        cb.try_acquire_permission().unwrap().on_error();
        cb.try_acquire_permission().unwrap().on_error();
        clock.advance(Duration::from_millis(150));
        let _b = cb.try_acquire_permission().expect("trial B");
        a.release();
        assert_eq!(cb.try_acquire_permission().is_ok(), exact, "exact: {exact}");
    }
}

#[test]
fn a_trial_call_of_the_current_half_open_still_frees_its_permit() {
    let clock = clock();
    let cb = CircuitBreaker::new("own-release", with_ignore_list(issue_config(&clock)));
    cb.try_acquire_permission().unwrap().on_error();
    cb.try_acquire_permission().unwrap().on_error();
    clock.advance(Duration::from_millis(150));
    cb.try_acquire_permission().unwrap().release();
    let b = cb
        .try_acquire_permission()
        .expect("released permit is back");
    b.record(cb.config().classify_error(&BusinessException));
    cb.try_acquire_permission()
        .expect("ignored trial call's permit is back")
        .on_success();
    assert_eq!(cb.state(), State::Closed);
}

#[test]
fn late_calls_still_count_in_closed_and_open() {
    // Resilience4j's rule outside HALF_OPEN, in the default mode too.
    let clock = clock();
    let cb = CircuitBreaker::new("late-closed-open", issue_config(&clock).build().unwrap());
    let early = cb.try_acquire_permission().unwrap();
    let late_into_closed = cb.try_acquire_permission().unwrap();
    cb.try_acquire_permission().unwrap().on_error();
    cb.try_acquire_permission().unwrap().on_error();
    assert_eq!(cb.state(), State::Open);
    early.on_success();
    assert_eq!(
        cb.metrics().number_of_buffered_calls,
        2,
        "recorded in the window OPEN carries"
    );
    cb.transition_to_closed_state().unwrap();
    late_into_closed.on_error();
    assert_eq!(cb.metrics().number_of_failed_calls, 1, "recorded in CLOSED");
}

// ----- many threads --------------------------------------------------------------------------

#[derive(Default)]
struct Episode {
    /// Trial permits of this HALF_OPEN episode taken and not yet reported.
    in_flight: u32,
    most_in_flight: u32,
    /// Successes and failures of its trial calls about to be (or already) recorded.
    outcomes_started: u32,
}

/// Many threads through many trips and recoveries, calls of random length, every kind of
/// outcome: no HALF_OPEN episode ever has more of its own trial calls in flight than
/// permitted, and each HALF_OPEN is decided only after enough of its own trial calls
/// reported (a late call never decides it).
#[test]
fn half_open_admits_and_is_decided_only_by_its_own_trial_calls_under_contention() {
    const THREADS: usize = 16;
    const PERMITTED: u32 = 3;
    const MINIMUM: u32 = 2; // min(minimumNumberOfCalls, permitted) outcomes decide
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(4)
        .minimum_number_of_calls(MINIMUM as i64)
        .permitted_number_of_calls_in_half_open_state(PERMITTED as i64)
        .wait_duration_in_open_state(Duration::from_millis(2))
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("late-call-stress", config);
    let episodes: Arc<Mutex<HashMap<u64, Episode>>> = Arc::default();
    let decided_early: Arc<Mutex<Vec<String>>> = Arc::default();
    let half_open_decisions = Arc::new(Mutex::new(0u32));
    {
        // Events arrive in production order, so counting transitions gives the episode.
        let (episodes, decided_early, decisions) = (
            episodes.clone(),
            decided_early.clone(),
            half_open_decisions.clone(),
        );
        let current = Mutex::new(0u64);
        cb.subscribe(move |e| {
            if let EventKind::StateTransition { from, to } = e.kind {
                let mut g = current.lock().unwrap();
                if from == State::HalfOpen {
                    *decisions.lock().unwrap() += 1;
                    let started = episodes
                        .lock()
                        .unwrap()
                        .get(&g)
                        .map_or(0, |ep| ep.outcomes_started);
                    if started < MINIMUM {
                        decided_early.lock().unwrap().push(format!(
                            "episode {g}: HALF_OPEN -> {to} after {started} of its outcomes"
                        ));
                    }
                }
                *g += 1;
            }
        });
    }
    let stop = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(THREADS + 1));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (cb, episodes, stop, barrier) =
                (cb.clone(), episodes.clone(), stop.clone(), barrier.clone());
            thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(t as u64);
                barrier.wait();
                while !stop.load(Ordering::Relaxed) {
                    let Ok(p) = cb.try_acquire_permission() else {
                        thread::yield_now();
                        continue;
                    };
                    let trial = (p.admitted_in() == State::HalfOpen).then(|| p.episode());
                    if let Some(g) = trial {
                        let mut eps = episodes.lock().unwrap();
                        let ep = eps.entry(g).or_default();
                        ep.in_flight += 1;
                        ep.most_in_flight = ep.most_in_flight.max(ep.in_flight);
                    }
                    // Calls last from nothing to a few ms, so many outlive their state.
                    match rng.u8(0..4) {
                        0 => {}
                        1 => thread::yield_now(),
                        _ => thread::sleep(Duration::from_micros(rng.u64(100..4_000))),
                    }
                    let kind = rng.u8(0..10);
                    if let Some(g) = trial {
                        let mut eps = episodes.lock().unwrap();
                        let ep = eps.get_mut(&g).unwrap();
                        ep.in_flight -= 1;
                        if kind < 8 {
                            ep.outcomes_started += 1;
                        }
                    }
                    match kind {
                        0..=4 => p.on_error(),
                        5..=7 => p.on_success(),
                        8 => p.on_ignored_error(),
                        _ => p.release(),
                    }
                }
            })
        })
        .collect();
    barrier.wait();
    let deadline = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < deadline && *half_open_decisions.lock().unwrap() < 400 {
        thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().unwrap();
    }
    let eps = episodes.lock().unwrap();
    let crowded: Vec<(u64, u32)> = eps
        .iter()
        .filter(|(_, ep)| ep.most_in_flight > PERMITTED)
        .map(|(g, ep)| (*g, ep.most_in_flight))
        .collect();
    assert!(
        crowded.is_empty(),
        "HALF_OPEN episodes with more trial calls in flight than permitted: {crowded:?}"
    );
    let early = decided_early.lock().unwrap();
    assert!(early.is_empty(), "decided by late calls: {early:?}");
    let decisions = *half_open_decisions.lock().unwrap();
    assert!(
        decisions >= 20 && eps.len() >= 20,
        "too few HALF_OPEN states to mean anything: {decisions} decisions, {} episodes",
        eps.len()
    );
}

// ----- property test ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Acquire,
    /// Finish the held call at this index (modulo) with this outcome.
    Finish(usize, Finish),
    Advance(u64),
    /// A manual transition to HALF_OPEN (from OPEN or HALF_OPEN): a new HALF_OPEN episode.
    HalfOpen,
}

#[derive(Debug, Clone, Copy)]
enum Finish {
    Success,
    Failure,
    Ignore,
    Release,
    Drop,
}

fn op() -> impl Strategy<Value = Op> {
    let finish = prop_oneof![
        Just(Finish::Success),
        Just(Finish::Failure),
        Just(Finish::Ignore),
        Just(Finish::Release),
        Just(Finish::Drop),
    ];
    prop_oneof![
        4 => Just(Op::Acquire),
        4 => (any::<usize>(), finish).prop_map(|(i, f)| Op::Finish(i, f)),
        2 => (0u64..300).prop_map(Op::Advance),
        1 => Just(Op::HalfOpen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// Random interleavings of many overlapping calls against the rules: a HALF_OPEN episode's
    /// trial permits are exactly `permitted` minus those taken plus those its own trial calls
    /// gave back (ignored, released, dropped); a late call's outcome publishes its event and
    /// changes neither state nor metrics; every HALF_OPEN decision comes from one of its own
    /// trial calls.
    #[test]
    fn half_open_counts_only_its_own_trial_calls(
        size in 1i64..6,
        minimum in 1i64..6,
        permitted in 1u32..4,
        wait in 1u64..200,
        ops in prop::collection::vec(op(), 1..200),
    ) {
        let clock = clock();
        let config = CircuitBreakerConfig::builder()
            .sliding_window_size(size)
            .minimum_number_of_calls(minimum)
            .permitted_number_of_calls_in_half_open_state(permitted as i64)
            .wait_duration_in_open_state(Duration::from_millis(wait))
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap();
        let cb = CircuitBreaker::new("late-call-model", config);
        let seen: Arc<Mutex<Vec<EventKind>>> = events(&cb);
        let mut held: Vec<Permit<'_>> = Vec::new();
        // The current episode (one per state object: every transition event, plus the
        // self-transitions this test makes) and the trial permits it has out.
        let mut episode = 0u64;
        let mut taken: HashMap<u64, u32> = HashMap::new();
        for (i, op) in ops.iter().enumerate() {
            let before = cb.state();
            let buffered = cb.metrics().number_of_buffered_calls;
            seen.lock().unwrap().clear();
            let mut finished = None;
            let mut acquired = None;
            let mut rejected = false;
            match op {
                Op::Advance(ms) => clock.advance(Duration::from_millis(*ms)),
                Op::HalfOpen => {
                    if matches!(before, State::Open | State::HalfOpen) {
                        cb.transition_to_half_open_state().unwrap();
                        if before == State::HalfOpen {
                            episode += 1; // HALF_OPEN -> HALF_OPEN publishes no event
                        }
                    }
                }
                Op::Acquire => match cb.try_acquire_permission() {
                    Ok(p) => {
                        acquired = Some((p.admitted_in(), p.episode()));
                        held.push(p);
                    }
                    Err(_) => rejected = true,
                },
                Op::Finish(k, f) if !held.is_empty() => {
                    let p = held.swap_remove(k % held.len());
                    finished = Some((p.admitted_in(), p.episode(), *f));
                    match f {
                        Finish::Success => p.on_success(),
                        Finish::Failure => p.on_error(),
                        Finish::Ignore => p.on_ignored_error(),
                        Finish::Release => p.release(),
                        Finish::Drop => drop(p),
                    }
                }
                Op::Finish(..) => {}
            }
            let events = seen.lock().unwrap().clone();
            if let Some((admitted, g, f)) = finished {
                let own = before == State::HalfOpen && admitted == State::HalfOpen && g == episode;
                let late = before == State::HalfOpen && !own;
                if own && matches!(f, Finish::Ignore | Finish::Release | Finish::Drop) {
                    *taken.get_mut(&g).unwrap() -= 1;
                }
                if late && matches!(f, Finish::Success | Finish::Failure) {
                    prop_assert_eq!(cb.state(), State::HalfOpen, "op {}: a late call decided", i);
                    prop_assert_eq!(cb.metrics().number_of_buffered_calls, buffered, "op {}: a late call was recorded", i);
                    prop_assert_eq!(events.len(), 1, "op {}: {:?}", i, events);
                }
                if before == State::HalfOpen && cb.state() != State::HalfOpen {
                    prop_assert!(own, "op {}: HALF_OPEN decided by a late call", i);
                }
            }
            episode += count_transitions(&seen);
            if let Some((admitted, g)) = acquired {
                prop_assert_eq!(g, episode, "op {}: the permit's episode", i);
                if admitted == State::HalfOpen {
                    let n = taken.entry(g).or_insert(0);
                    *n += 1;
                    prop_assert!(*n <= permitted, "op {}: {} trial calls out of {}", i, n, permitted);
                }
            }
            if rejected && cb.state() == State::HalfOpen {
                prop_assert_eq!(taken.get(&episode).copied(), Some(permitted), "op {}: rejected with a free trial permit", i);
            }
        }
    }
}

fn count_transitions(seen: &Arc<Mutex<Vec<EventKind>>>) -> u64 {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, EventKind::StateTransition { .. }))
        .count() as u64
}
