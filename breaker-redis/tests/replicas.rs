//! Three OS processes share one breaker through a real `redis-server` (issue #16): each
//! replica is this test binary run again in child mode (`replica_process`), driven by
//! commands on its stdin. Every test starts its own server on a free loopback port.

mod support;

use std::time::Duration;

use support::child::options;
use support::{field, wait_for_shared_state, wall_ms, RedisServer, Replica, ReplicaSpec};

/// The default timeout, 50 ms.
const DEFAULT_TIMEOUT_MS: u64 = 50;

/// A timeout for the tests that count trial calls (see [`options`]).
const PATIENT_TIMEOUT_MS: u64 = 2000;

/// 150 ms: the documented propagation bound with the defaults (refresh_interval + timeout).
fn bound_ms() -> u64 {
    options(1000, DEFAULT_TIMEOUT_MS)
        .propagation_bound()
        .as_millis() as u64
}

/// Time a process needs to wake up and write a line on this shared 2-core machine, on top
/// of the bound.
const SLACK_MS: u64 = 100;

/// The child side (see [`support::child`]).
#[test]
fn replica_process() {
    support::child::run();
}

fn spawn3(url: &str, name: &str, wait_ms: u64, lease_ms: u64, timeout_ms: u64) -> Vec<Replica> {
    (0..3)
        .map(|_| {
            Replica::spawn(&ReplicaSpec {
                url,
                name,
                wait_ms,
                lease_ms,
                timeout_ms,
            })
        })
        .collect()
}

/// One process trips the breaker; the two others reject within the bound, with a
/// `retry_after` that counts down to the shared deadline.
#[test]
fn one_process_trips_and_the_others_reject_within_the_bound() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let wait_ms = 3000;
    let mut r = spawn3(&redis.url(), "trip", wait_ms, 1000, DEFAULT_TIMEOUT_MS);
    r[1].send("watch");
    r[2].send("watch");
    std::thread::sleep(Duration::from_millis(300));
    let done = r[0].ask("fail 4");
    assert!(done.starts_with("done OPEN"), "{done}");
    let tripped: u64 = field(&done, 2);
    for replica in &mut r[1..] {
        let line = replica.read();
        assert!(line.starts_with("rejected OPEN"), "{line}");
        let retry_after: u64 = field(&line, 2);
        let at: u64 = field(&line, 3);
        let delay = at.saturating_sub(tripped);
        eprintln!("propagation: rejected {delay} ms after the trip, retry_after {retry_after} ms");
        assert!(
            delay <= bound_ms() + SLACK_MS,
            "rejected {delay} ms after the trip (bound {} ms)",
            bound_ms()
        );
        // The shared deadline: wait_ms after the trip, seen `delay` ms later (+1 ms for the
        // strict deadline, up to 1 ms for Redis's ms clock and a round trip of mapping).
        let expected = wait_ms - delay;
        assert!(
            retry_after <= wait_ms + 5 && retry_after + 20 >= expected,
            "retry_after {retry_after} ms, expected about {expected} ms"
        );
    }
}

/// After the shared OPEN wait, the three processes together get exactly
/// `permittedNumberOfCallsInHalfOpenState` (2) trial calls; their successes close the
/// breaker for all of them.
#[test]
fn half_open_trials_across_processes_never_exceed_the_permitted_number() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let wait_ms = 600;
    let mut r = spawn3(&redis.url(), "trials", wait_ms, 5000, PATIENT_TIMEOUT_MS);
    assert!(r[0].ask("fail 4").starts_with("done OPEN"));
    for replica in &mut r[1..] {
        assert!(replica
            .ask(&format!("wait_state OPEN {}", bound_ms() + SLACK_MS))
            .starts_with("state_at"));
    }
    std::thread::sleep(Duration::from_millis(wait_ms + 50));
    let mut admitted = 0;
    for round in 0..3 {
        for (i, replica) in r.iter_mut().enumerate() {
            let a = replica.ask("hold");
            if a.starts_with("admitted") {
                assert_eq!(a, "admitted HALF_OPEN", "round {round} replica {i}");
                admitted += 1;
            } else {
                assert!(a.starts_with("rejected"), "{a}");
            }
        }
    }
    assert_eq!(admitted, 2, "trial calls admitted across the 3 processes");
    let t0 = wall_ms();
    for replica in &mut r {
        assert!(replica.ask("finish ok").starts_with("finished"));
    }
    for replica in &mut r {
        let a = replica.ask(&format!("wait_state CLOSED {}", bound_ms() + SLACK_MS));
        assert!(a.starts_with("state_at"), "{a}");
        let at: u64 = field(&a, 1);
        assert!(at - t0 <= bound_ms() + SLACK_MS + 50);
    }
}

