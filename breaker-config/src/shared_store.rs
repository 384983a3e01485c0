//! breaker's own extension keys for state shared between processes (issue #16):
//! `breaker.circuitbreaker.instances.<name>.store` and `breaker.redis.*`. Spring Boot binds
//! nothing under `breaker.`, so a Spring service reading the same file is unaffected. Every
//! other key under `breaker.` gets a warning; a bad value is an error with its file and line.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::{ConfigError, Warning};
use crate::management::{error, starts, Reader};
use crate::origin::Origin;
use crate::placeholders::Resolver;
use crate::property::Document;
use crate::relaxed::map_key;

/// Where a circuit breaker keeps its state (`breaker.circuitbreaker.instances.<name>.store`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum StoreKind {
    /// `local` (the default): in this process only, as Resilience4j does.
    #[default]
    Local,
    /// `redis`: shared with every process using the same Redis (`breaker.redis.url`), through
    /// the `breaker-redis` crate.
    Redis,
}

impl StoreKind {
    /// `local` or `redis`.
    pub fn name(self) -> &'static str {
        match self {
            StoreKind::Local => "local",
            StoreKind::Redis => "redis",
        }
    }
}

/// `breaker.redis.*`: the Redis server shared state lives in. A setting left out keeps the
/// `breaker-redis` default (given with each field).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct RedisSettings {
    /// `breaker.redis.url` (`redis://[user:password@]host:port[/db]`); required when an
    /// instance has `store: redis`. Never printed with its credentials.
    pub url: Option<String>,
    /// `breaker.redis.key-prefix` (default `breaker:`).
    pub key_prefix: Option<String>,
    /// `breaker.redis.refresh-interval` (default 100 ms): how often each process reads the
    /// shared state.
    pub refresh_interval: Option<Duration>,
    /// `breaker.redis.timeout` (default 50 ms): the longest one step of a Redis request.
    pub timeout: Option<Duration>,
    /// `breaker.redis.trial-lease` (default 10 s): how long a HALF_OPEN trial slot stays
    /// taken without an outcome.
    pub trial_lease: Option<Duration>,
    /// `breaker.redis.key-ttl` (default 24 h): how long keys live after their last change.
    pub key_ttl: Option<Duration>,
    /// `breaker.redis.replica-lease` (default 10 s): how long a process counts as alive
    /// (for the rate limiters' and bulkheads' local share) and its bulkhead permits stay
    /// taken after its last word; a killed process's permits come back after this.
    pub replica_lease: Option<Duration>,
}

impl std::fmt::Debug for RedisSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSettings")
            .field("url", &self.url.as_deref().map(redact_url))
            .field("key_prefix", &self.key_prefix)
            .field("refresh_interval", &self.refresh_interval)
            .field("timeout", &self.timeout)
            .field("trial_lease", &self.trial_lease)
            .field("key_ttl", &self.key_ttl)
            .field("replica_lease", &self.replica_lease)
            .finish()
    }
}

/// The `breaker.*` extension settings: which breakers share their state, and where.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SharedStoreConfig {
    /// `breaker.circuitbreaker.instances.<name>.store`, by instance name (only those set).
    pub instances: BTreeMap<String, StoreKind>,
    /// `breaker.ratelimiter.instances.<name>.store`, by instance name (only those set;
    /// issue #29).
    pub rate_limiters: BTreeMap<String, StoreKind>,
    /// `breaker.bulkhead.instances.<name>.store`, by instance name (only those set;
    /// semaphore bulkheads, issue #29).
    pub bulkheads: BTreeMap<String, StoreKind>,
    /// `breaker.redis.*`.
    pub redis: RedisSettings,
    /// Where each key set here came from, by full key.
    pub origins: BTreeMap<String, Origin>,
}

impl SharedStoreConfig {
    /// Where the breaker `name` keeps its state (`local` unless configured).
    pub fn store_of(&self, name: &str) -> StoreKind {
        self.instances.get(name).copied().unwrap_or_default()
    }

    /// `url` without its credentials, as logs and reports show it.
    pub fn redacted_url(url: &str) -> String {
        redact_url(url)
    }

