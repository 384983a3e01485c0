//! `breaker.drill.instances.<name>.*` (issue #28): bound without warnings, bad values are
//! errors with file, line, key and allowed values, unknown keys are warned about, and a live
//! reload starts, changes and stops drills (virtual time).

use std::fs;
use std::time::Duration;

use breaker_config::{Format, Loaded, Loader, SpringConfig};
use breaker_core::drill::{DrillErrorKind, Fault, Injection, Latency, Rejection};
use breaker_core::ManualClock;

fn yaml(text: &str) -> Loaded {
    Loader::new()
        .env(Default::default())
        .load_str("application.yml", Format::Yaml, text)
        .unwrap()
}

const DRILLS: &str = "\
resilience4j.circuitbreaker.instances.paymentService.slidingWindowSize: 10
breaker:
  drill:
    instances:
      paymentService:
        fault: error
        error: CallNotPermitted
        percentage: 25
        calls: 40
        seed: 7
      inventory:
        latency-min: 100ms
        latency-max: 2s
        delay: 5s
        duration: PT30S
      ledger:
        fault: hang
        start: 2026-03-01T14:00:00Z
        end: 2026-03-01T14:05:00Z
      audit:
        error: java.io.IOException
";

#[test]
fn documented_keys_bind_without_warnings() {
    let l = yaml(DRILLS);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert!(l.errors().is_empty(), "{:?}", l.errors());
    let d = &l.drills.instances;
    let p = &d["paymentService"];
    assert_eq!(
        p.fault,
        Fault::Error(DrillErrorKind::Rejection(Rejection::CallNotPermitted))
    );
    assert_eq!(
        (p.percentage, p.max_calls, p.seed),
        (25.0, Some(40), Some(7))
    );
    let i = &d["inventory"];
    assert_eq!(
        i.fault,
        Fault::Latency(Latency::Uniform {
            min: Duration::from_millis(100),
            max: Duration::from_secs(2)
        })
    );
    assert_eq!(i.percentage, 100.0, "every call by default");
    assert_eq!(
        (i.delay, i.duration),
        (Some(Duration::from_secs(5)), Some(Duration::from_secs(30)))
    );
    let g = &d["ledger"];
    assert_eq!(g.fault, Fault::Hang);
    // 2026-03-01T14:00:00Z = 1772373600 s since the epoch.
    assert_eq!(g.start_nanos, Some(1_772_373_600 * 1_000_000_000));
    assert_eq!(g.end_nanos, Some((1_772_373_600 + 300) * 1_000_000_000));
    assert_eq!(
        d["audit"].fault,
        Fault::Error(DrillErrorKind::Named("java.io.IOException".into()))
    );
    // `breaker check --json` shows them.
    let report = breaker_config::json::report(&l);
    assert_eq!(
        report["drills"]["paymentService"]["error"],
        "call-not-permitted"
    );
    assert_eq!(report["drills"]["inventory"]["latencyMaxMs"], 2000);
}

#[test]
fn bad_values_are_errors_with_key_line_and_allowed_values() {
    let cases = [
        ("fault: melt", "fault", "error, latency, hang"),
        (
            "fault: hang\n        percentage: 120",
            "percentage",
            "0 to 100",
        ),
        ("fault: hang\n        calls: 0", "calls", "1 or more"),
        ("fault: latency\n        latency: soon", "latency", "500ms"),
        ("fault: hang\n        start: tomorrow", "start", "RFC 3339"),
        ("fault: error", "error", "call-not-permitted"),
        (
            "latency-min: 2s\n        latency-max: 1s",
            "latency-max",
            "min <= max",
        ),
        ("percentage: 5", "fault", "fault: error"),
    ];
    for (body, key, allowed) in cases {
        let text = format!("breaker:\n  drill:\n    instances:\n      a:\n        {body}\n");
        let l = yaml(&text);
        let errors = l.errors();
        assert_eq!(errors.len(), 1, "{body}: {errors:?}");
        let e = errors[0];
        assert_eq!(e.key, format!("breaker.drill.instances.a.{key}"), "{body}");
        assert!(e.allowed.contains(allowed), "{body}: {}", e.allowed);
        if key != "fault" || body.starts_with("fault") {
            let o = e.origin.as_ref().expect("origin");
            assert_eq!(&*o.file, "application.yml");
            assert!(o.line >= 5, "{body}: {o:?}");
        }
        assert!(l.drills.instances.is_empty(), "a bad drill is not kept");
    }
}

#[test]
fn unknown_drill_keys_are_warned_about() {
    let l = yaml("breaker.drill.instances.a.fault: hang\nbreaker.drill.instances.a.colour: red\nbreaker.drill.enabled: true\n");
    assert!(l.errors().is_empty());
    assert_eq!(l.warnings.len(), 2, "{:?}", l.warnings);
    assert!(l
        .warnings
        .iter()
        .all(|w| w.to_string().contains("unknown drill setting")));
    assert!(l.drills.instances.contains_key("a"));
}

#[test]
fn no_drill_keys_no_drills() {
    let l = yaml("resilience4j.circuitbreaker.instances.a.slidingWindowSize: 10\n");
    assert!(l.drills.instances.is_empty());
    let report = breaker_config::json::report(&l);
    assert!(report.get("drills").is_none());
}

#[test]
fn editing_the_file_starts_changes_and_stops_a_drill() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    let base = "resilience4j.circuitbreaker.instances.paymentService.slidingWindowSize: 10\n";
    fs::write(&path, base).unwrap();
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let live = SpringConfig::file(&path)
        .loader(Loader::new().env(Default::default()))
        .clock(clock.clone())
        .live()
        .unwrap();
    let drills = live.drills().clone();
    assert_eq!(drills.decide("paymentService"), Injection::Pass);

    let on = format!("{base}breaker.drill.instances.paymentService.fault: hang\nbreaker.drill.instances.paymentService.duration: 5s\n");
    fs::write(&path, &on).unwrap();
    live.reload().unwrap();
    assert_eq!(drills.decide("paymentService"), Injection::Hang);
    assert_eq!(drills.active(), ["paymentService"]);
    // An unrelated edit keeps the drill's times.
    clock.advance(Duration::from_secs(3));
    fs::write(&path, on.replace("10", "20")).unwrap();
    live.reload().unwrap();
    clock.advance(Duration::from_secs(2));
    assert_eq!(
        drills.decide("paymentService"),
        Injection::Pass,
        "5 s after the start"
    );

    // A bad drill value keeps the last good config.
    fs::write(
        &path,
        format!("{on}breaker.drill.instances.paymentService.percentage: 200\n"),
    )
    .unwrap();
    assert!(live.reload().is_err());
    assert_eq!(
        drills
            .drill("paymentService")
            .unwrap()
            .config()
            .unwrap()
            .duration,
        Some(Duration::from_secs(5))
    );

    let changed = on.replace(
        "fault: hang",
        "fault: error\nbreaker.drill.instances.paymentService.error: timeout",
    );
    fs::write(&path, changed).unwrap();
    live.reload().unwrap();
    assert_eq!(
        drills.decide("paymentService"),
        Injection::Error(DrillErrorKind::Rejection(Rejection::Timeout)),
        "a changed drill starts again"
    );
    fs::write(&path, base).unwrap();
    live.reload().unwrap();
    assert_eq!(drills.decide("paymentService"), Injection::Pass);
    assert!(!drills.any());
}
