use std::time::Duration;

use super::*;
use crate::clock::ManualClock;
use crate::ratelimiter::RateLimiterConfig;
use crate::CircuitBreakerConfig;

fn limits(max_keys: usize, clock: &Arc<ManualClock>) -> KeyLimits {
    KeyLimits {
        max_keys,
        idle: Duration::from_secs(60),
        clock: clock.clone(),
    }
}

#[test]
fn each_key_gets_its_own_limiter_with_the_configured_limit() {
    let clock = Arc::new(ManualClock::at_epoch_millis(0));
    let registry = RateLimiterRegistry::new();
    registry.configure_instance(
        "api",
        RateLimiterConfig::builder()
            .limit_for_period(2)
            .limit_refresh_period(Duration::from_secs(1))
            .timeout_duration(Duration::ZERO)
            .clock(clock.clone())
            .build()
            .unwrap(),
    );
    let keyed = registry.keyed("api", limits(10, &clock));
    let a = keyed.get("tenant-a");
    assert_eq!(a.name(), "api/tenant-a");
    // 2 per period for tenant-a, and 2 more for tenant-b: one tenant cannot starve another.
    assert!(a.try_acquire_permission(1).is_ok());
    assert!(keyed.get("tenant-a").try_acquire_permission(1).is_ok());
    assert!(keyed.get("tenant-a").try_acquire_permission(1).is_err());
    assert!(keyed.get("tenant-b").try_acquire_permission(2).is_ok());
    assert!(keyed.get("tenant-a").ptr_eq(&a));
    assert_eq!(keyed.keys(), ["tenant-a", "tenant-b"]);
}

#[test]
fn active_keys_are_bounded_idle_first_then_least_recently_used() {
    let clock = Arc::new(ManualClock::at_epoch_millis(0));
    let registry = Registry::new();
    registry.configure_instance(
        "pay",
        CircuitBreakerConfig::builder()
            .sliding_window_size(2)
            .minimum_number_of_calls(2)
            .build()
            .unwrap(),
    );
    let keyed = registry.keyed("pay", limits(3, &clock));
    let a = keyed.get("a");
    clock.advance(Duration::from_secs(10));
    keyed.get("b");
    clock.advance(Duration::from_secs(10));
    keyed.get("c");
    // Full (3): none idle for 60 s yet, so the least recently used ("a") goes.
    keyed.get("d");
    assert_eq!(keyed.keys(), ["b", "c", "d"]);
    assert!(keyed.find("a").is_none());
    assert!(!keyed.get("a").ptr_eq(&a), "a dropped key starts afresh");
    assert_eq!(keyed.keys(), ["a", "c", "d"]);
    // 65 s later "c" and "d" are idle (last used 65 s ago, idle after 60 s); "a" is used
    // again first, so making room for "e" drops both idle keys and keeps "a".
    clock.advance(Duration::from_secs(65));
    keyed.get("a");
    keyed.get("e");
    assert_eq!(keyed.keys(), ["a", "e"], "idle keys dropped together");
    // Each key's breaker has the configured window: two failures open "e" only.
    let e = keyed.get("e");
    for _ in 0..2 {
        e.try_acquire_permission().unwrap().on_error();
    }
    assert_eq!(e.state(), crate::State::Open);
    assert_eq!(keyed.get("a").state(), crate::State::Closed);
    assert_eq!(e.config().sliding_window_size(), 2);
}

#[test]
fn bulkheads_per_key_and_the_creation_hook() {
    let registry = BulkheadRegistry::new();
    registry.configure_instance(
        "pool",
        crate::bulkhead::BulkheadConfig::builder()
            .max_concurrent_calls(1)
            .build()
            .unwrap(),
    );
    let keyed = registry.keyed("pool", KeyLimits::default());
    let created = Arc::new(Mutex::new(Vec::new()));
    let seen = created.clone();
    assert!(keyed.on_create(move |b: &Bulkhead| seen.lock().unwrap().push(b.name().to_string())));
    assert!(!keyed.on_create(|_| {}));
    let x = keyed.get("x");
    let _held = x.try_acquire_permission().unwrap();
    assert!(x.try_acquire_permission().is_err());
    assert!(keyed.get("y").try_acquire_permission().is_ok());
    assert_eq!(*created.lock().unwrap(), ["pool/x", "pool/y"]);
}
