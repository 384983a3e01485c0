//! Sharing from configuration: `breaker.circuitbreaker.instances.<name>.store: redis` and
//! `breaker.redis.*`, read by `breaker-config` (see [`SharedStoreConfig`]).

use breaker_config::{RedisSettings, SharedStoreConfig, StoreKind};
use breaker_core::bulkhead::BulkheadRegistry;
use breaker_core::ratelimiter::RateLimiterRegistry;
use breaker_core::{Registry, RegistryEntryEvent, RegistryEvent};

use crate::options::RedisStoreOptions;
use crate::store::{RedisStore, StoreError};

/// What [`attach_configured`] set up.
#[derive(Debug, Default)]
pub struct ConfiguredStores {
    /// The Redis store, when an instance has `store: redis`.
    pub store: Option<RedisStore>,
    /// The breakers attached so far (later ones are attached as the registry creates them).
    pub attached: Vec<String>,
}

/// The store options `breaker.redis.*` give, defaults for the keys left out.
pub fn options_from(settings: &RedisSettings) -> RedisStoreOptions {
    let d = RedisStoreOptions::default();
    RedisStoreOptions {
        key_prefix: settings.key_prefix.clone().unwrap_or(d.key_prefix),
        refresh_interval: settings.refresh_interval.unwrap_or(d.refresh_interval),
        timeout: settings.timeout.unwrap_or(d.timeout),
        trial_lease: settings.trial_lease.unwrap_or(d.trial_lease),
        key_ttl: settings.key_ttl.unwrap_or(d.key_ttl),
        replica_lease: settings.replica_lease.unwrap_or(d.replica_lease),
    }
}

/// Shares, through Redis, the state of every breaker of `registry` that `config` names with
/// `store: redis`: those that exist now, and those the registry creates later (attached
/// before their first call). Nothing happens when no instance names `store: redis`.
///
/// ```no_run
/// let loaded = breaker_config::Loader::new().load_files(&["application.yml"])?;
/// let registry = breaker_config::registry_from_loaded(&loaded, &Default::default())?;
/// let _stores = breaker_redis::attach_configured(&loaded.shared_store, &registry)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`StoreError::MissingUrl`] without `breaker.redis.url`, [`StoreError::InvalidUrl`]
/// when it does not parse. Redis being unreachable is not an error (see [`RedisStore::open`]).
pub fn attach_configured(
    config: &SharedStoreConfig,
    registry: &Registry,
) -> Result<ConfiguredStores, StoreError> {
    if !config.uses_redis() {
        return Ok(ConfiguredStores::default());
    }
    let url = config.redis.url.as_deref().ok_or(StoreError::MissingUrl)?;
    let store = RedisStore::open(url, options_from(&config.redis))?;
    let mut attached = Vec::new();
    for b in registry.all() {
        if config.store_of(b.name()) == StoreKind::Redis && !b.has_shared_state() {
            store.attach(&b)?;
            attached.push(b.name().to_string());
        }
    }
    let later = store.clone();
    let names = config.clone();
    registry.subscribe(move |e| {
        if let RegistryEvent::Added(b) = e {
            if names.store_of(b.name()) == StoreKind::Redis && !b.has_shared_state() {
                let _ = later.attach(b);
            }
        }
    });
    Ok(ConfiguredStores {
        store: Some(store),
        attached,
    })
}

/// Shares, through Redis, the limit of every rate limiter and semaphore bulkhead that
/// `config` names with `store: redis` (`breaker.ratelimiter.instances.<name>.store`,
/// `breaker.bulkhead.instances.<name>.store`; issue #29): those the registries hold now
/// and those they create later (attached before their first call). Uses `store` when given
/// (the one [`attach_configured`] opened), else opens one; returns the store in use, `None`
/// when no limiter or bulkhead names `store: redis`.
///
/// # Errors
/// [`StoreError::MissingUrl`] without `breaker.redis.url`, [`StoreError::InvalidUrl`]
/// when it does not parse.
pub fn attach_configured_limits(
    config: &SharedStoreConfig,
    rate_limiters: &RateLimiterRegistry,
    bulkheads: &BulkheadRegistry,
    store: Option<RedisStore>,
) -> Result<Option<RedisStore>, StoreError> {
    let redis = |m: &std::collections::BTreeMap<String, StoreKind>| {
        m.values().any(|k| *k == StoreKind::Redis)
    };
    if !redis(&config.rate_limiters) && !redis(&config.bulkheads) {
        return Ok(store);
    }
    let store = match store {
        Some(s) => s,
        None => {
            let url = config.redis.url.as_deref().ok_or(StoreError::MissingUrl)?;
            RedisStore::open(url, options_from(&config.redis))?
        }
    };
    for l in rate_limiters.all() {
        if config.rate_limiter_store_of(l.name()) == StoreKind::Redis && !l.has_shared_limit() {
            store.attach_rate_limiter(&l)?;
        }
    }
    for b in bulkheads.all() {
        if config.bulkhead_store_of(b.name()) == StoreKind::Redis && !b.has_shared_concurrency() {
            store.attach_bulkhead(&b)?;
        }
    }
    let (later, names) = (store.clone(), config.clone());
    rate_limiters.subscribe(move |e| {
        if let RegistryEntryEvent::Added(l) = e {
            if names.rate_limiter_store_of(l.name()) == StoreKind::Redis && !l.has_shared_limit() {
                let _ = later.attach_rate_limiter(l);
            }
        }
    });
    let (later, names) = (store.clone(), config.clone());
    bulkheads.subscribe(move |e| {
        if let RegistryEntryEvent::Added(b) = e {
            if names.bulkhead_store_of(b.name()) == StoreKind::Redis && !b.has_shared_concurrency()
            {
                let _ = later.attach_bulkhead(b);
            }
        }
    });
    Ok(Some(store))
}
