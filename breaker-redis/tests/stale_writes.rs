//! Issue #23, item 2: a request Redis runs late must not change the shared state. Three
//! replica processes (this binary in child mode) share one breaker through a real
//! `redis-server`, which is stopped (SIGSTOP) while a replica trips: the trip's request sits
//! in Redis's socket and runs when Redis continues (SIGCONT). Before the fix Redis ran it then
//! and stamped it with its own clock: a phantom OPEN for every replica after everyone had
//! recovered, and a legitimate OPEN stretched by the time Redis was stopped.

mod support;

use std::time::Duration;

use redis::Commands;
use support::{field, wait_for_shared_state, RedisServer, Replica, ReplicaSpec};

/// The child side (see [`support::child`]).
#[test]
fn replica_process() {
    support::child::run();
}

/// The store's default timeout (50 ms): a request unanswered after it falls back to local
/// state, as in production.
const TIMEOUT_MS: u64 = 50;

fn spawn3(url: &str, name: &str, wait_ms: u64) -> Vec<Replica> {
    (0..3)
        .map(|_| {
            Replica::spawn(&ReplicaSpec {
                url,
                name,
                wait_ms,
                lease_ms: 1000,
                timeout_ms: TIMEOUT_MS,
            })
        })
        .collect()
}

fn shared_epoch(redis: &RedisServer, name: &str) -> i64 {
    let e: Option<i64> = redis
        .connection()
        .hget(format!("breaker:{{{name}}}"), "e")
        .unwrap();
    e.expect("the shared hash exists")
}

/// The scenario: a shared trip happens and closes again; Redis is stopped; replica
/// 1 trips, falls back to its local state and recovers to CLOSED while Redis is still
/// stopped; Redis continues: nobody goes OPEN, and the shared state is the CLOSED everyone
/// had (same epoch: the late trip changed nothing).
#[test]
fn a_trip_redis_runs_after_the_replica_recovered_opens_nothing() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let name = "phantom";
    let wait_ms = 1000;
    let mut r = spawn3(&redis.url(), name, wait_ms);
    // A shared trip, closed again by hand (replica 1's store connection is then open and
    // Redis has the TRIP script cached, so its next trip is sent on it as EVALSHA and
    // waits in Redis's socket while Redis is stopped).
    assert!(r[1].ask("fail 4").starts_with("done OPEN"));
    wait_for_shared_state(&redis, name, 1);
    assert_eq!(r[1].ask("reset"), "reset CLOSED");
    wait_for_shared_state(&redis, name, 0);
    for replica in &mut r {
        // 10 s: a generous bound for a refresh (150 ms) on a loaded machine.
        let a = replica.ask("wait_state CLOSED 10000");
        assert!(a.starts_with("state_at"), "{a}");
    }
    let closed_epoch = shared_epoch(&redis, name);

    redis.pause();
    let done = r[1].ask("fail 4");
    assert!(done.starts_with("done OPEN"), "{done}");
    // Local OPEN for 1 s, then HALF_OPEN trial calls on local state (Redis is down for
    // this replica), which close it.
    let recovered = r[1].ask("recover");
    assert!(recovered.starts_with("recovered CLOSED"), "{recovered}");
    // Redis stays stopped a while longer (the issue: 2 s after the recovery).
    std::thread::sleep(Duration::from_millis(500));
    redis.resume();

    // For 2 s after Redis continues (twice the OPEN wait: a phantom OPEN would be seen by
    // every replica within one refresh, 150 ms), every call is admitted.
    for replica in &mut r {
        replica.send("count 2000");
    }
    for (i, replica) in r.iter_mut().enumerate() {
        let a = replica.read();
        let admitted: u32 = field(&a, 1);
        let rejected: u32 = field(&a, 2);
        eprintln!("replica {i} after SIGCONT: {admitted} admitted, {rejected} rejected");
        assert_eq!(rejected, 0, "replica {i} rejected calls after SIGCONT: {a}");
        assert!(admitted > 0, "{a}");
        assert!(a.ends_with("CLOSED"), "{a}");
    }
    let state: i64 = redis
        .connection()
        .hget(format!("breaker:{{{name}}}"), "s")
        .unwrap();
    assert_eq!(state, 0, "shared state after SIGCONT");
    assert_eq!(
        shared_epoch(&redis, name),
        closed_epoch,
        "the late trip changed the shared state"
    );
}

/// A legitimate 3 s OPEN whose trip Redis runs 1.5 s late (stopped meanwhile) is not
/// stretched: the other replicas reject until 3 s after the trip, not 4.5 s.
#[test]
fn a_trip_redis_runs_late_does_not_stretch_the_open_wait() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let name = "stretch";
    let wait_ms = 3000;
    let stopped_ms = 1500;
    let mut r = spawn3(&redis.url(), name, wait_ms);
    // A trip and a reset first: Redis has the TRIP script cached (a request for a script
    // it does not know is answered NOSCRIPT, and its client resends it, which it cannot do
    // once it gave up), and replica 0's store connection is open.
    assert!(r[0].ask("fail 4").starts_with("done OPEN"));
    wait_for_shared_state(&redis, name, 1);
    assert_eq!(r[0].ask("reset"), "reset CLOSED");
    wait_for_shared_state(&redis, name, 0);
    for replica in &mut r {
        // 10 s: a generous bound for a refresh (150 ms) on a loaded machine.
        let a = replica.ask("wait_state CLOSED 10000");
        assert!(a.starts_with("state_at"), "{a}");
    }

    redis.pause();
    let done = r[0].ask("fail 4");
    assert!(done.starts_with("done OPEN"), "{done}");
    let tripped: u64 = field(&done, 2);
    std::thread::sleep(Duration::from_millis(stopped_ms));
    redis.resume();

    // The others learn the OPEN once Redis is back (replica 0 writes its local OPEN back
    // with the wait it has left) and reject until its end.
    for replica in &mut r[1..] {
        replica.send("watch");
    }
    for (i, replica) in r[1..].iter_mut().enumerate() {
        let line = replica.read();
        assert!(
            line.starts_with("rejected OPEN"),
            "replica {}: {line}",
            i + 1
        );
        let retry_after: u64 = field(&line, 2);
        let at: u64 = field(&line, 3);
        let ends = (at + retry_after) as i64 - tripped as i64;
        eprintln!(
            "replica {}: shared OPEN ends {ends} ms after the trip",
            i + 1
        );
        // 250 ms either way: the replicas' estimate of Redis's clock is off by at most a
        // round trip's transit, a replica answers a few ms after reading `retry_after`,
        // and the wall clocks are read at different points. A stretched wait ends
        // `stopped_ms` (1500 ms) later than the trip's own.
        assert!(
            (wait_ms as i64 - 250..=wait_ms as i64 + 250).contains(&ends),
            "replica {}: the shared OPEN ends {ends} ms after the trip (wait {wait_ms} ms)",
            i + 1
        );
    }
}
