//! breaker's own `breaker.*` keys (issue #16): `breaker.circuitbreaker.instances.<name>.store`
//! and `breaker.redis.*` bind without a warning; any other key under `breaker.` is warned
//! about; a bad value is an error naming its key, file and line.

use std::time::Duration;

use breaker_config::{Format, Loaded, Loader, StoreKind};

fn yaml(text: &str) -> Loaded {
    Loader::new()
        .env(Default::default())
        .load_str("application.yml", Format::Yaml, text)
        .unwrap()
}

const SHARED: &str = "\
resilience4j.circuitbreaker.instances.paymentService.slidingWindowSize: 10
breaker:
  circuitbreaker:
    instances:
      paymentService:
        store: redis
      inventory:
        store: local
  redis:
    url: redis://app:s3cret@cache:6379/0
    key-prefix: 'svc:'
    refresh-interval: 50ms
    timeout: 20ms
    trial-lease: 5s
    key-ttl: 1h
";

#[test]
fn documented_keys_bind_without_warnings() {
    let l = yaml(SHARED);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert!(l.errors().is_empty(), "{:?}", l.errors());
    let s = &l.shared_store;
    assert_eq!(s.store_of("paymentService"), StoreKind::Redis);
    assert_eq!(s.store_of("inventory"), StoreKind::Local);
    assert_eq!(s.store_of("unlisted"), StoreKind::Local);
    assert_eq!(
        s.redis.url.as_deref(),
        Some("redis://app:s3cret@cache:6379/0")
    );
    assert_eq!(s.redis.key_prefix.as_deref(), Some("svc:"));
    assert_eq!(s.redis.refresh_interval, Some(Duration::from_millis(50)));
    assert_eq!(s.redis.timeout, Some(Duration::from_millis(20)));
    assert_eq!(s.redis.trial_lease, Some(Duration::from_secs(5)));
    assert_eq!(s.redis.key_ttl, Some(Duration::from_secs(3600)));
}

#[test]
fn the_report_shows_the_url_without_credentials() {
    let l = yaml(SHARED);
    let r = breaker_config::json::report(&l);
    let shared = &r["sharedState"];
    assert_eq!(shared["instances"]["paymentService"], "redis");
    assert_eq!(shared["redis"]["url"], "redis://cache:6379/0");
    assert_eq!(shared["redis"]["refreshIntervalMs"], 50);
    assert!(!r.to_string().contains("s3cret"));
    assert!(!format!("{:?}", l.shared_store).contains("s3cret"));
}

#[test]
fn without_breaker_keys_nothing_is_reported() {
    let l = yaml("resilience4j.circuitbreaker.instances.a.slidingWindowSize: 5\n");
    assert!(!l.shared_store.uses_redis());
    assert!(breaker_config::json::report(&l)
        .get("sharedState")
        .is_none());
}

#[test]
fn unknown_keys_under_breaker_are_warned_about() {
    let l = yaml(
        "breaker.redis.urll: redis://x:1\nbreaker.circuitbreaker.instances.a.stor: redis\nbreaker.other: 1\n",
    );
    let keys: Vec<&str> = l.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "breaker.redis.urll",
            "breaker.circuitbreaker.instances.a.stor",
            "breaker.other"
        ]
    );
}

#[test]
fn a_bad_store_is_an_error_with_its_line() {
    let l =
        yaml("breaker:\n  circuitbreaker:\n    instances:\n      a:\n        store: memcached\n");
    let e = l.errors();
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].key, "breaker.circuitbreaker.instances.a.store");
    assert_eq!(e[0].allowed, "local, redis");
    assert_eq!(e[0].origin.as_ref().unwrap().line, 5);
}

#[test]
fn store_redis_needs_a_url() {
    let l = yaml("breaker.circuitbreaker.instances.a.store: redis\n");
    let e = l.errors();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].message.contains("breaker.redis.url"),
        "{}",
        e[0].message
    );
}

#[test]
fn bad_durations_are_errors() {
    let l = yaml("breaker.redis.timeout: soon\nbreaker.redis.refresh-interval: 0ms\n");
    let keys: Vec<&str> = l.errors().iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        ["breaker.redis.refresh-interval", "breaker.redis.timeout"]
    );
}

/// Issue #29: rate limiters and semaphore bulkheads take `store` too, and
/// `breaker.redis.replica-lease` binds; each module's store is its own.
#[test]
fn rate_limiter_and_bulkhead_stores_bind() {
    let l = yaml(
        "breaker:\n  ratelimiter.instances.providerApi.store: redis\n  bulkhead:\n    instances:\n      pool:\n        store: REDIS\n      other:\n        store: local\n  redis.url: redis://cache:6379/0\n  redis.replica-lease: 3s\n",
    );
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert!(l.errors().is_empty(), "{:?}", l.errors());
    let s = &l.shared_store;
    assert!(s.uses_redis());
    assert_eq!(s.rate_limiter_store_of("providerApi"), StoreKind::Redis);
    assert_eq!(s.bulkhead_store_of("pool"), StoreKind::Redis);
    assert_eq!(s.bulkhead_store_of("other"), StoreKind::Local);
    // The same name in another module is not shared.
    assert_eq!(s.store_of("providerApi"), StoreKind::Local);
    assert_eq!(s.bulkhead_store_of("providerApi"), StoreKind::Local);
    assert_eq!(s.redis.replica_lease, Some(Duration::from_secs(3)));
    let r = breaker_config::json::report(&l);
    assert_eq!(r["sharedState"]["rateLimiters"]["providerApi"], "redis");
    assert_eq!(r["sharedState"]["bulkheads"]["pool"], "redis");
    assert_eq!(r["sharedState"]["redis"]["replicaLeaseMs"], 3000);
}

#[test]
fn a_rate_limiter_store_redis_needs_a_url_and_a_known_value() {
    let l = yaml("breaker.ratelimiter.instances.api.store: redis\n");
    let e = l.errors();
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].key, "breaker.ratelimiter.instances.api.store");
    assert!(
        e[0].message.contains("breaker.redis.url"),
        "{}",
        e[0].message
    );
    let l = yaml("breaker:\n  bulkhead:\n    instances:\n      b:\n        store: etcd\n");
    let e = l.errors();
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].key, "breaker.bulkhead.instances.b.store");
    assert_eq!(e[0].allowed, "local, redis");
    assert_eq!(e[0].origin.as_ref().unwrap().line, 5);
}
