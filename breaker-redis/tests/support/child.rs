//! The replica process: the test binary run again in child mode (see
//! [`Replica::spawn`](super::Replica::spawn)), one breaker shared through the store,
//! answering one line per command on stdin.

use std::io::BufRead;
use std::time::{Duration, Instant};

use breaker_core::{CircuitBreaker, CircuitBreakerConfig, Permit};
use breaker_redis::{RedisStore, RedisStoreOptions};

use super::wall_ms;

/// The replicas' store options: the defaults (refresh 100 ms, timeout 50 ms) but for the
/// trial lease and, in the tests that count trial calls exactly, a timeout long enough
/// that a loaded machine never makes a replica fall back to its local state.
pub fn options(lease_ms: u64, timeout_ms: u64) -> RedisStoreOptions {
    RedisStoreOptions {
        trial_lease: Duration::from_millis(lease_ms),
        timeout: Duration::from_millis(timeout_ms),
        ..RedisStoreOptions::default()
    }
}

/// Runs a replica: one breaker (count window of 4, 4 calls minimum, 50 %, 2 trial calls)
/// shared through the store, answering one line per command.
pub fn run() {
    if std::env::var("BREAKER_REDIS_REPLICA").is_err() {
        return;
    }
    let env = |k: &str| std::env::var(k).unwrap();
    let wait_ms: u64 = env("REPLICA_WAIT_MS").parse().unwrap();
    let lease_ms: u64 = env("REPLICA_LEASE_MS").parse().unwrap();
    let timeout_ms: u64 = env("REPLICA_TIMEOUT_MS").parse().unwrap();
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(4)
        .minimum_number_of_calls(4)
        .failure_rate_threshold(50.0)
        .permitted_number_of_calls_in_half_open_state(2)
        .wait_duration_in_open_state(Duration::from_millis(wait_ms))
        .build()
        .unwrap();
    let cb: &'static CircuitBreaker =
        Box::leak(Box::new(CircuitBreaker::new(env("REPLICA_NAME"), config)));
    let store = RedisStore::open(&env("REPLICA_URL"), options(lease_ms, timeout_ms)).unwrap();
    store.attach(cb).unwrap();
    let mut held: Vec<Permit<'static>> = Vec::new();
    let say = |s: String| println!("@@ {s}");
    say("ready".into());
    let rejected = |e: breaker_core::CallNotPermitted| {
        format!(
            "rejected {} {}",
            e.state(),
            e.retry_after().map_or(-1, |d| d.as_millis() as i64)
        )
    };
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["fail", n] => {
                let mut max = Duration::ZERO;
                for _ in 0..n.parse::<u32>().unwrap() {
                    let t = Instant::now();
                    if let Ok(p) = cb.try_acquire_permission() {
                        p.on_error();
                    }
                    max = max.max(t.elapsed());
                }
                say(format!(
                    "done {} {} {}",
                    cb.state(),
                    wall_ms(),
                    max.as_micros()
                ));
            }
            ["watch"] => {
                let end = Instant::now() + Duration::from_secs(10);
                let answer = loop {
                    match cb.try_acquire_permission() {
                        Ok(p) => p.on_success(),
                        Err(e) => break format!("{} {}", rejected(e), wall_ms()),
                    }
                    if Instant::now() > end {
                        break "timeout".into();
                    }
                    std::thread::sleep(Duration::from_millis(1));
                };
                say(answer);
            }
            ["probe"] => say(match cb.try_acquire_permission() {
                Ok(p) => {
                    let s = format!("admitted {}", p.admitted_in());
                    p.on_success();
                    s
                }
                Err(e) => rejected(e),
            }),
            ["poll_admit"] => {
                let end = Instant::now() + Duration::from_secs(10);
                let answer = loop {
                    if let Ok(p) = cb.try_acquire_permission() {
                        let s = format!("admitted {} {}", p.admitted_in(), wall_ms());
                        held.push(p);
                        break s;
                    }
                    if Instant::now() > end {
                        break "timeout".into();
                    }
                    std::thread::sleep(Duration::from_millis(5));
                };
                say(answer);
            }
            ["hold"] => say(match cb.try_acquire_permission() {
                Ok(p) => {
                    let s = format!("admitted {}", p.admitted_in());
                    held.push(p);
                    s
                }
                Err(e) => rejected(e),
            }),
            ["finish", how] => {
                let n = held.len();
                for p in held.drain(..) {
                    if *how == "ok" {
                        p.on_success();
                    } else {
                        p.on_error();
                    }
                }
                say(format!("finished {n} {}", cb.state()));
            }
            ["wait_state", s, ms] => {
                let end = Instant::now() + Duration::from_millis(ms.parse().unwrap());
                let answer = loop {
                    if cb.state().to_string() == *s {
                        break format!("state_at {}", wall_ms());
                    }
                    if Instant::now() > end {
                        break format!("timeout {}", cb.state());
                    }
                    std::thread::sleep(Duration::from_millis(1));
                };
                say(answer);
            }
            ["reset"] => {
                cb.reset();
                say(format!("reset {}", cb.state()));
            }
            ["recover"] => {
                // Trial calls that succeed until CLOSED (up to 10 s).
                let end = Instant::now() + Duration::from_secs(10);
                while cb.state() != breaker_core::State::Closed && Instant::now() < end {
                    if let Ok(p) = cb.try_acquire_permission() {
                        p.on_success();
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                say(format!("recovered {} {}", cb.state(), wall_ms()));
            }
            ["count", ms] => {
                // Calls (succeeding) for `ms`: how many were admitted and rejected.
                let end = Instant::now() + Duration::from_millis(ms.parse().unwrap());
                let (mut admitted, mut rejected) = (0u32, 0u32);
                while Instant::now() < end {
                    match cb.try_acquire_permission() {
                        Ok(p) => {
                            admitted += 1;
                            p.on_success();
                        }
                        Err(_) => rejected += 1,
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                say(format!("counted {admitted} {rejected} {}", cb.state()));
            }
            ["state"] => say(format!("state {}", cb.state())),
            _ => say(format!("unknown command {line}")),
        }
    }
}
