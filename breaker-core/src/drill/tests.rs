//! The drill layer on virtual time.

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::*;
use crate::ManualClock;

const T0: u64 = 1_700_000_000_000;

fn registry() -> (ManualClock, DrillRegistry) {
    let clock = ManualClock::at_epoch_millis(T0);
    let drills = DrillRegistry::with_clock(Arc::new(clock.clone()));
    (clock, drills)
}

fn poll_once<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

fn io_error() -> Fault {
    Fault::Error(DrillErrorKind::Named("java.io.IOException".into()))
}

#[test]
fn no_drill_passes_and_counts_nothing() {
    let (_, drills) = registry();
    assert!(!drills.any());
    assert_eq!(drills.decide("a"), Injection::Pass);
    assert!(drills.drill("a").is_none());
}

#[test]
fn an_error_drill_fails_every_call_without_calling_the_dependency() {
    let (_, drills) = registry();
    drills.start("a", DrillConfig::new(io_error())).unwrap();
    let called = Arc::new(Mutex::new(0));
    for _ in 0..3 {
        let c = called.clone();
        let f = pin!(drills.call(
            "a",
            async move {
                *c.lock().unwrap() += 1;
                Ok::<u32, String>(1)
            },
            |e| e.kind.to_string()
        ));
        assert_eq!(poll_once(f), Poll::Ready(Err("java.io.IOException".into())));
    }
    assert_eq!(*called.lock().unwrap(), 0);
    // Another instance is untouched.
    assert_eq!(drills.decide("b"), Injection::Pass);
    let m = drills.drill("a").unwrap().metrics();
    assert_eq!((m.injected_errors, m.injected(), m.passed), (3, 3, 0));
}

#[test]
fn a_latency_drill_waits_on_the_clock_then_calls() {
    let (clock, drills) = registry();
    let fault = Fault::Latency(Latency::Fixed(Duration::from_millis(300)));
    drills.start("a", DrillConfig::new(fault)).unwrap();
    let mut f = pin!(drills.call("a", async { Ok::<u32, ()>(7) }, |_| ()));
    assert!(poll_once(f.as_mut()).is_pending());
    clock.advance(Duration::from_millis(299));
    assert!(poll_once(f.as_mut()).is_pending());
    clock.advance(Duration::from_millis(1));
    assert_eq!(poll_once(f.as_mut()), Poll::Ready(Ok(7)));
    assert_eq!(drills.drill("a").unwrap().metrics().injected_latency, 1);
}

