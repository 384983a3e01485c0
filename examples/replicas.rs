//! `cargo run --example replicas -- --replicas 5`: N replicas of the checkout service, each
//! with its own registry built from the unchanged `examples/application.yml`, call one
//! payment provider through the `paymentService` circuit breaker while the provider is down.
//! The same traffic runs twice side by side: with per-replica state (Resilience4j's way:
//! every replica trips on its own and sends its own half-open probes) and with the state
//! shared through Redis (`breaker-redis`: one trip, one set of probes for all). The summary
//! counts the calls that reached the provider during the outage.
//!
//! Redis: `--redis redis://host:port/` or, without it, a `redis-server` started on a free
//! loopback port when one is installed; otherwise only the per-replica run happens.
//!
//! Then the fleet-wide rate limit (issue #29): every replica's `paymentService` rate limiter
//! from the same file (12 calls per 100 ms) with per-replica permits and with the permits
//! shared through Redis, each replica trying far more than the limit for
//! `--limit-seconds`: the summary counts the calls per second that reached the provider.

use std::ops::Range;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use breaker_redis::{RedisStore, RedisStoreOptions};
use clap::Parser;
use resilience4rs::ratelimiter::RateLimiter;
use resilience4rs::{CircuitBreaker, State};

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/application.yml");
const BREAKER: &str = "paymentService";

/// N replicas of a checkout service share (or not) one circuit breaker through Redis.
#[derive(Parser, Debug)]
#[command(name = "replicas")]
struct Flags {
    /// Number of replicas (each its own registry, and with Redis its own store)
    #[arg(long, default_value_t = 5)]
    replicas: usize,
    /// Redis URL [default: start redis-server on a free loopback port, if installed]
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
    /// How long to send traffic, in seconds
    #[arg(long, default_value_t = 15)]
    duration: u64,
    /// When the provider is down, in seconds from the start: FROM..TO
    #[arg(long, default_value = "2..13", value_parser = window)]
    outage: Range<u64>,
    /// Requests per second of each replica
    #[arg(long, default_value_t = 20)]
    rate: u64,
    /// How long the rate-limit part runs, in seconds (0 skips it)
    #[arg(long, default_value_t = 3)]
    limit_seconds: u64,
}

fn window(s: &str) -> Result<Range<u64>, String> {
    let (a, b) = s.split_once("..").ok_or("expected FROM..TO")?;
    let (a, b) = (
        a.parse().map_err(|_| "FROM: whole seconds")?,
        b.parse().map_err(|_| "TO: whole seconds")?,
    );
    (a < b).then_some(a..b).ok_or_else(|| "FROM < TO".into())
}

/// The payment provider: down (failing after 20 ms) during the outage.
struct Provider {
    start: Instant,
    outage: Range<Duration>,
    reached_in_outage: AtomicU64,
    reached: AtomicU64,
}

impl Provider {
    fn down(&self) -> bool {
        self.outage.contains(&self.start.elapsed())
    }

    async fn quote(&self) -> Result<f64, &'static str> {
        self.reached.fetch_add(1, Ordering::Relaxed);
        if self.down() {
            self.reached_in_outage.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(20)).await;
            return Err("503 Service Unavailable");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
        Ok(1.0842)
    }
}

#[derive(Default)]
struct Tally {
    calls_in_outage: AtomicU64,
    rejected: AtomicU64,
    trips: AtomicU64,
    probes_in_outage: AtomicU64,
}

/// The provider's errors are plain failures here; the Java names are acknowledged.
fn catalog() -> resilience4rs::ErrorCatalog {
    [
        "org.springframework.web.client.HttpServerErrorException",
        "org.springframework.web.client.HttpClientErrorException",
        "java.util.concurrent.TimeoutException",
        "java.io.IOException",
        // The file also names what the stack's own layers refuse (load shedding, an open
        // circuit); a lone breaker never sees those errors.
        "io.github.resilience4j.bulkhead.BulkheadFullException",
        "io.github.resilience4j.circuitbreaker.CallNotPermittedException",
        "io.github.resilience4j.ratelimiter.RequestNotPermitted",
    ]
    .into_iter()
    .fold(resilience4rs::ErrorCatalog::new(), |c, n| c.acknowledge(n))
}

