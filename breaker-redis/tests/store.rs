//! The store in one process: several "replicas" (each its own breaker and store, so its own
//! connections and refresher) against a real `redis-server`, and the fault bounds against
//! a Redis that refuses connections or never answers.

mod support;

use std::net::TcpListener;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use breaker_core::{CircuitBreaker, CircuitBreakerConfig, Registry, State};
use breaker_redis::{call_path_bound, RedisStore, RedisStoreOptions};
use redis::Commands;
use support::RedisServer;

fn config(wait_ms: u64) -> CircuitBreakerConfig {
    CircuitBreakerConfig::builder()
        .sliding_window_size(2)
        .minimum_number_of_calls(2)
        .permitted_number_of_calls_in_half_open_state(1)
        .wait_duration_in_open_state(Duration::from_millis(wait_ms))
        .build()
        .unwrap()
}

fn replica(url: &str, name: &str, wait_ms: u64, options: RedisStoreOptions) -> CircuitBreaker {
    let cb = CircuitBreaker::new(name, config(wait_ms));
    let store = RedisStore::open(url, options).unwrap();
    store.attach(&cb).unwrap();
    // The breaker holds the store's link, the store's refresher runs while the store lives.
    std::mem::forget(store);
    cb
}

fn trip(cb: &CircuitBreaker) {
    for _ in 0..2 {
        cb.try_acquire_permission().unwrap().on_error();
    }
    assert_eq!(cb.state(), State::Open);
}

/// Keys live `key_ttl` after their last change, plus the rest of an OPEN wait.
#[test]
fn keys_expire() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let options = RedisStoreOptions {
        key_ttl: Duration::from_secs(60),
        ..Default::default()
    };
    let cb = replica(&redis.url(), "ttl", 5000, options);
    trip(&cb);
    // Written by the store's call thread right after the tripping call.
    support::wait_for_shared_state(&redis, "ttl", 1);
    let mut con = redis.connection();
    let pttl: i64 = con.pttl("breaker:{ttl}").unwrap();
    assert!(
        // 5000 ms rounded up from the breaker's (cached) clock: at most 5001.
        (64_000..=65_001).contains(&pttl),
        "PTTL {pttl} ms, expected 60 s + the 5 s OPEN wait"
    );
}

/// Eight replicas trip at once: one OPEN is written (attempts 1), and every replica ends
/// with the same deadline: the first one's.
#[test]
fn racing_replicas_open_it_once() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let url = redis.url();
    let n = 8;
    let barrier = Arc::new(Barrier::new(n));
    let breakers: Vec<CircuitBreaker> = (0..n)
        .map(|_| replica(&url, "race", 10_000, RedisStoreOptions::default()))
        .collect();
    std::thread::scope(|s| {
        for cb in &breakers {
            let b = barrier.clone();
            s.spawn(move || {
                cb.try_acquire_permission().unwrap().on_error();
                b.wait();
                cb.try_acquire_permission().unwrap().on_error();
            });
        }
    });
    // The trips are written by each store's call thread after the calls returned; the
    // losers adopt the winner's deadline from their trip's reply.
    support::wait_for_shared_state(&redis, "race", 1);
    let mut con = redis.connection();
    // Each replica maps the shared deadline (Redis's clock, ms) onto its own clock from the
    // script's reply: off by the time the reply took to arrive, a few ms on a loaded
    // machine. Redis and the breakers' system clock read the same wall clock here.
    let until_ms: u64 = con.hget("breaker:{race}", "u").unwrap();
    let offsets = || -> Vec<u64> {
        breakers
            .iter()
            .map(|cb| (cb.open_until_nanos().expect("OPEN") / 1_000_000).abs_diff(until_ms))
            .collect()
    };
    // 10 s: only replies that never come reach it.
    let end = Instant::now() + Duration::from_secs(10);
    while offsets().iter().any(|&off| off > 50) {
        assert!(
            Instant::now() < end,
            "replicas' deadlines off the shared one by {:?} ms",
            offsets()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let attempts: i64 = con.hget("breaker:{race}", "a").unwrap();
    assert_eq!(attempts, 1, "one OPEN written");
    let until_after: u64 = con.hget("breaker:{race}", "u").unwrap();
    assert_eq!(until_after, until_ms, "the first deadline stands");
}

/// A failed trial in one replica re-opens the breaker for the other, with the next
/// attempt's wait.
#[test]
fn a_failed_trial_reopens_everywhere() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // A timeout a loaded machine never reaches: no fallback to local state here.
    let patient = RedisStoreOptions {
        timeout: Duration::from_secs(2),
        ..Default::default()
    };
    let a = replica(&redis.url(), "reopen", 300, patient.clone());
    let b = replica(&redis.url(), "reopen", 300, patient.clone());
    trip(&a);
    std::thread::sleep(Duration::from_millis(350));
    let p = a.try_acquire_permission().unwrap();
    assert_eq!(p.admitted_in(), State::HalfOpen);
    // The one trial slot is taken: b is refused.
    let e = b.try_acquire_permission().unwrap_err();
    assert_eq!(e.state(), State::HalfOpen);
    p.on_error();
    assert_eq!(a.state(), State::Open);
    let deadline = Instant::now() + patient.propagation_bound();
    while b.state() != State::Open {
        assert!(Instant::now() < deadline, "b never saw the new OPEN");
        std::thread::sleep(Duration::from_millis(2));
    }
    let e = b.try_acquire_permission().unwrap_err();
    assert_eq!(e.state(), State::Open);
    assert!(e.retry_after().unwrap() <= Duration::from_millis(305));
    let mut con = redis.connection();
    let attempts: i64 = con.hget("breaker:{reopen}", "a").unwrap();
    assert_eq!(attempts, 2);
}