/// A process killed (SIGKILL) while holding both trial slots does not strand HALF_OPEN:
/// the others are refused until its leases expire, then admitted.
#[test]
fn a_killed_process_frees_its_trial_slots_when_its_leases_expire() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (wait_ms, lease_ms) = (400, 1000);
    let mut r = spawn3(
        &redis.url(),
        "killed",
        wait_ms,
        lease_ms,
        PATIENT_TIMEOUT_MS,
    );
    assert!(r[0].ask("fail 4").starts_with("done OPEN"));
    std::thread::sleep(Duration::from_millis(wait_ms + 50));
    assert_eq!(r[0].ask("hold"), "admitted HALF_OPEN");
    assert_eq!(r[0].ask("hold"), "admitted HALF_OPEN");
    let leased = wall_ms();
    let killed = r.remove(0);
    killed.kill();
    std::thread::sleep(Duration::from_millis(bound_ms()));
    let refused = r[0].ask("probe");
    assert!(refused.starts_with("rejected HALF_OPEN"), "{refused}");
    let admitted = r[1].ask("poll_admit");
    assert!(admitted.starts_with("admitted HALF_OPEN"), "{admitted}");
    let at: u64 = field(&admitted, 2);
    let after = at - leased;
    eprintln!("lease expiry: admitted {after} ms after the dead process's leases");
    assert!(
        after + 20 >= lease_ms && after <= lease_ms + 300,
        "admitted {after} ms after the dead process took its leases ({lease_ms} ms)"
    );
}

/// Redis killed mid-run: a process trips on its own state without waiting on Redis
/// beyond the bound; when Redis comes back (empty), that OPEN is written back and the
/// other processes reject within two refreshes.
#[test]
fn redis_restarted_mid_run_reconverges() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let mut r = spawn3(&redis.url(), "restart", 5000, 1000, DEFAULT_TIMEOUT_MS);
    assert_eq!(r[1].ask("probe"), "admitted CLOSED");
    redis.stop();
    let done = r[0].ask("fail 4");
    assert!(done.starts_with("done OPEN"), "{done}");
    let max_call_us: u64 = field(&done, 3);
    let call_bound_us =
        breaker_redis::call_path_bound(&options(1000, DEFAULT_TIMEOUT_MS)).as_micros() as u64;
    eprintln!("Redis down: slowest call {max_call_us} us");
    assert!(
        max_call_us <= call_bound_us,
        "a call took {max_call_us} us with Redis down (bound {call_bound_us} us)"
    );
    // Without Redis the others keep their own state.
    assert_eq!(r[1].ask("probe"), "admitted CLOSED");
    redis.restart();
    let back = wall_ms();
    for replica in &mut r[1..] {
        replica.send("watch");
    }
    for replica in &mut r[1..] {
        let line = replica.read();
        assert!(line.starts_with("rejected OPEN"), "{line}");
        let at: u64 = field(&line, 3);
        eprintln!(
            "re-convergence: rejected {} ms after Redis came back",
            at - back
        );
        assert!(
            at - back <= 2 * bound_ms() + SLACK_MS,
            "rejected {} ms after Redis came back",
            at - back
        );
    }
}

/// Every process restarted while the shared state is OPEN: a new process rejects from its
/// first call, until the same deadline.
#[test]
fn processes_restarted_while_open_find_it_open() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let wait_ms = 4000;
    let mut r = spawn3(&redis.url(), "reborn", wait_ms, 1000, DEFAULT_TIMEOUT_MS);
    let done = r[0].ask("fail 4");
    let tripped: u64 = field(&done, 2);
    // The trip is written by the store's call thread right after the call returned (the
    // call does not wait for it): kill the replicas once Redis has it.
    wait_for_shared_state(&redis, "reborn", 1);
    for replica in r {
        replica.kill();
    }
    let spec = ReplicaSpec {
        url: &redis.url(),
        name: "reborn",
        wait_ms,
        lease_ms: 1000,
        timeout_ms: DEFAULT_TIMEOUT_MS,
    };
    let mut fresh = Replica::spawn(&spec);
    let first = fresh.ask("probe");
    let now = wall_ms();
    assert!(first.starts_with("rejected OPEN"), "{first}");
    let retry_after: u64 = field(&first, 2);
    let left = wait_ms - (now - tripped);
    assert!(
        retry_after <= left + 20 && retry_after + 20 >= left,
        "retry_after {retry_after} ms, {left} ms of the shared wait left"
    );
}
