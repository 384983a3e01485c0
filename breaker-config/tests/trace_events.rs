//! `LiveConfig::trace_events`: one call logs every module of a live config (issue 24), and a
//! summary's last window is logged when the instance goes quiet (tokio's paused clock: the
//! timer fires when virtual time reaches the window's end) or when the breaker's state
//! changes.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_config::{LiveConfig, Loader};
use breaker_core::ErrorCatalog;

const FILE: &str = "resilience4j:
  circuitbreaker.instances.payments: { slidingWindowSize: 2, minimumNumberOfCalls: 2 }
  retry.instances.payments: { maxAttempts: 2, waitDuration: 0 }
  timelimiter.instances.payments: { timeoutDuration: 10ms }
  bulkhead.instances.payments: { maxConcurrentCalls: 1, maxWaitDuration: 0 }
  thread-pool-bulkhead.instances.reports: { coreThreadPoolSize: 1, maxThreadPoolSize: 1, queueCapacity: 1 }
  ratelimiter.instances.payments: { limitForPeriod: 1, limitRefreshPeriod: 1h, timeoutDuration: 0 }
";

/// Log lines written by the `fmt` subscriber, without ANSI colours.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Lines {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
    /// The lines containing `needle`.
    fn with(&self, needle: &str) -> Vec<String> {
        self.text()
            .lines()
            .filter(|l| l.contains(needle))
            .map(str::to_string)
            .collect()
    }
}

fn capture() -> (Lines, tracing::subscriber::DefaultGuard) {
    let lines = Lines::default();
    let w = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(move || w.clone())
        .finish();
    (lines, tracing::subscriber::set_default(subscriber))
}

fn live() -> (tempfile::TempDir, LiveConfig) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    std::fs::write(&path, FILE).unwrap();
    let live = LiveConfig::load(&[&path], Loader::new(), ErrorCatalog::new()).unwrap();
    (dir, live)
}

#[tokio::test(start_paused = true)]
async fn one_call_logs_every_module() {
    let (lines, _guard) = capture();
    let (_dir, live) = live();
    live.trace_events();
    let m = live.module_registries();

    let cb = live.registry().circuit_breaker("payments");
    // OPEN (for 60 s by default) publishes NOT_PERMITTED; FORCED_OPEN does not.
    cb.transition_to_open_state().unwrap();
    assert!(cb.try_acquire_permission().is_err());

    let retry = m.retry.retry("payments");
    let _ = retry
        .call(|| async { Err::<(), _>(std::io::Error::other("down")) })
        .await;

    let tl = m.time_limiter.time_limiter("payments");
    let slow = tokio::time::sleep(Duration::from_secs(1));
    assert!(tl
        .call(async {
            slow.await;
            Ok::<_, std::io::Error>(())
        })
        .await
        .is_err());

    let bh = m.bulkhead.bulkhead("payments");
    let held = bh.try_acquire_permission().unwrap();
    assert!(bh.try_acquire_permission().is_err());
    drop(held);

    let rl = m.rate_limiter.rate_limiter("payments");
    rl.try_acquire_permission(1).unwrap();
    assert!(rl.try_acquire_permission(1).is_err());

    let text = lines.text();
    for expected in [
        "WARN breaker::circuit_breaker: CircuitBreaker 'payments' changed state from CLOSED to OPEN",
        "WARN breaker::circuit_breaker: CircuitBreaker 'payments' rejected 1 call",
        "WARN breaker::retry: Retry 'payments' calls that failed after their last attempt: 1",
        "WARN breaker::time_limiter: TimeLimiter 'payments' calls timed out: 1",
        "WARN breaker::bulkhead: Bulkhead 'payments' calls rejected (full): 1",
        "WARN breaker::rate_limiter: RateLimiter 'payments' calls rejected (rate limited): 1",
    ] {
        assert!(text.contains(expected), "no '{expected}' in\n{text}");
    }
    // An instance created later is logged too.
    let later = live.registry().circuit_breaker("later");
    later.transition_to_forced_open_state().unwrap();
    assert_eq!(
        lines.with("'later' changed state").len(),
        1,
        "{}",
        lines.text()
    );
}

