//! Issue 23 item 4: `breaker check` and `breaker simulate` show the values in effect and the
//! rule that makes them so (runs the built binary).

use std::path::Path;
use std::process::{Command, Output};

fn breaker(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_breaker"))
        .args(args)
        .env_remove("SPRING_PROFILES_ACTIVE")
        .output()
        .expect("runs")
}

fn write(dir: &Path, yaml: &str) -> String {
    let p = dir.join("application.yml");
    std::fs::write(&p, yaml).unwrap();
    p.to_string_lossy().into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The row of `setting` in the block titled `title`.
fn row<'a>(report: &'a str, title: &str, setting: &str) -> &'a str {
    let block = report
        .split("\n\n")
        .find(|b| b.starts_with(title))
        .unwrap_or_else(|| panic!("no block {title} in {report}"));
    block
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{setting} ")))
        .unwrap_or_else(|| panic!("no {setting} in {block}"))
}

const SMALL_WINDOW: &str = "
resilience4j.circuitbreaker.instances.small:
  slidingWindowSize: 5
";

/// A COUNT_BASED window of 5 with the default minimum of 100: Resilience4j's builder stores
/// min(100, 5) = 5, and that is what `check` shows, with the rule.
#[test]
fn check_shows_the_effective_minimum_number_of_calls() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), SMALL_WINDOW);
    let out = breaker(&["check", &f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = stdout(&out);
    let r = row(&s, "Circuit breaker 'small'", "minimumNumberOfCalls");
    assert!(r.contains("  5 (effective; 100 configured"), "{r}");
    assert!(
        r.contains("min(minimumNumberOfCalls, slidingWindowSize)"),
        "{r}"
    );
    // The default config's window is 100: nothing to explain there.
    let r = row(&s, "Any other name", "minimumNumberOfCalls");
    assert!(r.contains("  100  [default]"), "{r}");
}

/// `simulate` describes the breaker with the same effective minimum.
#[test]
fn simulate_shows_the_effective_minimum_number_of_calls() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), SMALL_WINDOW);
    let out = breaker(&[
        "simulate",
        &f,
        "--instance",
        "small",
        "--rate",
        "10/s",
        "--duration",
        "2s",
        "--seed",
        "1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = stdout(&out);
    assert!(
        s.contains("(minimumNumberOfCalls 5: 100 configured, capped at slidingWindowSize"),
        "{s}"
    );
    assert!(!s.contains("minimumNumberOfCalls 100)"), "{s}");
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The thread-pool sizes left at their machine defaults are printed as numbers (the CPU
/// count, and the CPU count minus 1, at least 1), with the rule.
#[test]
fn check_prints_thread_pool_sizes_as_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "resilience4j.thread-pool-bulkhead.instances.tp.queueCapacity: 3\n",
    );
    let out = breaker(&["check", &f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = stdout(&out);
    let max = row(&s, "Thread-pool bulkhead 'tp'", "maxThreadPoolSize");
    assert!(
        max.contains(&format!("  {} (not set: the CPU count", cpus())),
        "{max}"
    );
    let core = row(&s, "Thread-pool bulkhead 'tp'", "coreThreadPoolSize");
    assert!(
        core.contains(&format!(
            "  {} (not set: the CPU count {} minus 1, at least 1)",
            cpus().saturating_sub(1).max(1),
            cpus()
        )),
        "{core}"
    );
    assert!(!s.contains("availableProcessors-1"), "{s}");
}

/// `instances.flagOnly: {enableExponentialBackoff: true, exponentialBackoffMultiplier: 2}`
/// with the wait only in configs.default: the report shows the wait in effect (constant
/// 2000 ms from configs.default) and, under the instance, why its flags do nothing.
#[test]
fn check_explains_backoff_flags_that_have_no_effect() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "
resilience4j.retry:
  configs:
    default: { waitDuration: 2s }
  instances:
    flagOnly: { enableExponentialBackoff: true, exponentialBackoffMultiplier: 2 }
",
    );
    let out = breaker(&["check", &f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = stdout(&out);
    let flag = row(&s, "Retry 'flagOnly'", "enableExponentialBackoff");
    assert!(flag.contains("false  [configs.default"), "{flag}");
    let wait = row(&s, "Retry 'flagOnly'", "waitDuration");
    assert!(wait.contains("2000 ms  [configs.default"), "{wait}");
    let block = s
        .split("\n\n")
        .find(|b| b.starts_with("Retry 'flagOnly'"))
        .unwrap();
    assert!(
        block.contains("! enableExponentialBackoff: true has no effect"),
        "{block}"
    );
    assert!(
        block.contains("! exponentialBackoffMultiplier: 2 has no effect"),
        "{block}"
    );
}