/// A breaker configured `store: redis` is attached, and so is one the registry creates
/// later; an unlisted one is not.
#[test]
fn attach_configured_follows_the_configuration() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let yaml = format!(
        "resilience4j.circuitbreaker.instances.pay.slidingWindowSize: 2\n\
         breaker.circuitbreaker.instances.pay.store: redis\n\
         breaker.circuitbreaker.instances.later.store: redis\n\
         breaker.redis.url: {}\n\
         breaker.redis.refresh-interval: 20ms\n",
        redis.url()
    );
    let loaded = breaker_config::Loader::new()
        .env(Default::default())
        .load_str("application.yml", breaker_config::Format::Yaml, &yaml)
        .unwrap();
    assert!(loaded.errors().is_empty() && loaded.warnings.is_empty());
    let registry: Registry =
        breaker_config::registry_from_loaded(&loaded, &Default::default()).unwrap();
    let stores = breaker_redis::attach_configured(&loaded.shared_store, &registry).unwrap();
    assert_eq!(stores.attached, ["pay"]);
    let store = stores.store.unwrap();
    assert_eq!(store.options().refresh_interval, Duration::from_millis(20));
    assert!(registry.circuit_breaker("pay").has_shared_state());
    assert!(registry.circuit_breaker("later").has_shared_state());
    assert!(!registry.circuit_breaker("other").has_shared_state());
}

/// Nothing listens on the port: attaching, tripping and every call return at once.
#[test]
fn an_unreachable_redis_never_slows_calls() {
    let port = support::free_port();
    let url = format!("redis://127.0.0.1:{port}/");
    let t = Instant::now();
    let cb = replica(&url, "nobody", 1000, RedisStoreOptions::default());
    let mut slowest = t.elapsed();
    for _ in 0..100 {
        let t = Instant::now();
        if let Ok(p) = cb.try_acquire_permission() {
            p.on_error();
        }
        slowest = slowest.max(t.elapsed());
    }
    assert_eq!(cb.state(), State::Open, "the local window still trips");
    let bound = call_path_bound(&RedisStoreOptions::default());
    assert!(
        slowest <= bound,
        "a call took {slowest:?} (bound {bound:?})"
    );
}

