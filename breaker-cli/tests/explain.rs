//! End-to-end tests of `breaker explain` (runs the built binary).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn breaker(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_breaker"))
        .args(args)
        .env_remove("SPRING_PROFILES_ACTIVE")
        .output()
        .expect("runs")
}

fn explain_json(extra: &[&str]) -> Value {
    let f = fixture("explain.yml");
    let mut args = vec!["explain", f.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let out = breaker(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn row<'a>(v: &'a Value, instance: &str, error_rate: f64) -> &'a Value {
    v["instances"][instance]["false_trips_per_day"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["error_rate"] == error_rate)
        .unwrap_or_else(|| panic!("{instance} at {error_rate}: {v}"))
}

/// Issue #15's binomial figures at 20 calls/s, to 6 significant digits, by arithmetic:
/// - window 10, 50 % (5 failures), 5 % errors: P(X >= 5 | 10, 0.05) = 6.368983e-5, times
///   1 728 000 / 10 = 172 800 windows a day: 11.005603 ("about 11", `binomial: 11.0056`);
/// - window 20, 50 % (10 failures), 5 %: 1.1340718e-8 x 86 400 = 0.000979838 ("about
///   0.001");
/// - window 5, 20 % (1 failure), 1 %: (1 - 0.99^5) = 0.0490099501 x 345 600 = 16 937.84
///   ("about 16,900").
#[test]
fn binomial_figures_match_the_issue_exactly() {
    let v = explain_json(&["--error-rate", "1%,5%", "--rate", "20/s", "--days", "0"]);
    assert_eq!(v["calls_per_s"], 20.0);
    assert_eq!(row(&v, "w10", 0.05)["binomial"], 11.0056);
    assert_eq!(row(&v, "w10", 0.05)["calls_per_s"], 20.0);
    assert_eq!(row(&v, "w20", 0.05)["binomial"], 0.000979838);
    assert_eq!(row(&v, "w5", 0.01)["binomial"], 16937.8);
    // --days 0: no simulated figure.
    assert_eq!(row(&v, "w10", 0.05)["simulated"], Value::Null);
}

/// Failures that open each breaker, by arithmetic: a full window of N successes opens after
/// ceil(N x threshold) failures (each replaces a success); a fresh one once
/// min(minimumNumberOfCalls, N) calls are buffered, all failed. At 20 calls/s the k-th
/// failure comes k / 20 s after the dependency breaks.
#[test]
fn failures_to_open_and_detection_time() {
    let v = explain_json(&["--days", "0"]);
    for (name, full, fresh, detect) in [
        ("w10", 5, 10, 0.25),
        ("w20", 10, 20, 0.5),
        ("w5", 1, 5, 0.05),
    ] {
        let i = &v["instances"][name];
        assert_eq!(i["failures_to_open"], full, "{name}");
        assert_eq!(i["failures_to_open_fresh"], fresh, "{name}");
        assert_eq!(i["detection_s"], detect, "{name}");
        assert_eq!(i["retry"], Value::Null, "{name}");
    }
}

/// The simulated figure for the sliding window, one day at 20 calls/s through the real
/// state machine. Window 10, 50 %, 5 % errors: a call opens the breaker when it fails, the
/// call leaving the window succeeded and exactly 4 of the 9 calls between failed:
/// 0.05 x 0.95 x C(9,4) 0.05^4 0.95^5 = 2.894e-5 per call, 50.0 a day. That counts every
/// upward crossing of the threshold; the breaker sees fewer, as its OPEN wait and fresh
/// window swallow the crossings that follow one another (60 simulated days gave 46.6 a
/// day). So one day lands between twice the binomial estimate (22) and 50 + 3 sd (71).
/// Window 5, 20 %, 1 %: every failure in CLOSED trips; a cycle is about 5 s until a
/// failure, 5 s OPEN and 0.25 s of trial calls: about 8 400 a day, half the estimate.
#[test]
fn simulated_sliding_window_next_to_the_estimate() {
    let v = explain_json(&[
        "--instance",
        "w10",
        "--error-rate",
        "5%",
        "--rate",
        "20/s",
        "--days",
        "1",
        "--seed",
        "4",
    ]);
    let r = row(&v, "w10", 0.05);
    assert_eq!(r["binomial"], 11.0056);
    assert_eq!(r["simulated_days"], 1.0);
    let sim = r["simulated"].as_f64().unwrap();
    assert!((22.0..71.0).contains(&sim), "{r}");
    assert_eq!(r["simulated_trips"].as_f64().unwrap(), sim);

    let v = explain_json(&["--instance", "w5", "--error-rate", "1%", "--days", "0.1"]);
    let r = row(&v, "w5", 0.01);
    let sim = r["simulated"].as_f64().unwrap();
    assert!((7000.0..9800.0).contains(&sim), "{r}");
    assert!(sim < r["binomial"].as_f64().unwrap());
}

#[test]
fn text_report_shows_both_figures() {
    let f = fixture("explain.yml");
    let out = breaker(&[
        "explain",
        f.to_str().unwrap(),
        "--instance",
        "w10",
        "--days",
        "0.01",
    ]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("Failures in a row that open it: 5 when its window is full of successes, 10 from a fresh start."), "{s}");
    assert!(s.contains("11.0056"), "{s}");
    assert!(
        s.contains("P(at least 5 of 10 calls fail) x 172800 windows a day"),
        "{s}"
    );
    assert!(
        s.contains("simulated through the real sliding window"),
        "{s}"
    );
}

#[test]
fn a_retry_section_is_reported() {
    let f = fixture("with_retry.yml");
    let out = breaker(&[
        "explain",
        f.to_str().unwrap(),
        "--days",
        "0",
        "--budget",
        "10s",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // maxAttempts 4, waits 500, 1000, 2000 ms (x2 from 500 ms), each attempt cut at 2 s:
    // 4 x 2000 + 3500 = 11 500 ms; in 10 s, 3 attempts fit (3 x 2000 + 1500 = 7500 ms).
    let r = &v["instances"]["backend"]["retry"];
    assert_eq!(r["loaded"], true, "{v}");
    assert_eq!(r["max_attempts"], 4, "{v}");
    assert_eq!(r["worst_case_ms"], 11_500, "{v}");
    assert_eq!(r["budget_ms"], 10_000, "{v}");
    assert_eq!(r["fits_budget"], false, "{v}");
    assert_eq!(r["most_attempts_in_budget"], 3, "{v}");
}

#[test]
fn bad_flags_are_named() {
    let f = fixture("explain.yml");
    let f = f.to_str().unwrap();
    for (args, flag, hint) in [
        (
            vec!["--error-rate", "1%,120%"],
            "--error-rate",
            "between 0% and 100%",
        ),
        (vec!["--rate", "0/s"], "--rate", "greater than zero"),
        (vec!["--days=-1"], "--days", "between 0 and 3650"),
        (vec!["--budget", "soon"], "--budget", "not a duration"),
    ] {
        let mut a = vec!["explain", f];
        a.extend(args.iter());
        let out = breaker(&a);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains(flag) && e.contains(hint), "{args:?}: {e}");
    }
}

#[test]
fn help_speaks_to_a_newcomer() {
    let out = breaker(&["explain", "--help"]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for want in [
        "binomial estimate",
        "sliding window",
        "--error-rate",
        "--budget",
        "Example:",
    ] {
        assert!(s.contains(want), "{want}: {s}");
    }
}
