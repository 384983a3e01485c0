//! [`Keyed`]: one configured instance keyed at run time (issue #29): a circuit breaker, rate
//! limiter or bulkhead per tenant, per user, per downstream host, each key getting the
//! configured instance's config, under a bounded number of active keys.
//!
//! `registry.keyed("payments", KeyLimits::default()).get("tenant-42")` returns the instance
//! for that key, created on first use from the config of the instance `payments` and named
//! `payments/tenant-42` (so every event, metric and actuator entry it produces carries the
//! key in its name). At most [`KeyLimits::max_keys`] keys are held: a key unused for
//! [`KeyLimits::idle`] is dropped when room is needed, else the least recently used one. A
//! dropped key starts afresh on its next use (a breaker CLOSED, a limiter with a full
//! cycle, a bulkhead empty; calls still holding a permit of the dropped instance finish on
//! it). A config change of the named instance applies to keys created afterwards.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::breaker::CircuitBreaker;
use crate::bulkhead::{Bulkhead, BulkheadRegistry};
use crate::clock::{Clock, SystemClock};
use crate::ratelimiter::{RateLimiter, RateLimiterRegistry};
use crate::registry::Registry;

/// The bound on a [`Keyed`]'s active keys.
#[derive(Clone)]
pub struct KeyLimits {
    /// The most keys held at once (default 1000, at least 1).
    pub max_keys: usize,
    /// A key unused this long is dropped first when room is needed (default 10 min).
    pub idle: Duration,
    /// The clock idleness is measured by (default the system clock; a `ManualClock` in
    /// tests).
    pub clock: Arc<dyn Clock>,
}

impl Default for KeyLimits {
    fn default() -> Self {
        KeyLimits {
            max_keys: 1000,
            idle: Duration::from_secs(600),
            clock: SystemClock::shared(),
        }
    }
}

impl fmt::Debug for KeyLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyLimits")
            .field("max_keys", &self.max_keys)
            .field("idle", &self.idle)
            .finish_non_exhaustive()
    }
}

type Factory<T> = Box<dyn Fn(&str) -> T + Send + Sync>;
type OnCreate<T> = Box<dyn Fn(&T) + Send + Sync>;

/// One configured instance keyed at run time (see the module docs). Cheap to clone; clones
/// share the keys.
pub struct Keyed<T> {
    inner: Arc<Inner<T>>,
}

struct Inner<T> {
    name: Arc<str>,
    limits: KeyLimits,
    create: Factory<T>,
    /// Runs on every instance created (a store attaching it: `breaker-redis`).
    on_create: OnceLock<OnCreate<T>>,
    /// Key -> (instance, last use in clock ns).
    keys: Mutex<HashMap<String, (T, u64)>>,
}

impl<T> Clone for Keyed<T> {
    fn clone(&self) -> Self {
        Keyed {
            inner: self.inner.clone(),
        }
    }
}

impl<T: Clone> Keyed<T> {
    fn new(name: &str, limits: KeyLimits, create: Factory<T>) -> Keyed<T> {
        let mut limits = limits;
        limits.max_keys = limits.max_keys.max(1);
        Keyed {
            inner: Arc::new(Inner {
                name: name.into(),
                limits,
                create,
                on_create: OnceLock::new(),
                keys: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The configured instance's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The bound on the active keys.
    pub fn limits(&self) -> &KeyLimits {
        &self.inner.limits
    }

    /// The instance of `key`, created on first use (named `<name>/<key>`), possibly
    /// dropping an idle or the least recently used key to stay within
    /// [`KeyLimits::max_keys`]. One lock and one hash lookup.
    pub fn get(&self, key: &str) -> T {
        let now = self.inner.limits.clock.recent_nanos();
        let mut keys = self.inner.keys.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((instance, used)) = keys.get_mut(key) {
            *used = now;
            return instance.clone();
        }
        if keys.len() >= self.inner.limits.max_keys {
            self.make_room(&mut keys, now);
        }
        let instance = (self.inner.create)(&format!("{}/{key}", self.inner.name));
        if let Some(f) = self.inner.on_create.get() {
            f(&instance);
        }
        keys.insert(key.to_string(), (instance.clone(), now));
        instance
    }

    /// Drops every key idle for [`KeyLimits::idle`]; if none is, the least recently used.
    fn make_room(&self, keys: &mut HashMap<String, (T, u64)>, now: u64) {
        let idle = self.inner.limits.idle.as_nanos() as u64;
        let before = keys.len();
        keys.retain(|_, (_, used)| now.saturating_sub(*used) < idle);
        if keys.len() == before {
            if let Some(oldest) = keys
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            {
                keys.remove(&oldest);
            }
        }
    }

    /// The active keys, sorted.
    pub fn keys(&self) -> Vec<String> {
        let keys = self.inner.keys.lock().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<String> = keys.keys().cloned().collect();
        all.sort();
        all
    }

    /// The instance of `key` if it is active (does not count as a use).
    pub fn find(&self, key: &str) -> Option<T> {
        let keys = self.inner.keys.lock().unwrap_or_else(|e| e.into_inner());
        keys.get(key).map(|(i, _)| i.clone())
    }

    /// Runs `f` on every instance created from now on, before its first use (a store
    /// sharing each key's instance). At most one; `false` when one is set already.
    pub fn on_create(&self, f: impl Fn(&T) + Send + Sync + 'static) -> bool {
        self.inner.on_create.set(Box::new(f)).is_ok()
    }
}

impl<T> fmt::Debug for Keyed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.inner.keys.lock().map(|k| k.len()).unwrap_or(0);
        f.debug_struct("Keyed")
            .field("name", &self.inner.name)
            .field("active_keys", &n)
            .field("limits", &self.inner.limits)
            .finish()
    }
}

impl Registry {
    /// The circuit breaker `name` keyed at run time: one breaker per key (one circuit per
    /// failure domain: per tenant, per downstream host), each with `name`'s config as it is
    /// now (creating `name` if needed). See [`Keyed`].
    pub fn keyed(&self, name: &str, limits: KeyLimits) -> Keyed<CircuitBreaker> {
        let config = self.circuit_breaker(name).config();
        Keyed::new(
            name,
            limits,
            Box::new(move |n| CircuitBreaker::new(n.to_string(), (*config).clone())),
        )
    }
}

impl RateLimiterRegistry {
    /// The rate limiter `name` keyed at run time: one limiter per key (per tenant, user, API
    /// key), each with `name`'s `limitForPeriod` per `limitRefreshPeriod`. See [`Keyed`].
    pub fn keyed(&self, name: &str, limits: KeyLimits) -> Keyed<RateLimiter> {
        let config = self.rate_limiter(name).config();
        Keyed::new(
            name,
            limits,
            Box::new(move |n| RateLimiter::with_shared_config(n.into(), config.clone())),
        )
    }
}

impl BulkheadRegistry {
    /// The semaphore bulkhead `name` keyed at run time: `maxConcurrentCalls` per key. See
    /// [`Keyed`].
    pub fn keyed(&self, name: &str, limits: KeyLimits) -> Keyed<Bulkhead> {
        let config = self.bulkhead(name).config();
        Keyed::new(
            name,
            limits,
            Box::new(move |n| Bulkhead::with_shared_config(n.into(), config.clone())),
        )
    }
}

#[cfg(test)]
#[path = "keyed_tests.rs"]
mod tests;
