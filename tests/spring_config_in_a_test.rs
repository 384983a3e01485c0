//! The README's "Your real configuration in a test" (issue #9, part 5), run against the Quick
//! start's `application.yml` written to a temporary directory: one call builds the registry
//! with a catalog and a manual clock, and a breaker goes through OPEN and back.

use std::time::Duration;

use resilience4rs::{CallError, ErrorCatalog, Loader, ManualClock, SpringConfig, State};

/// The README's Quick start file.
const APPLICATION_YML: &str = "\
resilience4j.circuitbreaker:
  configs:
    default: { slidingWindowSize: 10, failureRateThreshold: 50, waitDurationInOpenState: 10s }
  instances:
    paymentService: { baseConfig: default, minimum-number-of-calls: 5 }
";

#[test]
fn the_readme_example_runs_on_the_quick_start_file() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("application.yml");
    std::fs::write(&path, APPLICATION_YML)?;

    // The README's lines, with the file's path.
    let clock = ManualClock::default();
    let registry = SpringConfig::file(&path).clock(clock.clone()).registry()?;
    let payments = registry.circuit_breaker("paymentService");
    for _ in 0..5 {
        payments.try_acquire_permission()?.on_error();
    } // minimum-number-of-calls: 5
    assert_eq!(payments.state(), State::Open);
    clock.advance(Duration::from_millis(10_001)); // strictly past waitDurationInOpenState: 10s
    for _ in 0..5 {
        payments.try_acquire_permission()?.on_success();
    } // the trial calls
    assert_eq!(payments.state(), State::Closed);
    Ok(())
}

#[derive(Debug)]
enum ApiError {
    Io,
    NotFound,
}

/// The catalog and the clock reach breakers the file does not list too, made later.
#[test]
fn catalog_and_clock_reach_breakers_made_later() -> Result<(), Box<dyn std::error::Error>> {
    let yaml = "\
resilience4j.circuitbreaker:
  configs:
    default:
      slidingWindowSize: 2
      minimumNumberOfCalls: 2
      waitDurationInOpenState: 1s
      recordExceptions: [java.io.IOException]
";
    let catalog = ErrorCatalog::new().register("java.io.IOException", |e: &ApiError| {
        matches!(e, ApiError::Io)
    });
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    for registry in [
        SpringConfig::yaml(yaml)
            .catalog(catalog.clone())
            .clock(clock.clone())
            .loader(Loader::new().env(Default::default()))
            .registry()?,
        SpringConfig::properties(
            "resilience4j.circuitbreaker.configs.default.sliding-window-size=2\n\
             resilience4j.circuitbreaker.configs.default.minimum-number-of-calls=2\n\
             resilience4j.circuitbreaker.configs.default.wait-duration-in-open-state=1s\n\
             resilience4j.circuitbreaker.configs.default.record-exceptions=java.io.IOException\n",
        )
        .catalog(catalog.clone())
        .clock(clock.clone())
        .registry()?,
    ] {
        let later = registry.circuit_breaker("made-at-run-time");
        // Not an IOException: a success under recordExceptions.
        let _ = later.call_sync(|| Err::<(), _>(ApiError::NotFound));
        let _ = later.call_sync(|| Err::<(), _>(ApiError::NotFound));
        assert_eq!(later.state(), State::Closed);
        // An IOException is a failure: 1 of the last 2 calls, 50 %, at the default threshold.
        let r = later.call_sync(|| Err::<(), _>(ApiError::Io));
        assert!(matches!(r, Err(CallError::Inner(ApiError::Io))));
        assert_eq!(later.state(), State::Open);
        clock.advance(Duration::from_millis(1_000));
        assert!(
            later.try_acquire_permission().is_err(),
            "the wait is not over"
        );
        clock.advance(Duration::from_millis(1));
        assert!(
            later.try_acquire_permission().is_ok(),
            "the manual clock runs it"
        );
    }
    // Without the catalog the file is refused: its exception name answers to no Rust error.
    let refused = SpringConfig::yaml(yaml).registry().unwrap_err();
    assert!(
        refused.to_string().contains("'java.io.IOException'"),
        "{refused}"
    );
    // A live configuration needs a file.
    assert!(SpringConfig::yaml(yaml).live().is_err());
    Ok(())
}

/// `.live()` keeps the clock for breakers a reload creates.
#[test]
fn a_live_config_keeps_the_clock_across_reloads() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("application.yml");
    let file = |names: &[&str]| {
        let mut yaml = String::from("resilience4j.circuitbreaker.instances:\n");
        for n in names {
            yaml.push_str(&format!(
                "  {n}: {{ slidingWindowSize: 1, minimumNumberOfCalls: 1, waitDurationInOpenState: 5s }}\n"
            ));
        }
        yaml
    };
    std::fs::write(&path, file(&["first"]))?;
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let live = SpringConfig::file(&path).clock(clock.clone()).live()?;
    std::fs::write(&path, file(&["first", "second"]))?;
    let report = live.reload()?;
    assert_eq!(report.added, ["second"]);
    let second = live
        .registry()
        .find("second")
        .expect("created by the reload");
    second.try_acquire_permission()?.on_error();
    assert_eq!(second.state(), State::Open);
    clock.advance(Duration::from_millis(5_001));
    assert!(
        second.try_acquire_permission().is_ok(),
        "runs on the manual clock"
    );
    Ok(())
}
