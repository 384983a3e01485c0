//! The lock-free paths against the locked one (issue #14).
//!
//! With nobody subscribed, a breaker takes HALF_OPEN's trial permissions and records its trial
//! successes without the lock, and records most CLOSED outcomes the same way; a subscriber
//! closes those paths, so every operation of a breaker with one goes through the machine under
//! the lock. Driven through the same random operations on the same clock, the two breakers must
//! agree on every answer, state and metric.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use breaker_core::{
    CircuitBreaker, CircuitBreakerConfig, ManualClock, Outcome, Permit, SlidingWindowType, State,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Acquire,
    /// Finish the held call at this index (modulo) with this outcome.
    Finish(usize, Finish),
    Advance(u64),
    /// A manual transition to HALF_OPEN (from OPEN or HALF_OPEN): a new HALF_OPEN state.
    HalfOpen,
    /// Compare the metrics (a locked read: it takes over what the lock-free paths did).
    Check,
}

#[derive(Debug, Clone, Copy)]
enum Finish {
    Success,
    SlowSuccess,
    Failure,
    Ignore,
    Release,
    Drop,
}

fn op() -> impl Strategy<Value = Op> {
    let finish = prop_oneof![
        4 => Just(Finish::Success),
        1 => Just(Finish::SlowSuccess),
        2 => Just(Finish::Failure),
        1 => Just(Finish::Ignore),
        1 => Just(Finish::Release),
        1 => Just(Finish::Drop),
    ];
    prop_oneof![
        5 => Just(Op::Acquire),
        5 => (any::<usize>(), finish).prop_map(|(i, f)| Op::Finish(i, f)),
        1 => (0u64..300).prop_map(Op::Advance),
        1 => Just(Op::HalfOpen),
        1 => Just(Op::Check),
    ]
}

fn finish(p: Permit<'_>, f: Finish) {
    match f {
        Finish::Success => p.record_with_duration(Outcome::Success, Duration::from_millis(1)),
        Finish::SlowSuccess => p.record_with_duration(Outcome::Success, Duration::from_millis(100)),
        Finish::Failure => p.record_with_duration(Outcome::Failure, Duration::from_millis(1)),
        Finish::Ignore => p.on_ignored_error(),
        Finish::Release => p.release(),
        Finish::Drop => drop(p),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]
    #[test]
    fn quiet_breaker_agrees_with_a_subscribed_one(
        time_based in any::<bool>(),
        size in 1i64..6,
        minimum in 1i64..6,
        permitted in 1i64..5,
        wait in 1u64..200,
        max_wait in prop_oneof![Just(0u64), 1u64..400],
        ops in prop::collection::vec(op(), 1..300),
    ) {
        let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
        let config = CircuitBreakerConfig::builder()
            .sliding_window_type(if time_based {
                SlidingWindowType::TimeBased
            } else {
                SlidingWindowType::CountBased
            })
            .sliding_window_size(size)
            .minimum_number_of_calls(minimum)
            .permitted_number_of_calls_in_half_open_state(permitted)
            .wait_duration_in_open_state(Duration::from_millis(wait))
            .max_wait_duration_in_half_open_state(Duration::from_millis(max_wait))
            .slow_call_duration_threshold(Duration::from_millis(50))
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap();
        let quiet = CircuitBreaker::new("quiet", config.clone());
        let locked = CircuitBreaker::new("locked", config);
        locked.subscribe(|_| {});
        let mut held: Vec<(Permit<'_>, Permit<'_>)> = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            match op {
                Op::Acquire => {
                    let (q, l) = (quiet.try_acquire_permission(), locked.try_acquire_permission());
                    prop_assert_eq!(q.is_ok(), l.is_ok(), "op {}: acquire", i);
                    if let (Ok(q), Ok(l)) = (q, l) {
                        prop_assert_eq!(q.admitted_in(), l.admitted_in(), "op {}", i);
                        prop_assert_eq!(q.episode(), l.episode(), "op {}", i);
                        held.push((q, l));
                    }
                }
                Op::Finish(k, f) if !held.is_empty() => {
                    let (q, l) = held.swap_remove(k % held.len());
                    finish(q, *f);
                    finish(l, *f);
                }
                Op::Finish(..) => {}
                Op::Advance(ms) => clock.advance(Duration::from_millis(*ms)),
                Op::HalfOpen => {
                    if matches!(quiet.state(), State::Open | State::HalfOpen) {
                        quiet.transition_to_half_open_state().unwrap();
                        locked.transition_to_half_open_state().unwrap();
                    }
                }
                Op::Check => {
                    prop_assert_eq!(quiet.metrics(), locked.metrics(), "op {}", i);
                }
            }
            prop_assert_eq!(quiet.state(), locked.state(), "op {}: {:?}", i, op);
        }
        drop(held);
        prop_assert_eq!(quiet.metrics(), locked.metrics(), "at the end");
    }
}

/// Many threads through many trips and recoveries with nobody subscribed, so that HALF_OPEN's
/// trial permissions are taken lock-free: no HALF_OPEN state ever has more of its own trial
/// calls in flight than permitted.
#[test]
fn quiet_half_open_never_admits_more_trial_calls_than_permitted() {
    const THREADS: usize = 8;
    const PERMITTED: u32 = 3;
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(4)
        .minimum_number_of_calls(2)
        .permitted_number_of_calls_in_half_open_state(PERMITTED as i64)
        .wait_duration_in_open_state(Duration::from_millis(1))
        .build()
        .unwrap();
    let cb = CircuitBreaker::new("quiet-stress", config);
    // Per HALF_OPEN state (episode): its trial calls in flight now, and the most at once.
    let in_flight: Arc<Mutex<std::collections::HashMap<u64, (u32, u32)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(THREADS + 1));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (cb, in_flight, stop, barrier) =
                (cb.clone(), in_flight.clone(), stop.clone(), barrier.clone());
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
                        let mut m = in_flight.lock().unwrap();
                        let e = m.entry(g).or_default();
                        e.0 += 1;
                        e.1 = e.1.max(e.0);
                    }
                    if rng.u8(0..4) == 0 {
                        thread::sleep(Duration::from_micros(rng.u64(50..500)));
                    }
                    let kind = rng.u8(0..10);
                    if let Some(g) = trial {
                        in_flight.lock().unwrap().get_mut(&g).unwrap().0 -= 1;
                    }
                    match kind {
                        0..=2 => p.on_error(),
                        3..=8 => p.on_success(),
                        _ => p.release(),
                    }
                }
            })
        })
        .collect();
    barrier.wait();
    let deadline = Instant::now() + Duration::from_millis(1000);
    while Instant::now() < deadline && in_flight.lock().unwrap().len() < 300 {
        thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().unwrap();
    }
    let m = in_flight.lock().unwrap();
    let crowded: Vec<_> = m.iter().filter(|(_, e)| e.1 > PERMITTED).collect();
    assert!(
        crowded.is_empty(),
        "more trial calls in flight than permitted: {crowded:?}"
    );
    assert!(
        m.len() >= 20,
        "too few HALF_OPEN states to mean anything: {}",
        m.len()
    );
}
