//! Fleet-wide limits (issue #29): three OS processes share one rate limiter and one
//! bulkhead through a real `redis-server`. Each replica is this test binary run again as
//! `fleet_replica_process`; the rate limiter's calls are counted at the dependency, a TCP
//! server of this process.

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::fleet_child::FleetSpec;
use support::{field, RedisServer, Replica};

/// The child side (see [`support::fleet_child`]).
#[test]
fn fleet_replica_process() {
    support::fleet_child::run();
}

/// The dependency: records every call's line `<replica> <wall ms when sent>`.
struct Dependency {
    port: u16,
    calls: Arc<Mutex<Vec<(usize, u64)>>>,
}

impl Dependency {
    fn start() -> Dependency {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let record = calls.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let record = record.clone();
                std::thread::spawn(move || {
                    for line in BufReader::new(stream).lines() {
                        let Ok(line) = line else { return };
                        let (id, at) = line.split_once(' ').unwrap();
                        record
                            .lock()
                            .unwrap()
                            .push((id.parse().unwrap(), at.parse().unwrap()));
                    }
                });
            }
        });
        Dependency { port, calls }
    }
}

fn spawn3(
    redis: &RedisServer,
    dep: &Dependency,
    spec: impl Fn(usize) -> FleetSpecOwned,
) -> Vec<Replica> {
    let url = redis.url();
    (0..3)
        .map(|id| {
            let s = spec(id);
            FleetSpec {
                url: &url,
                id,
                limit: s.limit,
                period_ms: s.period_ms,
                max_calls: s.max_calls,
                replica_lease_ms: s.replica_lease_ms,
                timeout_ms: 50,
                dependency: dep.port,
            }
            .spawn()
        })
        .collect()
}

struct FleetSpecOwned {
    limit: u32,
    period_ms: u64,
    max_calls: u32,
    replica_lease_ms: u64,
}

/// Three processes call as fast as they are let for 4 s through one limiter of 10 calls
/// per 1 s: in every cycle (counted from the fleet's time zero, which Redis keeps, on the
/// machine's one clock) the dependency receives at most 10 calls. Per-process limiters
/// would let 30 through per cycle.
#[test]
fn three_processes_never_exceed_the_limit_in_any_period() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let dep = Dependency::start();
    let (limit, period_ms) = (10u32, 1000u64);
    let mut r = spawn3(&redis, &dep, |_| FleetSpecOwned {
        limit,
        period_ms,
        max_calls: 4,
        replica_lease_ms: 10_000,
    });
    for replica in &mut r {
        replica.send("hammer 4000");
    }
    let mut admitted = 0u32;
    for replica in &mut r {
        let line = replica.read();
        assert!(line.starts_with("hammered"), "{line}");
        admitted += field::<u32>(&line, 1);
        eprintln!("replica: {line} (admitted, refused, slowest ms)");
    }
    // Every call line has arrived once the replicas answered (each flushed its stream);
    // the reader threads may still be on it.
    let end = Instant::now() + Duration::from_secs(10);
    while dep.calls.lock().unwrap().len() < admitted as usize && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    let calls = dep.calls.lock().unwrap().clone();
    assert_eq!(
        calls.len(),
        admitted as usize,
        "the dependency saw every call"
    );
    let t0: u64 = redis::cmd("HGET")
        .arg("breaker:{rl:api}")
        .arg("t0")
        .query(&mut redis.connection())
        .unwrap();
    let mut per_cycle: BTreeMap<u64, u32> = BTreeMap::new();
    for (_, at) in &calls {
        assert!(*at >= t0, "a call before the fleet's time zero");
        *per_cycle.entry((at - t0) / period_ms).or_default() += 1;
    }
    eprintln!("calls per cycle: {per_cycle:?}");
    for (cycle, n) in &per_cycle {
        assert!(
            *n <= limit,
            "cycle {cycle}: {n} calls > limitForPeriod {limit}"
        );
    }
    // 4 s of hammering span at least 4 cycles; a full cycle gives 10 calls. Generous:
    // at least 2 full cycles' worth under load.
    assert!(admitted >= 2 * limit, "only {admitted} calls admitted");
    assert!(admitted <= limit * per_cycle.len() as u32);
}

/// Bulkhead of 4 calls across the fleet: one process holds 3, another gets 1 more and no
/// second; the first is killed (SIGKILL) holding its 3. They stay taken until its replica
/// lease (2 s) passes, then come back: the other process then holds exactly 4.
#[test]
fn a_killed_process_permits_come_back_within_the_lease() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let dep = Dependency::start();
    let lease_ms = 2000;
    let mut r = spawn3(&redis, &dep, |_| FleetSpecOwned {
        limit: 10,
        period_ms: 1000,
        max_calls: 4,
        replica_lease_ms: lease_ms,
    });
    assert_eq!(r[0].ask("hold 3"), "held 3 3");
    assert_eq!(r[1].ask("hold 3"), "held 1 1", "the fleet has 4 permits");
    assert_eq!(r[2].ask("hold 1"), "held 0 0");
    let killed = Instant::now();
    r.remove(0).kill();
    // Right after the kill the permits are still taken (the lease has not passed).
    assert_eq!(r[0].ask("hold 1"), "held 0 1");
    let back = loop {
        let line = r[0].ask("hold 1");
        if line == "held 1 2" {
            break killed.elapsed();
        }
        assert_eq!(line, "held 0 1");
        assert!(
            killed.elapsed() < Duration::from_millis(lease_ms + 8000),
            "the killed process's permits never came back"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!(
        "permits back {} ms after the kill (lease {lease_ms} ms)",
        back.as_millis()
    );
    assert!(
        back >= Duration::from_millis(lease_ms - 200),
        "back before the lease: {back:?}"
    );
    assert_eq!(r[0].ask("hold 5"), "held 2 4", "exactly 4 across the fleet");
    assert_eq!(r[1].ask("hold 1"), "held 0 0");
    assert_eq!(r[0].ask("release"), "released 4");
    assert_eq!(r[1].ask("hold 2"), "held 2 2");
}
