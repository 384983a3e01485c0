//! Issue 23 item 7, "A bulkhead's limit drifts for good": concurrent changes of a
//! bulkhead's `maxConcurrentCalls` (directly, and through its registry racing a reload)
//! apply one after the other. The input: two threads call `change_config` with
//! limits between 20 and 60, then one more `change_config(25)`; it reported `available 78 /
//! max_allowed 25` with nothing in flight. Expected: 25 / 25, and exactly 25 permits.

use std::sync::Barrier;
use std::thread;

use breaker_core::bulkhead::{Bulkhead, BulkheadConfig, BulkheadRegistry};

fn config(max: i64) -> BulkheadConfig {
    BulkheadConfig::builder()
        .max_concurrent_calls(max)
        .build()
        .unwrap()
}

/// Limits between 20 and 60, different for each thread and round.
fn limit(thread: u64, round: u64) -> i64 {
    20 + ((thread * 7919 + round * 104_729) % 41) as i64
}

/// Exactly `n` permits can be taken, and all of them are free.
fn holds_exactly(b: &Bulkhead, n: usize) {
    let m = b.metrics();
    assert_eq!(m.available_concurrent_calls as usize, n);
    assert_eq!(m.max_allowed_concurrent_calls as usize, n);
    let permits: Vec<_> = (0..n)
        .map(|_| b.try_acquire_permission().expect("within the limit"))
        .collect();
    assert!(b.try_acquire_permission().is_err(), "one over the limit");
    drop(permits);
    assert_eq!(b.metrics().available_concurrent_calls as usize, n);
}

const ROUNDS: u64 = 2_000;

#[test]
fn two_threads_changing_the_limit_then_25_leave_exactly_25() {
    let b = Bulkhead::new("drift", config(25));
    let start = Barrier::new(2);
    thread::scope(|s| {
        for t in 0..2 {
            let (b, start) = (&b, &start);
            s.spawn(move || {
                start.wait();
                for r in 0..ROUNDS {
                    b.change_config(config(limit(t, r)));
                }
            });
        }
    });
    let m = b.metrics();
    assert_eq!(m.available_concurrent_calls, m.max_allowed_concurrent_calls);
    b.change_config(config(25));
    holds_exactly(&b, 25);
}

#[test]
fn registry_changes_racing_a_reload_leave_the_instance_on_the_registrys_config() {
    let registry = BulkheadRegistry::new();
    let b = registry.configure_instance("raced", config(25));
    let start = Barrier::new(3);
    thread::scope(|s| {
        let (registry, start) = (&registry, &start);
        s.spawn(move || {
            start.wait();
            for r in 0..ROUNDS {
                registry.configure_instance("raced", config(limit(0, r)));
            }
        });
        s.spawn(move || {
            start.wait();
            for r in 0..ROUNDS {
                // What a reload does.
                registry.apply(
                    config(25),
                    Vec::new(),
                    vec![("raced".to_string(), config(limit(1, r)))],
                );
            }
        });
        s.spawn(move || {
            start.wait();
            for r in 0..ROUNDS {
                registry.set_default_config(config(limit(2, r)));
                registry.unconfigure_instance("raced");
            }
        });
    });
    // Whatever won, the instance runs the config its registry records for it.
    let recorded = registry
        .instance_config("raced")
        .unwrap_or_else(|| registry.default_config());
    assert_eq!(
        b.config().max_concurrent_calls(),
        recorded.max_concurrent_calls()
    );
    let m = b.metrics();
    assert_eq!(m.available_concurrent_calls, m.max_allowed_concurrent_calls);
    registry.configure_instance("raced", config(25));
    holds_exactly(&b, 25);
}
