//! Fleet-wide limits under faults (issue #29): Redis stopped, paused or restarted never
//! fails a call nor holds it beyond the call-path bound; the limit falls back to each
//! process's share, `ceil(limit / replicas)`, and the shared limit holds again once Redis
//! is back. Three stores in this process count as three replicas (each has its own tag).

mod support;

use std::time::{Duration, Instant};

use breaker_core::bulkhead::{Bulkhead, BulkheadConfig};
use breaker_core::ratelimiter::{RateLimiter, RateLimiterConfig};
use breaker_redis::{call_path_bound, RedisStore};
use support::fleet_child::options;
use support::RedisServer;

/// Load on a shared 2-core machine on top of the bound (the bound is 150 ms).
const SLACK: Duration = Duration::from_millis(1000);

struct Replica {
    store: RedisStore,
    limiter: RateLimiter,
    bulkhead: Bulkhead,
}

fn replicas(redis: &RedisServer) -> Vec<Replica> {
    (0..3)
        .map(|_| {
            let store = RedisStore::open(&redis.url(), options(2000, 50)).unwrap();
            let limiter = RateLimiter::new(
                "api",
                RateLimiterConfig::builder()
                    .limit_for_period(9)
                    .limit_refresh_period(Duration::from_secs(5))
                    .timeout_duration(Duration::ZERO)
                    .build()
                    .unwrap(),
            );
            store.attach_rate_limiter(&limiter).unwrap();
            let bulkhead = Bulkhead::new(
                "pool",
                BulkheadConfig::builder()
                    .max_concurrent_calls(6)
                    .build()
                    .unwrap(),
            );
            store.attach_bulkhead(&bulkhead).unwrap();
            Replica {
                store,
                limiter,
                bulkhead,
            }
        })
        .collect()
}

/// Admitted of `n` tries, and the slowest try.
fn tries(limiter: &RateLimiter, n: u32) -> (u32, Duration) {
    let mut admitted = 0;
    let mut slowest = Duration::ZERO;
    for _ in 0..n {
        let t = Instant::now();
        if limiter.try_acquire_permission(1).is_ok() {
            admitted += 1;
        }
        slowest = slowest.max(t.elapsed());
    }
    (admitted, slowest)
}

fn wait_reachable(r: &[Replica]) {
    let end = Instant::now() + Duration::from_secs(15);
    while !r.iter().all(|r| r.store.is_reachable()) {
        assert!(Instant::now() < end, "the stores never reconnected");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn redis_stopped_falls_back_to_the_local_share_and_reconverges() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let r = replicas(&redis);
    // Shared: 9 per 5 s across the three (one try each registers them; the 9 includes
    // those three).
    let admitted: u32 = r.iter().map(|r| tries(&r.limiter, 5).0).sum();
    assert_eq!(admitted, 9, "9 permits per cycle across the fleet");
    // Every process has heard (a heartbeat each refresh_interval) that there are 3.
    std::thread::sleep(Duration::from_millis(500));
    redis.stop();
    let bound = call_path_bound(r[0].store.options());
    for replica in &r {
        let (admitted, slowest) = tries(&replica.limiter, 6);
        assert_eq!(admitted, 3, "local share ceil(9 / 3) = 3");
        assert!(slowest <= bound + SLACK, "a call waited {slowest:?}");
        // Bulkhead: share ceil(6 / 3) = 2.
        let a = replica.bulkhead.try_acquire_permission();
        let b = replica.bulkhead.try_acquire_permission();
        let c = replica.bulkhead.try_acquire_permission();
        assert!(a.is_ok() && b.is_ok() && c.is_err(), "local share 2");
    }
    redis.restart();
    wait_reachable(&r);
    // Reconverged: Redis lost the state (no persistence), the fleet starts a new cycle of 9.
    let admitted: u32 = r.iter().map(|r| tries(&r.limiter, 5).0).sum();
    assert_eq!(admitted, 9, "9 permits per cycle across the fleet again");
    // Bulkhead: 6 across the fleet again.
    let held: Vec<_> = r
        .iter()
        .flat_map(|r| (0..3).filter_map(|_| r.bulkhead.try_acquire_permission().ok()))
        .collect();
    assert_eq!(held.len(), 6, "6 calls in flight across the fleet");
}

#[test]
fn a_paused_redis_holds_no_call_beyond_the_bound() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let r = replicas(&redis);
    assert_eq!(tries(&r[0].limiter, 1).0, 1);
    std::thread::sleep(Duration::from_millis(500));
    redis.pause();
    let bound = call_path_bound(r[0].store.options());
    let t = Instant::now();
    let admitted = r[1].limiter.try_acquire_permission(1).is_ok();
    let waited = t.elapsed();
    eprintln!(
        "a call with Redis paused took {} ms (bound {} ms)",
        waited.as_millis(),
        bound.as_millis()
    );
    assert!(admitted, "the local share admits it");
    // It asked Redis first: its request timed out (one `timeout`, 50 ms) before it fell
    // back.
    let timeout = r[0].store.options().timeout;
    assert!(
        waited >= timeout.saturating_sub(Duration::from_millis(2)),
        "{waited:?}"
    );
    assert!(waited <= bound + SLACK, "a call waited {waited:?}");
    // Marked down: the next calls do not wait at all.
    let t = Instant::now();
    let permit = r[1].bulkhead.try_acquire_permission();
    assert!(permit.is_ok());
    assert!(t.elapsed() <= SLACK, "{:?}", t.elapsed());
    redis.resume();
    wait_reachable(&r);
}

/// Per-key instances shared through Redis: each tenant has its own 9 per cycle across the
/// fleet (two stores here), and one tenant spending its limit leaves the other's whole.
#[test]
fn keyed_limiters_share_each_key_across_the_fleet() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet: Vec<_> = (0..2)
        .map(|_| {
            let store = RedisStore::open(&redis.url(), options(2000, 50)).unwrap();
            let registry = breaker_core::ratelimiter::RateLimiterRegistry::new();
            registry.configure_instance(
                "api",
                RateLimiterConfig::builder()
                    .limit_for_period(9)
                    .limit_refresh_period(Duration::from_secs(5))
                    .timeout_duration(Duration::ZERO)
                    .build()
                    .unwrap(),
            );
            let keyed = registry.keyed("api", Default::default());
            assert!(store.attach_keyed_rate_limiters(&keyed));
            (store, keyed)
        })
        .collect();
    let a: u32 = fleet
        .iter()
        .map(|(_, k)| tries(&k.get("tenant-a"), 6).0)
        .sum();
    assert_eq!(a, 9, "9 per cycle for tenant-a across both processes");
    let b: u32 = fleet
        .iter()
        .map(|(_, k)| tries(&k.get("tenant-b"), 3).0)
        .sum();
    assert_eq!(b, 6, "tenant-b has its own 9");
    let exists: bool = redis::cmd("EXISTS")
        .arg("breaker:{rl:api/tenant-b}")
        .query(&mut redis.connection())
        .unwrap();
    assert!(exists);
}
