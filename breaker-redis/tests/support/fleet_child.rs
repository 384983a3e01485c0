//! A fleet replica process (issue #29): the test binary run again as the test
//! `fleet_replica_process` (see [`Replica::spawn_test`](super::Replica::spawn_test)), with
//! one rate limiter and one semaphore bulkhead shared through the store, answering one
//! line per command. Every call the rate limiter admits is sent to the dependency (a TCP
//! server of the test process) as one line: `<replica> <wall ms when sent>`.

use std::io::{BufRead, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use breaker_core::bulkhead::{Bulkhead, BulkheadConfig, BulkheadPermit};
use breaker_core::ratelimiter::{RateLimiter, RateLimiterConfig};
use breaker_redis::{RedisStore, RedisStoreOptions};

use super::{wall_ms, Replica};

/// The settings of a fleet replica.
pub struct FleetSpec<'a> {
    pub url: &'a str,
    pub id: usize,
    /// `limitForPeriod` and `limitRefreshPeriod` (ms) of the limiter `api`.
    pub limit: u32,
    pub period_ms: u64,
    /// `maxConcurrentCalls` of the bulkhead `pool`.
    pub max_calls: u32,
    /// The store's `replica_lease` (ms).
    pub replica_lease_ms: u64,
    /// The store's `timeout` (ms).
    pub timeout_ms: u64,
    /// The dependency's port.
    pub dependency: u16,
}

impl FleetSpec<'_> {
    pub fn spawn(&self) -> Replica {
        Replica::spawn_test(
            "fleet_replica_process",
            &[
                ("FLEET_REPLICA", self.id.to_string()),
                ("FLEET_URL", self.url.into()),
                ("FLEET_LIMIT", self.limit.to_string()),
                ("FLEET_PERIOD_MS", self.period_ms.to_string()),
                ("FLEET_MAX_CALLS", self.max_calls.to_string()),
                ("FLEET_LEASE_MS", self.replica_lease_ms.to_string()),
                ("FLEET_TIMEOUT_MS", self.timeout_ms.to_string()),
                ("FLEET_DEPENDENCY", self.dependency.to_string()),
            ],
        )
    }
}

/// The store options of the fleet tests: the defaults but `replica_lease` and `timeout`.
pub fn options(replica_lease_ms: u64, timeout_ms: u64) -> RedisStoreOptions {
    RedisStoreOptions {
        replica_lease: Duration::from_millis(replica_lease_ms),
        timeout: Duration::from_millis(timeout_ms),
        ..RedisStoreOptions::default()
    }
}

/// Runs a fleet replica when this process was started as one.
pub fn run() {
    let Ok(id) = std::env::var("FLEET_REPLICA") else {
        return;
    };
    let env = |k: &str| std::env::var(k).unwrap().parse::<u64>().unwrap();
    let store = RedisStore::open(
        &std::env::var("FLEET_URL").unwrap(),
        options(env("FLEET_LEASE_MS"), env("FLEET_TIMEOUT_MS")),
    )
    .unwrap();
    let limiter = RateLimiter::new(
        "api",
        RateLimiterConfig::builder()
            .limit_for_period(env("FLEET_LIMIT") as i64)
            .limit_refresh_period(Duration::from_millis(env("FLEET_PERIOD_MS")))
            .timeout_duration(Duration::ZERO)
            .build()
            .unwrap(),
    );
    store.attach_rate_limiter(&limiter).unwrap();
    let bulkhead: &'static Bulkhead = Box::leak(Box::new(Bulkhead::new(
        "pool",
        BulkheadConfig::builder()
            .max_concurrent_calls(env("FLEET_MAX_CALLS") as i64)
            .build()
            .unwrap(),
    )));
    store.attach_bulkhead(bulkhead).unwrap();
    let mut dependency = TcpStream::connect(("127.0.0.1", env("FLEET_DEPENDENCY") as u16)).unwrap();
    dependency.set_nodelay(true).unwrap();
    let mut held: Vec<BulkheadPermit<'static>> = Vec::new();
    let say = |s: String| println!("@@ {s}");
    say("ready".into());
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["hammer", ms] => {
                // Calls for `ms`, as fast as refusals allow (1 ms pause after one).
                let end = Instant::now() + Duration::from_millis(ms.parse().unwrap());
                let (mut admitted, mut refused, mut slowest) = (0u32, 0u32, Duration::ZERO);
                while Instant::now() < end {
                    let t = Instant::now();
                    let permitted = limiter.try_acquire_permission(1).is_ok();
                    slowest = slowest.max(t.elapsed());
                    if permitted {
                        admitted += 1;
                        writeln!(dependency, "{id} {}", wall_ms()).unwrap();
                    } else {
                        refused += 1;
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                dependency.flush().unwrap();
                say(format!(
                    "hammered {admitted} {refused} {}",
                    slowest.as_millis()
                ));
            }
            ["hold", n] => {
                let mut admitted = 0;
                for _ in 0..n.parse::<u32>().unwrap() {
                    if let Ok(p) = bulkhead.try_acquire_permission() {
                        held.push(p);
                        admitted += 1;
                    }
                }
                say(format!("held {admitted} {}", held.len()));
            }
            ["release"] => {
                let n = held.len();
                held.clear();
                say(format!("released {n}"));
            }
            ["reachable"] => say(format!("reachable {}", store.is_reachable())),
            _ => say(format!("unknown command {line}")),
        }
    }
}