    /// Where the rate limiter `name` keeps its permits (`local` unless configured).
    pub fn rate_limiter_store_of(&self, name: &str) -> StoreKind {
        self.rate_limiters.get(name).copied().unwrap_or_default()
    }

    /// Where the semaphore bulkhead `name` counts its calls (`local` unless configured).
    pub fn bulkhead_store_of(&self, name: &str) -> StoreKind {
        self.bulkheads.get(name).copied().unwrap_or_default()
    }

    /// Whether any instance (circuit breaker, rate limiter, bulkhead) shares its state
    /// through Redis.
    pub fn uses_redis(&self) -> bool {
        self.first_redis_key().is_some()
    }

    /// The full key of the first instance with `store: redis`.
    fn first_redis_key(&self) -> Option<String> {
        let kinds = [
            ("circuitbreaker", &self.instances),
            ("ratelimiter", &self.rate_limiters),
            ("bulkhead", &self.bulkheads),
        ];
        kinds.iter().find_map(|(kind, map)| {
            map.iter()
                .find(|(_, k)| **k == StoreKind::Redis)
                .map(|(name, _)| format!("breaker.{kind}.instances.{name}.store"))
        })
    }

    /// The `breaker check` view: `{"instances": {name: "redis"}, "redis": {...}}`, the URL
    /// without credentials, durations in ms.
    pub fn report(&self) -> Value {
        let ms = |d: &Option<Duration>| d.map(|d| d.as_millis() as u64);
        json!({
            "instances": self.instances.iter().map(|(k, v)| (k.clone(), json!(v.name()))).collect::<serde_json::Map<_, _>>(),
            "rateLimiters": self.rate_limiters.iter().map(|(k, v)| (k.clone(), json!(v.name()))).collect::<serde_json::Map<_, _>>(),
            "bulkheads": self.bulkheads.iter().map(|(k, v)| (k.clone(), json!(v.name()))).collect::<serde_json::Map<_, _>>(),
            "redis": {
                "url": self.redis.url.as_deref().map(redact_url),
                "keyPrefix": self.redis.key_prefix,
                "refreshIntervalMs": ms(&self.redis.refresh_interval),
                "timeoutMs": ms(&self.redis.timeout),
                "trialLeaseMs": ms(&self.redis.trial_lease),
                "keyTtlMs": ms(&self.redis.key_ttl),
                "replicaLeaseMs": ms(&self.redis.replica_lease),
            },
        })
    }
}

/// `redis://user:secret@host:6379/2` -> `redis://host:6379/2`.
pub(crate) fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "<redis url>".into();
    };
    let rest = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    format!("{scheme}://{rest}")
}

const REDIS_KEYS: [&str; 7] = [
    "url",
    "key-prefix",
    "refresh-interval",
    "timeout",
    "trial-lease",
    "key-ttl",
    "replica-lease",
];

/// The module names whose instances take a `store` (`breaker.<module>.instances.<name>.store`).
const STORE_MODULES: [&str; 3] = ["circuitbreaker", "ratelimiter", "bulkhead"];

