//! Issue 23 item 3: a long `baseConfig` chain must cost no stack. Resilience4j resolves a
//! chain by recursion (one frame per link); a chain of 250-300 configs used to overflow the
//! stack here in a release build and about 60 in a debug build on a 2 MiB thread, which is
//! what a reload runs on. Every module is loaded on a 2 MiB thread with a chain far longer
//! than that, and a reload into a deep chain that is invalid changes nothing.

use std::fs;
use std::time::Duration;

use breaker_config::{Format, LiveConfig, Loaded, Loader};
use breaker_core::ErrorCatalog;

/// Links in every chain: more than what overflowed a release build (250-300) and six times
/// what overflowed a debug build (about 60). Resolution is quadratic in the chain length, as
/// Resilience4j's is (each config builds its whole chain), so the test keeps it moderate.
const LINKS: usize = 400;

/// The module sections, each with one setting the innermost config sets.
const MODULES: &[(&str, &str)] = &[
    ("circuitbreaker", "slidingWindowSize: 7"),
    ("retry", "maxAttempts: 7"),
    ("bulkhead", "maxConcurrentCalls: 7"),
    ("thread-pool-bulkhead", "queueCapacity: 7"),
    ("ratelimiter", "limitForPeriod: 7"),
    ("timelimiter", "timeoutDuration: 7s"),
];

/// `instances.a -> c0 -> c1 -> ... -> c{LINKS-1}`, the last config setting `innermost`.
fn chain(section: &str, innermost: &str, links: usize) -> String {
    let mut y = format!("resilience4j.{section}:\n  configs:\n");
    for i in 0..links - 1 {
        y.push_str(&format!("    c{i}: {{ baseConfig: c{} }}\n", i + 1));
    }
    y.push_str(&format!("    c{}: {{ {innermost} }}\n", links - 1));
    y.push_str("  instances:\n    a: { baseConfig: c0 }\n");
    y
}

/// Runs `f` on a thread with a 2 MiB stack, the size a reload thread has.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .expect("no stack overflow")
}

fn load(text: String) -> Loaded {
    on_small_stack(move || {
        Loader::new()
            .env(Default::default())
            .load_str("application.yml", Format::Yaml, &text)
            .unwrap()
    })
}

#[test]
fn every_module_resolves_a_long_chain_on_a_small_stack() {
    for (section, innermost) in MODULES {
        let l = load(chain(section, innermost, LINKS));
        assert!(l.errors().is_empty(), "{section}: {:?}", l.errors());
        let m = &l.modules;
        // The innermost config's value reaches the instance through every link.
        match *section {
            "circuitbreaker" => assert_eq!(l.config.instances["a"].sliding_window_size.value, 7),
            "retry" => assert_eq!(m.retry.instances["a"].max_attempts.value, 7),
            "bulkhead" => assert_eq!(m.bulkhead.instances["a"].max_concurrent_calls.value, 7),
            "thread-pool-bulkhead" => {
                assert_eq!(
                    m.thread_pool_bulkhead.instances["a"].queue_capacity.value,
                    7
                )
            }
            "ratelimiter" => assert_eq!(m.rate_limiter.instances["a"].limit_for_period.value, 7),
            "timelimiter" => assert_eq!(
                m.time_limiter.instances["a"].timeout_duration.value,
                Duration::from_secs(7)
            ),
            _ => unreachable!(),
        }
    }
}

/// A long chain that closes on itself is refused with the chain named, not by overflowing.
#[test]
fn a_long_circular_chain_is_an_error_naming_the_chain() {
    for (section, _) in MODULES {
        let text = chain(section, "baseConfig: c0", LINKS);
        let l = load(text);
        let errors = l.errors();
        assert!(!errors.is_empty(), "{section}");
        let e = errors[0].to_string();
        assert!(e.contains("Circular reference"), "{section}: {e}");
        assert!(e.contains("c0 -> c1 -> c2"), "{section}: {e}");
        assert!(e.contains("baseConfig"), "{section}: {e}");
    }
}

const SMALL: &str = "
resilience4j.circuitbreaker:
  instances:
    a: { slidingWindowSize: 3 }
";

/// A file rewritten into a deep chain that is invalid (its innermost config sets a
/// threshold of 0) is refused on the 2 MiB reload thread, and the config in force stays.
/// Rewritten into a deep valid chain, the reload applies it.
#[test]
fn a_reload_into_a_deep_chain_changes_nothing_when_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    fs::write(&path, SMALL).unwrap();
    let live = LiveConfig::load(
        &[&path],
        Loader::new().env(Default::default()),
        ErrorCatalog::new(),
    )
    .unwrap();
    let cb = live.registry().circuit_breaker("a");
    assert_eq!(cb.config().sliding_window_size(), 3);

    fs::write(
        &path,
        chain("circuitbreaker", "failureRateThreshold: 0", LINKS),
    )
    .unwrap();
    let live2 = live.clone();
    let r = on_small_stack(move || live2.reload().map(|_| ()).map_err(|e| e.to_string()));
    let e = r.unwrap_err();
    assert!(e.contains("failureRateThreshold"), "{e}");
    assert_eq!(cb.config().sliding_window_size(), 3);
    assert_eq!(live.modules().retry.instances.len(), 0);

    fs::write(
        &path,
        chain("circuitbreaker", "slidingWindowSize: 9", LINKS),
    )
    .unwrap();
    let live3 = live.clone();
    on_small_stack(move || live3.reload().map(|_| ()).map_err(|e| e.to_string())).unwrap();
    assert_eq!(cb.config().sliding_window_size(), 9);
}