#[test]
fn uniform_latency_stays_in_range_and_repeats_with_its_seed() {
    let (_, drills) = registry();
    let (min, max) = (Duration::from_millis(10), Duration::from_millis(20));
    let config = DrillConfig::new(Fault::Latency(Latency::Uniform { min, max })).seed(42);
    let mut runs = Vec::new();
    for _ in 0..2 {
        drills.start("a", config.clone()).unwrap();
        let delays: Vec<_> = (0..200)
            .map(|_| match drills.decide("a") {
                Injection::Delay(d) => d,
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(delays.iter().all(|d| (min..=max).contains(d)));
        // 200 draws from 10 ms of nanoseconds: never all equal.
        assert!(delays.iter().any(|d| *d != delays[0]));
        runs.push(delays);
    }
    assert_eq!(runs[0], runs[1], "the same seed gives the same delays");
}

#[test]
fn a_hang_never_completes() {
    let (clock, drills) = registry();
    drills.start("a", DrillConfig::new(Fault::Hang)).unwrap();
    let mut f = pin!(drills.call("a", async { Ok::<u32, ()>(1) }, |_| ()));
    assert!(poll_once(f.as_mut()).is_pending());
    clock.advance(Duration::from_secs(3600));
    assert!(poll_once(f.as_mut()).is_pending());
    assert_eq!(drills.drill("a").unwrap().metrics().injected_hangs, 1);
}

#[test]
fn a_share_of_calls_is_injected() {
    let (_, drills) = registry();
    drills
        .start("a", DrillConfig::new(Fault::Hang).percentage(25.0).seed(7))
        .unwrap();
    let n = 10_000;
    let hit = (0..n)
        .filter(|_| drills.decide("a") == Injection::Hang)
        .count();
    // Binomial(10000, 0.25): mean 2500, sd 43.3; +-5 sd.
    assert!((2284..=2716).contains(&hit), "{hit}");
    let m = drills.drill("a").unwrap().metrics();
    assert_eq!(m.injected_hangs + m.passed, n as u64);
    drills
        .start("z", DrillConfig::new(Fault::Hang).percentage(0.0))
        .unwrap();
    assert!((0..1000).all(|_| drills.decide("z") == Injection::Pass));
    drills
        .start("h", DrillConfig::new(Fault::Hang).percentage(100.0))
        .unwrap();
    assert!((0..1000).all(|_| drills.decide("h") == Injection::Hang));
}

#[test]
fn a_window_injects_only_between_its_times() {
    let (clock, drills) = registry();
    let start = T0 * 1_000_000 + 10_000_000_000; // T0 + 10 s
    let end = start + 5_000_000_000; // + 5 s
    drills
        .start(
            "a",
            DrillConfig::new(io_error()).between(Some(start), Some(end)),
        )
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let e = events.clone();
    drills.subscribe(move |ev| e.lock().unwrap().push(ev.kind.clone()));
    assert_eq!(drills.decide("a"), Injection::Pass);
    assert!(drills.active().is_empty());
    clock.advance(Duration::from_secs(10));
    assert!(matches!(drills.decide("a"), Injection::Error(_)));
    assert_eq!(drills.active(), ["a"]);
    clock.advance(Duration::from_millis(4999));
    assert!(matches!(drills.decide("a"), Injection::Error(_)));
    clock.advance(Duration::from_millis(1));
    assert_eq!(drills.decide("a"), Injection::Pass);
    assert!(drills.active().is_empty());
    assert_eq!(drills.decide("a"), Injection::Pass);
    let kinds = events.lock().unwrap().clone();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert!(matches!(
        kinds[0],
        DrillEventKind::Injected(Injection::Error(_))
    ));
    assert_eq!(
        kinds[2],
        DrillEventKind::Ended,
        "ended once, on the first call after"
    );
}

#[test]
fn a_call_limit_ends_the_drill() {
    let (_, drills) = registry();
    drills
        .start("a", DrillConfig::new(Fault::Hang).max_calls(3))
        .unwrap();
    let got: Vec<_> = (0..5).map(|_| drills.decide("a")).collect();
    assert_eq!(
        got,
        [
            Injection::Hang,
            Injection::Hang,
            Injection::Hang,
            Injection::Pass,
            Injection::Pass
        ]
    );
    assert!(drills.active().is_empty());
    let m = drills.drill("a").unwrap().metrics();
    assert_eq!((m.injected_hangs, m.passed), (3, 2));
}

#[test]
fn stop_and_apply_change_the_set_of_drills() {
    let (_, drills) = registry();
    assert!(!drills.stop("a"));
    drills
        .start("a", DrillConfig::new(Fault::Hang).max_calls(2))
        .unwrap();
    assert!(drills.any());
    assert_eq!(drills.decide("a"), Injection::Hang);
    // An unchanged config keeps running (and its call count).
    let same = [("a".to_string(), DrillConfig::new(Fault::Hang).max_calls(2))].into();
    drills.apply(&same).unwrap();
    assert_eq!(drills.decide("a"), Injection::Hang);
    assert_eq!(drills.decide("a"), Injection::Pass);
    // A new set: a stops, b starts.
    let next = [("b".to_string(), DrillConfig::new(io_error()))].into();
    drills.apply(&next).unwrap();
    assert_eq!(drills.decide("a"), Injection::Pass);
    assert!(matches!(drills.decide("b"), Injection::Error(_)));
    // An invalid set changes nothing.
    let bad = [(
        "c".to_string(),
        DrillConfig::new(Fault::Hang).percentage(101.0),
    )]
    .into();
    assert_eq!(drills.apply(&bad).unwrap_err().0, "c");
    assert!(matches!(drills.decide("b"), Injection::Error(_)));
    assert!(drills.stop("b"));
    assert!(!drills.any());
    // Counters survive the stop.
    assert_eq!(drills.drill("b").unwrap().metrics().injected_errors, 2);
}

#[test]
fn the_process_wide_flag_follows_the_registries() {
    let (_, drills) = registry();
    drills.start("flag", DrillConfig::new(Fault::Hang)).unwrap();
    assert!(any_configured());
    // Dropping a registry with a drill set gives its count back (other tests may hold
    // drills at the same time, so only this registry's own effect is checked above).
    drop(drills);
}

#[test]
fn delay_and_duration_count_from_the_time_the_drill_is_set() {
    let (clock, drills) = registry();
    clock.advance(Duration::from_secs(100));
    let config = DrillConfig::new(Fault::Hang)
        .after(Some(Duration::from_secs(2)), Some(Duration::from_secs(5)));
    drills.start("a", config.clone()).unwrap();
    assert_eq!(drills.decide("a"), Injection::Pass);
    clock.advance(Duration::from_secs(2));
    assert_eq!(drills.decide("a"), Injection::Hang);
    clock.advance(Duration::from_millis(4999));
    assert_eq!(drills.decide("a"), Injection::Hang);
    // A reload with the same config keeps the times.
    drills.apply(&[("a".to_string(), config)].into()).unwrap();
    clock.advance(Duration::from_millis(1));
    assert_eq!(drills.decide("a"), Injection::Pass);
}

#[test]
fn named_errors_are_made_by_their_registered_maker() {
    let (_, drills) = registry();
    #[derive(Debug, PartialEq)]
    struct Io(u16);
    drills.register_error("java.io.IOException", || Io(503));
    assert_eq!(
        drills.make_error::<Io>("java.io.IOException"),
        Some(Io(503))
    );
    assert_eq!(drills.make_error::<String>("java.io.IOException"), None);
    assert_eq!(drills.make_error::<Io>("other"), None);
}