/// Reads the `breaker.*` keys of `docs` (lowest precedence first).
pub(crate) fn read(
    docs: &[&Document],
    resolver: &Resolver<'_>,
    warnings: &mut Vec<Warning>,
) -> (SharedStoreConfig, Vec<ConfigError>) {
    let mut c = SharedStoreConfig::default();
    let mut errors = Vec::new();
    let mut r = Reader {
        resolver,
        errors: &mut errors,
    };
    // Instance stores: the last property of the highest document for each name wins.
    let mut stores = BTreeMap::new();
    for p in docs.iter().flat_map(|d| d.properties.iter()) {
        let n = &p.name;
        if n.is_empty() || !n[0].is("breaker") || crate::drill::is_drill_key(p) {
            continue;
        }
        let module = STORE_MODULES
            .iter()
            .position(|m| starts(p, &["breaker", m, "instances"]));
        let known = if let (Some(m), true) = (module, n.len() == 5 && n[4].is("store")) {
            stores.insert((m, map_key(&n[3].text, n[3].bracketed)), p);
            true
        } else {
            n.len() == 3 && n[1].is("redis") && REDIS_KEYS.iter().any(|k| n[2].is(k))
        } || crate::budgets::is_budget_key(p);
        // An environment variable under BREAKER_ that is no setting (BREAKER_CONFIG names the
        // file to load) is someone else's: only what the files or arguments write is warned.
        if !known && !p.key_origin.file.starts_with("environment ") {
            warnings.push(Warning::new(
                Some(p.key_origin.clone()),
                p.key.clone(),
                "unknown breaker setting; ignored (breaker reads breaker.circuitbreaker|ratelimiter|bulkhead.instances.<name>.store and breaker.redis.url, .key-prefix, .refresh-interval, .timeout, .trial-lease, .key-ttl, .replica-lease; drills under breaker.drill.instances.<name>)".into(),
            ));
        }
    }
    for ((module, name), p) in stores {
        let Some(v) = r.resolved(p) else { continue };
        let map = match module {
            0 => &mut c.instances,
            1 => &mut c.rate_limiters,
            _ => &mut c.bulkheads,
        };
        match v.to_ascii_lowercase().as_str() {
            "local" => {
                map.insert(name, StoreKind::Local);
            }
            "redis" => {
                map.insert(name, StoreKind::Redis);
            }
            _ => r
                .errors
                .push(error(p, &v, format!("unknown store '{v}'"), "local, redis")),
        }
        c.origins.insert(p.key.clone(), p.value_origin.clone());
    }
    let mut text = |r: &mut Reader<'_, '_>, key: &str| {
        let (p, v) = r.text(docs, &["breaker", "redis", key])?;
        c.origins.insert(p.key.clone(), p.value_origin.clone());
        Some((p, v))
    };
    let url = text(&mut r, "url");
    let prefix = text(&mut r, "key-prefix");
    let mut durations = Vec::new();
    for key in [
        "refresh-interval",
        "timeout",
        "trial-lease",
        "key-ttl",
        "replica-lease",
    ] {
        durations.push(text(&mut r, key));
    }
    if let Some((p, v)) = url {
        if v.contains("://") {
            c.redis.url = Some(v);
        } else {
            r.errors.push(error(
                p,
                &redact_url(&v),
                "not a Redis URL".into(),
                "redis://[user:password@]host:port[/db], rediss://..., redis+unix:///path",
            ));
        }
    }
    c.redis.key_prefix = prefix.map(|(_, v)| v);
    let mut parsed = durations.into_iter().map(|d| {
        let (p, v) = d?;
        match crate::duration::parse(&v).ok().and_then(|d| d.to_std()) {
            Some(d) if !d.is_zero() => Some(d),
            _ => {
                r.errors.push(error(
                    p,
                    &v,
                    format!("'{v}' is not a positive duration"),
                    "a positive duration such as 100ms, 2s or PT0.1S",
                ));
                None
            }
        }
    });
    c.redis.refresh_interval = parsed.next().flatten();
    c.redis.timeout = parsed.next().flatten();
    c.redis.trial_lease = parsed.next().flatten();
    c.redis.key_ttl = parsed.next().flatten();
    c.redis.replica_lease = parsed.next().flatten();
    drop(parsed);
    if c.uses_redis() && c.redis.url.is_none() && !errors_mention_url(r.errors) {
        let key = c.first_redis_key().expect("uses_redis");
        let origin = c
            .origins
            .iter()
            .find(|(k, _)| relaxed_eq(k, &key))
            .map(|(_, o)| o.clone());
        r.errors.push(ConfigError {
            origin,
            key,
            value: Some("redis".into()),
            message: "store: redis needs breaker.redis.url".into(),
            allowed: "set breaker.redis.url (redis://host:port), or store: local".into(),
        });
    }
    (c, errors)
}

fn errors_mention_url(errors: &[ConfigError]) -> bool {
    errors.iter().any(|e| e.key.ends_with(".url"))
}

fn relaxed_eq(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.replace('-', "").to_ascii_lowercase();
    norm(a) == norm(b)
}