#[tokio::test(start_paused = true)]
async fn the_last_window_is_logged_when_the_instance_goes_quiet() {
    let (lines, _guard) = capture();
    let (_dir, live) = live();
    live.trace_events();

    let cb = live.registry().circuit_breaker("payments");
    // OPEN (for 60 s by default) publishes NOT_PERMITTED; FORCED_OPEN does not.
    cb.transition_to_open_state().unwrap();
    for _ in 0..5 {
        assert!(cb.try_acquire_permission().is_err());
    }
    let rl = live
        .module_registries()
        .rate_limiter
        .rate_limiter("payments");
    rl.try_acquire_permission(1).unwrap();
    for _ in 0..3 {
        assert!(rl.try_acquire_permission(1).is_err());
    }
    // The first of each is logged at once; the others wait for the window to end.
    assert_eq!(lines.with("rejected").len(), 2, "{}", lines.text());
    assert_eq!(lines.with("'payments' rejected 1 call").len(), 1);
    assert_eq!(lines.with("(rate limited): 1").len(), 1);

    // Nothing more happens: the window (10 s) ends on tokio's virtual clock.
    tokio::time::sleep(Duration::from_secs(9)).await;
    assert_eq!(lines.with("rejected").len(), 2, "{}", lines.text());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let text = lines.text();
    assert_eq!(lines.with("'payments' rejected 4 calls").len(), 1, "{text}");
    assert_eq!(lines.with("(rate limited): 2").len(), 1, "{text}");
    assert_eq!(lines.with("rejected").len(), 4, "{text}");

    // Logged once: a longer quiet period adds nothing.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(lines.with("rejected").len(), 4, "{}", lines.text());
}

#[tokio::test(start_paused = true)]
async fn a_state_change_logs_the_window_so_far() {
    let (lines, _guard) = capture();
    let (_dir, live) = live();
    live.trace_events();
    let cb = live.registry().circuit_breaker("payments");
    // OPEN (for 60 s by default) publishes NOT_PERMITTED; FORCED_OPEN does not.
    cb.transition_to_open_state().unwrap();
    for _ in 0..3 {
        assert!(cb.try_acquire_permission().is_err());
    }
    cb.transition_to_closed_state().unwrap();
    assert_eq!(
        lines
            .with("CircuitBreaker 'payments' rejected 2 more calls while OPEN")
            .len(),
        1,
        "{}",
        lines.text()
    );
    // The timer finds nothing left to log.
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(lines.with("rejected").len(), 2, "{}", lines.text());
}

#[test]
fn a_rejected_reload_prints_its_bad_line_once() {
    let (lines, _guard) = capture();
    let (dir, live) = live();
    let path = dir.path().join("application.yml");
    std::fs::write(
        &path,
        "resilience4j.circuitbreaker.instances.payments:\n  slidingWindowSize: abc\n",
    )
    .unwrap();
    assert!(live.reload().is_err());
    // Unchanged content is not tried (nor logged) again.
    let _ = live.reload_if_changed();
    let text = lines.text();
    assert_eq!(text.matches(" ERROR breaker::reload:").count(), 1, "{text}");
    assert_eq!(
        text.matches("application.yml:2:22: resilience4j.circuitbreaker.instances.payments.slidingWindowSize = 'abc'")
            .count(),
        1,
        "{text}"
    );
    assert_eq!(
        live.registry()
            .circuit_breaker("payments")
            .config()
            .sliding_window_size(),
        2
    );
}

/// Issue 24: in JSON output the reload line's `files`, `added` and `removed` are JSON
/// arrays: real arrays when built with `--cfg tracing_unstable` and feature `valuable`,
/// otherwise strings holding the array's JSON text (see `breaker_config`'s README).
#[test]
fn reload_list_fields_are_json_arrays() {
    let lines = Lines::default();
    let w = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::INFO)
        .with_writer(move || w.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let (dir, live) = live();
    let path = dir.path().join("application.yml");
    std::fs::write(
        &path,
        "resilience4j.circuitbreaker.instances:\n  orders: { slidingWindowSize: 4 }\n",
    )
    .unwrap();
    live.reload().unwrap();
    let line = lines
        .with("config reloaded")
        .pop()
        .unwrap_or_else(|| panic!("no reload line in {}", lines.text()));
    let json: serde_json::Value = serde_json::from_str(&line).unwrap();
    let fields = &json["fields"];
    let array = |key: &str| -> serde_json::Value {
        match &fields[key] {
            serde_json::Value::String(text) => serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("{key} = {text:?} is not JSON: {e}")),
            other => other.clone(),
        }
    };
    assert_eq!(
        array("files"),
        serde_json::json!([path.display().to_string()])
    );
    assert_eq!(array("added"), serde_json::json!(["orders"]));
    // Every instance of FILE but the new file's: circuit breakers by name, the other
    // modules' instances as `module:name`.
    assert_eq!(
        array("removed"),
        serde_json::json!([
            "bulkhead:payments",
            "payments",
            "ratelimiter:payments",
            "retry:payments",
            "threadpoolbulkhead:reports",
            "timelimiter:payments"
        ])
    );
    #[cfg(all(tracing_unstable, feature = "valuable"))]
    assert!(fields["files"].is_array(), "{line}");
}