/// One replica: its own registry from the Spring file, its own store when sharing.
fn replica_breaker(store_url: Option<&str>, prefix: &str) -> Result<CircuitBreaker, String> {
    let loaded = breaker_config::Loader::new()
        .load_files(&[CONFIG])
        .map_err(|e| e.to_string())?;
    let registry =
        breaker_config::registry_from_loaded(&loaded, &catalog()).map_err(|e| e.to_string())?;
    let cb = registry.circuit_breaker(BREAKER);
    if let Some(url) = store_url {
        let options = RedisStoreOptions {
            key_prefix: prefix.into(),
            ..RedisStoreOptions::default()
        };
        let store = RedisStore::open(url, options).map_err(|e| e.to_string())?;
        store.attach(&cb).map_err(|e| e.to_string())?;
        // The store lives as long as the breaker it serves.
        std::mem::forget(store);
    }
    Ok(cb)
}

async fn run_replica(
    cb: CircuitBreaker,
    provider: Arc<Provider>,
    tally: Arc<Tally>,
    flags: Arc<Flags>,
    id: usize,
) {
    let tick = Duration::from_micros(1_000_000 / flags.rate.max(1));
    let end = provider.start + Duration::from_secs(flags.duration);
    // Replicas start out of phase, as real ones do.
    tokio::time::sleep(tick * id as u32 / flags.replicas as u32).await;
    let t = tally.clone();
    cb.subscribe(move |e| {
        if let resilience4rs::EventKind::StateTransition {
            from: State::Closed,
            to: State::Open,
        } = e.kind
        {
            t.trips.fetch_add(1, Ordering::Relaxed);
        }
    });
    let mut next = Instant::now();
    while Instant::now() < end {
        next += tick;
        let in_outage = provider.down();
        if in_outage {
            tally.calls_in_outage.fetch_add(1, Ordering::Relaxed);
        }
        match cb.try_acquire_permission() {
            Ok(permit) => {
                if in_outage && permit.admitted_in() == State::HalfOpen {
                    tally.probes_in_outage.fetch_add(1, Ordering::Relaxed);
                }
                match provider.quote().await {
                    Ok(_) => permit.on_success(),
                    Err(_) => permit.on_error(),
                }
            }
            Err(_) => {
                tally.rejected.fetch_add(1, Ordering::Relaxed);
            }
        }
        tokio::time::sleep_until(next.into()).await;
    }
}

async fn run(
    flags: Arc<Flags>,
    store_url: Option<String>,
    start: Instant,
) -> Result<(Arc<Provider>, Arc<Tally>), String> {
    let provider = Arc::new(Provider {
        start,
        outage: Duration::from_secs(flags.outage.start)..Duration::from_secs(flags.outage.end),
        reached_in_outage: AtomicU64::new(0),
        reached: AtomicU64::new(0),
    });
    let tally = Arc::new(Tally::default());
    let prefix = format!("replicas-example-{}:", std::process::id());
    let mut tasks = Vec::new();
    for id in 0..flags.replicas {
        let cb = replica_breaker(store_url.as_deref(), &prefix)?;
        tasks.push(tokio::spawn(run_replica(
            cb,
            provider.clone(),
            tally.clone(),
            flags.clone(),
            id,
        )));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())?;
    }
    Ok((provider, tally))
}

/// One replica's `paymentService` rate limiter from the Spring file (12 per 100 ms, no
/// wait), its permits shared through Redis when `store_url` is given.
fn replica_limiter(store_url: Option<&str>, prefix: &str) -> Result<RateLimiter, String> {
    let loaded = breaker_config::Loader::new()
        .load_files(&[CONFIG])
        .map_err(|e| e.to_string())?;
    let configs = breaker_config::modules::module_core_configs(&loaded, &catalog())
        .map_err(|e| e.to_string())?;
    let registries = breaker_config::modules::ModuleRegistries::from_core_configs(configs);
    let limiter = registries.rate_limiter.rate_limiter(BREAKER);
    if let Some(url) = store_url {
        let options = RedisStoreOptions {
            key_prefix: prefix.into(),
            ..RedisStoreOptions::default()
        };
        let store = RedisStore::open(url, options).map_err(|e| e.to_string())?;
        store
            .attach_rate_limiter(&limiter)
            .map_err(|e| e.to_string())?;
        std::mem::forget(store);
    }
    Ok(limiter)
}