/// Redis accepts connections and never answers: the attach waits at most the bound
/// (`3 x timeout`), and no call waits on Redis, the one that trips the breaker and the
/// trial call after the OPEN wait included (the trip is written in the background; Redis
/// is marked down since the attach).
#[test]
fn a_silent_redis_delays_a_call_by_at_most_the_bound() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("redis://{}/", listener.local_addr().unwrap());
    // A timeout long enough that "waited for Redis" (300 ms at least) and "did not"
    // stay apart by more than a loaded machine's scheduling delays (SLACK).
    let options = RedisStoreOptions {
        timeout: Duration::from_millis(300),
        ..Default::default()
    };
    const SLACK: Duration = Duration::from_millis(250);
    let bound = call_path_bound(&options);
    let t = Instant::now();
    let cb = replica(&url, "silent", 200, options);
    let attach = t.elapsed();
    assert!(attach <= bound + SLACK, "attach took {attach:?}");
    let mut times = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        if let Ok(p) = cb.try_acquire_permission() {
            p.on_error();
        }
        times.push(t.elapsed());
    }
    assert_eq!(cb.state(), State::Open);
    let slowest = *times.iter().max().unwrap();
    assert!(slowest <= SLACK, "a call took {slowest:?}");
    // After the wait, a trial call runs on local state without waiting on Redis either
    // (asked until admitted: the breaker's clock may lag on a loaded machine; 5 s at most).
    std::thread::sleep(Duration::from_millis(250));
    let end = Instant::now() + Duration::from_secs(5);
    let p = loop {
        let t = Instant::now();
        let permit = cb.try_acquire_permission();
        assert!(t.elapsed() <= SLACK, "a call took {:?}", t.elapsed());
        match permit {
            Ok(p) => break p,
            Err(e) => assert!(Instant::now() < end, "never admitted: {e}"),
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(p.admitted_in(), State::HalfOpen);
    let t = Instant::now();
    p.on_success();
    assert!(t.elapsed() <= SLACK, "{:?}", t.elapsed());
    drop(listener);
}

/// A URL with credentials that fails to parse is reported without them.
#[test]
fn errors_carry_no_credentials() {
    let e = RedisStore::open("redis://user:hunter22@[::1", RedisStoreOptions::default())
        .unwrap_err()
        .to_string();
    assert!(!e.contains("hunter22"), "{e}");
}

/// Redis unreachable is logged once (WARN, with the address and without the URL's
/// credentials), however many calls follow.
#[test]
fn an_outage_is_logged_once_without_credentials() {
    #[derive(Clone, Default)]
    struct Buffer(Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let port = support::free_port();
    let url = format!("redis://app:hunter22@127.0.0.1:{port}/");
    tracing::subscriber::with_default(subscriber, || {
        let cb = replica(&url, "logged", 50, RedisStoreOptions::default());
        for _ in 0..3 {
            trip(&cb);
            std::thread::sleep(Duration::from_millis(60));
            let _ = cb.try_acquire_permission().map(|p| p.on_success());
            cb.reset();
        }
    });
    let log = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    assert_eq!(log.matches("Redis unreachable").count(), 1, "{log}");
    assert!(log.contains(&format!("redis://127.0.0.1:{port}/")), "{log}");
    assert!(!log.contains("hunter22"), "{log}");
}

/// A trip carries the shared epoch its replica had seen: decided on a CLOSED older than the
/// shared one (here a reset by another replica it has not read yet), it is refused, and the
/// replica adopts the newer CLOSED (issue #23: a write must carry what it was based on).
#[test]
fn a_trip_based_on_an_older_closed_state_is_refused() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let b = replica(&redis.url(), "basis", 10_000, RedisStoreOptions::default());
    trip(&b);
    support::wait_for_shared_state(&redis, "basis", 1);
    b.reset();
    support::wait_for_shared_state(&redis, "basis", 0);
    let mut con = redis.connection();
    let seen: i64 = con.hget("breaker:{basis}", "e").unwrap();
    // `a` reads the shared state when attached (epoch `seen`), then never again.
    let deaf = RedisStoreOptions {
        refresh_interval: Duration::from_secs(3600),
        ..Default::default()
    };
    let a = replica(&redis.url(), "basis", 10_000, deaf);
    trip(&b);
    support::wait_for_shared_state(&redis, "basis", 1);
    b.reset();
    support::wait_for_shared_state(&redis, "basis", 0);
    let newer: i64 = con.hget("breaker:{basis}", "e").unwrap();
    assert!(newer > seen);
    trip(&a);
    // The refusal's reply moves `a` to the shared CLOSED (10 s: only a reply that never
    // comes reaches it).
    let end = Instant::now() + Duration::from_secs(10);
    while a.state() != State::Closed {
        assert!(Instant::now() < end, "a stayed {}", a.state());
        std::thread::sleep(Duration::from_millis(2));
    }
    let (s, e): (i64, i64) = (
        con.hget("breaker:{basis}", "s").unwrap(),
        con.hget("breaker:{basis}", "e").unwrap(),
    );
    assert_eq!(
        (s, e),
        (0, newer),
        "the stale trip changed the shared state"
    );
}

/// Issue #29: a rate limiter and a bulkhead configured `store: redis` are attached, and so
/// is one the registry creates later; an unlisted one is not.
#[test]
fn attach_configured_limits_follows_the_configuration() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let yaml = format!(
        "breaker.ratelimiter.instances.api.store: redis\n\
         breaker.ratelimiter.instances.later.store: redis\n\
         breaker.bulkhead.instances.pool.store: redis\n\
         breaker.redis.url: {}\n",
        redis.url()
    );
    let loaded = breaker_config::Loader::new()
        .env(Default::default())
        .load_str("application.yml", breaker_config::Format::Yaml, &yaml)
        .unwrap();
    assert!(loaded.errors().is_empty() && loaded.warnings.is_empty());
    let limiters = breaker_core::ratelimiter::RateLimiterRegistry::new();
    let bulkheads = breaker_core::bulkhead::BulkheadRegistry::new();
    let api = limiters.rate_limiter("api");
    let store =
        breaker_redis::attach_configured_limits(&loaded.shared_store, &limiters, &bulkheads, None)
            .unwrap();
    assert!(store.is_some());
    assert!(api.has_shared_limit());
    assert!(limiters.rate_limiter("later").has_shared_limit());
    assert!(!limiters.rate_limiter("other").has_shared_limit());
    assert!(bulkheads.bulkhead("pool").has_shared_concurrency());
    assert!(!bulkheads.bulkhead("api").has_shared_concurrency());
    // Resilience4j's default limiter (50 per 500 ns; Redis counts cycles of at least
    // 1 ms), its permits counted in Redis.
    assert!(api.try_acquire_permission(1).is_ok());
    let p: i64 = redis::cmd("HGET")
        .arg("breaker:{rl:api}")
        .arg("p")
        .query(&mut redis.connection())
        .unwrap();
    assert_eq!(
        p, 49,
        "one of Resilience4j's default 50 permits taken, in Redis"
    );
}
