//! Bounded memory for many names (issue #9, part 6): one breaker per failure domain (per
//! host, per tenant) means a service creates and removes breakers for ever new names. After
//! 1,000,000 distinct names created, used (calls, a rejection, recent events) and removed,
//! the process holds no more memory than before, within a few MB.
//!
//! Alone in its test binary, so no other test's allocations move the resident size.

#![cfg(target_os = "linux")]

use std::time::Duration;

use breaker_core::{CircuitBreakerConfig, Registry, State};

/// Resident memory in bytes (`/proc/self/statm`, second field, in pages).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("procfs");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("resident pages");
    pages * 4096
}

fn name(i: u64) -> String {
    if i.is_multiple_of(10) {
        // Longer than a rejection carries inline: shared instead of copied.
        format!("tenant-{i:07}.eu-west-1.payments.internal.example.com:8443")
    } else {
        format!("tenant-{i:07}")
    }
}

/// Two registries: `plain`, and `buffered`, which keeps every breaker's recent events (one
/// name in ten goes there: events carry the name too).
fn create_use_remove(plain: &Registry, buffered: &Registry, range: std::ops::Range<u64>) {
    for i in range {
        let n = name(i);
        let registry = if i % 10 == 3 { buffered } else { plain };
        let cb = registry.circuit_breaker(&n);
        cb.try_acquire_permission().unwrap().on_success();
        if i.is_multiple_of(8) {
            cb.transition_to_open_state().unwrap();
            let rejected = cb.try_acquire_permission().unwrap_err();
            assert_eq!(rejected.circuit_breaker_name(), n);
            assert_eq!(rejected.state(), State::Open);
        }
        if i % 10 == 3 {
            assert!(registry.recent_events(&n).is_some_and(|e| !e.is_empty()));
        }
        registry.remove(&n).expect("created above");
    }
}

#[test]
fn a_million_distinct_names_leave_no_memory_behind() {
    const NAMES: u64 = 1_000_000;
    let registry = || {
        Registry::with_default_config(
            CircuitBreakerConfig::builder()
                .sliding_window_size(10)
                .wait_duration_in_open_state(Duration::from_secs(60))
                .build()
                .unwrap(),
        )
    };
    let (plain, buffered) = (registry(), registry());
    buffered.enable_event_buffers();
    // Warm up: the allocator's pools, the registries' maps, the clock thread.
    create_use_remove(&plain, &buffered, NAMES..NAMES + 20_000);
    let before = resident_bytes();
    create_use_remove(&plain, &buffered, 0..NAMES);
    let after = resident_bytes();
    assert!(plain.all().is_empty() && buffered.all().is_empty());
    let grown = after.saturating_sub(before);
    eprintln!(
        "resident before {} KiB, after {} KiB, grown {} KiB",
        before / 1024,
        after / 1024,
        grown / 1024
    );
    assert!(
        grown < 4 << 20,
        "{NAMES} names created and removed left {} KiB behind",
        grown / 1024
    );
}