/// Every replica tries a call every 2 ms for `seconds` through its limiter: the calls that
/// reached the provider, per second.
async fn limit_run(flags: Arc<Flags>, store_url: Option<String>) -> Result<f64, String> {
    let prefix = format!("replicas-example-{}:", std::process::id());
    let reached = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = start + Duration::from_secs(flags.limit_seconds);
    let mut tasks = Vec::new();
    for _ in 0..flags.replicas {
        let limiter = replica_limiter(store_url.as_deref(), &prefix)?;
        let reached = reached.clone();
        tasks.push(tokio::spawn(async move {
            while Instant::now() < end {
                if limiter.try_acquire_permission(1).is_ok() {
                    reached.fetch_add(1, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())?;
    }
    Ok(reached.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64())
}

/// A `redis-server` this example started, stopped on drop.
struct OwnRedis(Child);

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn own_redis() -> Option<(OwnRedis, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let server = OwnRedis(child);
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some((server, format!("redis://127.0.0.1:{port}/")));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let flags = Arc::new(Flags::parse());
    if flags.replicas == 0 || flags.outage.end > flags.duration {
        return Err(
            "--replicas must be at least 1 and the outage must end within --duration".into(),
        );
    }
    let mut _own = None;
    let url = match &flags.redis {
        Some(u) => Some(u.clone()),
        None => own_redis().map(|(server, url)| {
            _own = Some(server);
            url
        }),
    };
    println!(
        "{} replicas x {} req/s for {} s, provider down {}s..{}s; paymentService from {}",
        flags.replicas, flags.rate, flags.duration, flags.outage.start, flags.outage.end, CONFIG
    );
    match &url {
        Some(u) => println!("Redis: {}", breaker_redis::redact_url(u)),
        None => {
            println!("Redis: none (install redis-server or pass --redis URL): per-replica run only")
        }
    }
    let start = Instant::now();
    let local = run(flags.clone(), None, start);
    let shared = async {
        match &url {
            Some(u) => run(flags.clone(), Some(u.clone()), start).await.map(Some),
            None => Ok(None),
        }
    };
    let (local, shared) = tokio::join!(local, shared);
    let local = local?;
    let shared = shared?;
    println!();
    println!("{:<44} {:>12} {:>14}", "", "per-replica", "shared (Redis)");
    let row = |label: &str, f: &dyn Fn(&Provider, &Tally) -> u64| {
        let l = f(&local.0, &local.1);
        let s = shared
            .as_ref()
            .map_or("-".to_string(), |(p, t)| f(p, t).to_string());
        println!("{label:<44} {l:>12} {s:>14}");
    };
    row("calls made during the outage", &|_, t| {
        t.calls_in_outage.load(Ordering::Relaxed)
    });
    row("calls that reached the provider in the outage", &|p, _| {
        p.reached_in_outage.load(Ordering::Relaxed)
    });
    row("  of which half-open probes", &|_, t| {
        t.probes_in_outage.load(Ordering::Relaxed)
    });
    row("rejected (CallNotPermitted)", &|_, t| {
        t.rejected.load(Ordering::Relaxed)
    });
    row(
        "CLOSED -> OPEN transitions seen by the replicas",
        &|_, t| t.trips.load(Ordering::Relaxed),
    );
    row("calls that reached the provider in total", &|p, _| {
        p.reached.load(Ordering::Relaxed)
    });
    if let Some((p, _)) = &shared {
        println!(
            "SUMMARY {{\"replicas\":{},\"reached_in_outage_local\":{},\"reached_in_outage_shared\":{}}}",
            flags.replicas,
            local.0.reached_in_outage.load(Ordering::Relaxed),
            p.reached_in_outage.load(Ordering::Relaxed)
        );
    }
    if flags.limit_seconds == 0 {
        return Ok(());
    }
    println!();
    println!(
        "rate limiter {BREAKER} (12 calls per 100 ms = 120/s), {} replicas each trying 500/s for {} s:",
        flags.replicas, flags.limit_seconds
    );
    let local = limit_run(flags.clone(), None);
    let shared = async {
        match &url {
            Some(u) => limit_run(flags.clone(), Some(u.clone())).await.map(Some),
            None => Ok(None),
        }
    };
    let (local, shared) = tokio::join!(local, shared);
    let (local, shared) = (local?, shared?);
    let shown = shared.map_or("-".to_string(), |s| format!("{s:.0}"));
    println!("{:<44} {:>12} {:>14}", "", "per-replica", "shared (Redis)");
    println!(
        "{:<44} {:>12.0} {:>14}",
        "calls per second that reached the provider", local, shown
    );
    if let Some(s) = shared {
        println!(
            "SUMMARY {{\"replicas\":{},\"limit_per_s\":120,\"per_s_local\":{local:.0},\"per_s_shared\":{s:.0}}}",
            flags.replicas
        );
    }
    Ok(())
}
