//! [`Registry`]: named circuit breakers and named configs (Resilience4j's
//! `CircuitBreakerRegistry`), with live config replacement.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use arc_swap::ArcSwap;

use crate::breaker::CircuitBreaker;
use crate::clock::Clock;
use crate::config::CircuitBreakerConfig;
use crate::events::{CircuitBreakerEvent, EventBuffer};

/// The config name Resilience4j reserves for the registry default.
pub const DEFAULT_CONFIG_NAME: &str = "default";

/// Something that changed in a registry (Resilience4j's `EntryAddedEvent`,
/// `EntryReplacedEvent`, `EntryRemovedEvent`).
#[derive(Debug, Clone)]
pub enum RegistryEvent {
    /// A breaker was created.
    Added(CircuitBreaker),
    /// A breaker's config was replaced in place; the breaker kept its state.
    Replaced {
        /// The breaker (the same one as before).
        breaker: CircuitBreaker,
        /// The config it had.
        old: Arc<CircuitBreakerConfig>,
        /// The config it has now.
        new: Arc<CircuitBreakerConfig>,
    },
    /// A breaker was removed from the registry (existing handles keep working).
    Removed(CircuitBreaker),
}

/// Errors of registry operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Resilience4j's `ConfigurationNotFoundException`.
    #[error("Configuration with name '{0}' does not exist")]
    ConfigurationNotFound(String),
    /// `default` cannot be added or removed as a named config.
    #[error("You cannot use 'default' as a configuration name as it is preserved for default configuration")]
    DefaultIsReserved,
}

#[derive(Clone)]
struct Entry {
    breaker: CircuitBreaker,
    /// `false`: follows the registry default config.
    own_config: bool,
    buffer: Option<EventBuffer>,
}

type Listener = Arc<dyn Fn(&RegistryEvent) + Send + Sync>;

struct RegistryInner {
    default_config: ArcSwap<CircuitBreakerConfig>,
    configs: RwLock<HashMap<String, Arc<CircuitBreakerConfig>>>,
    /// Configs assigned to instance names, used when the breaker is (re)created.
    instance_configs: RwLock<HashMap<String, Arc<CircuitBreakerConfig>>>,
    breakers: RwLock<BTreeMap<String, Entry>>,
    listeners: ArcSwap<Vec<Listener>>,
    buffers_enabled: std::sync::atomic::AtomicBool,
    /// The clock of every breaker created from now on, whatever its config says.
    clock: RwLock<Option<Arc<dyn Clock>>>,
}

/// Named circuit breakers sharing named configs. Cheap to clone; clones share everything.
///
/// `circuit_breaker(name)` returns the existing breaker or creates it from the config
/// assigned to that name ([`configure_instance`](Self::configure_instance)) or else the
/// default config. Configs can be replaced while calls run: the breaker keeps its state and
/// every handle, including handles cached at call sites, sees the new config at once.
///
/// ```
/// use breaker_core::{CircuitBreakerConfig, Registry, State};
/// let registry = Registry::new();
/// let a = registry.circuit_breaker("payments");
/// let b = registry.circuit_breaker("payments");
/// assert!(a.ptr_eq(&b));
/// registry.configure_instance(
///     "payments",
///     CircuitBreakerConfig::builder().failure_rate_threshold(25.0).build()?,
/// );
/// assert_eq!(a.config().failure_rate_threshold(), 25.0);
/// assert_eq!(a.state(), State::Closed);
/// # Ok::<(), breaker_core::ConfigError>(())
/// ```
#[derive(Clone)]
pub struct Registry {
    inner: Arc<RegistryInner>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}
fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

impl Registry {
    /// A registry whose default config is Resilience4j's defaults.
    pub fn new() -> Self {
        Self::with_default_config(CircuitBreakerConfig::default())
    }

    /// A registry with `default_config` as its default (`configs.default`).
    pub fn with_default_config(default_config: CircuitBreakerConfig) -> Self {
        Registry {
            inner: Arc::new(RegistryInner {
                default_config: ArcSwap::from_pointee(default_config),
                configs: RwLock::new(HashMap::new()),
                instance_configs: RwLock::new(HashMap::new()),
                breakers: RwLock::new(BTreeMap::new()),
                listeners: ArcSwap::from_pointee(Vec::new()),
                buffers_enabled: std::sync::atomic::AtomicBool::new(false),
                clock: RwLock::new(None),
            }),
        }
    }

    /// The breaker named `name`, created on first use from its assigned config or the
    /// default config. Take it once and keep the handle: lookups hash the name.
    pub fn circuit_breaker(&self, name: &str) -> CircuitBreaker {
        if let Some(e) = read(&self.inner.breakers).get(name) {
            return e.breaker.clone();
        }
        let assigned = read(&self.inner.instance_configs).get(name).cloned();
        let own = assigned.is_some();
        let config = assigned.unwrap_or_else(|| self.inner.default_config.load_full());
        self.get_or_insert(name, config, own)
    }

    /// The breaker named `name`, created with `config` if it does not exist yet. An existing
    /// breaker is returned unchanged, as in Resilience4j.
    pub fn circuit_breaker_with_config(
        &self,
        name: &str,
        config: CircuitBreakerConfig,
    ) -> CircuitBreaker {
        if let Some(e) = read(&self.inner.breakers).get(name) {
            return e.breaker.clone();
        }
        self.get_or_insert(name, Arc::new(config), true)
    }

    /// The breaker named `name`, created from the named config `config_name` if it does not
    /// exist yet.
    ///
    /// # Errors
    /// [`RegistryError::ConfigurationNotFound`] when the breaker does not exist and no
    /// config has that name.
    pub fn circuit_breaker_with_config_name(
        &self,
        name: &str,
        config_name: &str,
    ) -> Result<CircuitBreaker, RegistryError> {
        if let Some(e) = read(&self.inner.breakers).get(name) {
            return Ok(e.breaker.clone());
        }
        let config = self
            .configuration(config_name)
            .ok_or_else(|| RegistryError::ConfigurationNotFound(config_name.to_string()))?;
        Ok(self.get_or_insert(name, config, true))
    }

    fn get_or_insert(
        &self,
        name: &str,
        config: Arc<CircuitBreakerConfig>,
        own_config: bool,
    ) -> CircuitBreaker {
        let breaker = {
            let mut map = write(&self.inner.breakers);
            if let Some(e) = map.get(name) {
                return e.breaker.clone();
            }
            let breaker = CircuitBreaker::new(name, self.stamped(&config));
            map.insert(
                name.to_string(),
                Entry {
                    buffer: self.new_buffer(&breaker),
                    breaker: breaker.clone(),
                    own_config,
                },
            );
            breaker
        };
        self.emit(&RegistryEvent::Added(breaker.clone()));
        breaker
    }

    /// The existing breaker named `name`, without creating it.
    pub fn find(&self, name: &str) -> Option<CircuitBreaker> {
        read(&self.inner.breakers)
            .get(name)
            .map(|e| e.breaker.clone())
    }

    /// Every breaker, sorted by name.
    pub fn all(&self) -> Vec<CircuitBreaker> {
        read(&self.inner.breakers)
            .values()
            .map(|e| e.breaker.clone())
            .collect()
    }

    /// Removes the breaker named `name` (and its assigned config). Handles already taken
    /// keep working but are no longer reachable through the registry.
    pub fn remove(&self, name: &str) -> Option<CircuitBreaker> {
        write(&self.inner.instance_configs).remove(name);
        let removed = write(&self.inner.breakers).remove(name).map(|e| e.breaker);
        if let Some(b) = &removed {
            self.emit(&RegistryEvent::Removed(b.clone()));
        }
        removed
    }

    /// The default config (`configs.default`, else Resilience4j's defaults).
    pub fn default_config(&self) -> Arc<CircuitBreakerConfig> {
        self.inner.default_config.load_full()
    }

    /// Replaces the default config; every breaker that follows it (no assigned config) gets
    /// the new one in place.
    pub fn set_default_config(&self, config: CircuitBreakerConfig) {
        let config = Arc::new(config);
        self.inner.default_config.store(config.clone());
        let followers: Vec<CircuitBreaker> = read(&self.inner.breakers)
            .values()
            .filter(|e| !e.own_config)
            .map(|e| e.breaker.clone())
            .collect();
        for b in followers {
            self.replace_in_place(&b, config.clone());
        }
    }

    /// Adds or replaces a named config (`configs.<name>`). Existing breakers are unaffected.
    ///
    /// # Errors
    /// [`RegistryError::DefaultIsReserved`] for `default`: use
    /// [`set_default_config`](Self::set_default_config).
    pub fn add_configuration(
        &self,
        name: &str,
        config: CircuitBreakerConfig,
    ) -> Result<(), RegistryError> {
        if name == DEFAULT_CONFIG_NAME {
            return Err(RegistryError::DefaultIsReserved);
        }
        write(&self.inner.configs).insert(name.to_string(), Arc::new(config));
        Ok(())
    }

    /// The named config, or the default config for `default`.
    pub fn configuration(&self, name: &str) -> Option<Arc<CircuitBreakerConfig>> {
        if name == DEFAULT_CONFIG_NAME {
            return Some(self.default_config());
        }
        read(&self.inner.configs).get(name).cloned()
    }

    /// Assigns `config` to the instance `name` (`instances.<name>`): creates the breaker if
    /// it does not exist (eagerly, as Spring does), else replaces its config in place,
    /// keeping its state. Returns the breaker.
    pub fn configure_instance(&self, name: &str, config: CircuitBreakerConfig) -> CircuitBreaker {
        let config = Arc::new(config);
        write(&self.inner.instance_configs).insert(name.to_string(), config.clone());
        let existing = {
            let mut map = write(&self.inner.breakers);
            match map.get_mut(name) {
                Some(e) => {
                    e.own_config = true;
                    Some(e.breaker.clone())
                }
                None => None,
            }
        };
        match existing {
            Some(b) => {
                self.replace_in_place(&b, config);
                b
            }
            None => self.get_or_insert(name, config, true),
        }
    }

    /// Drops the config assigned to `name`: the breaker (if any) follows the default config
    /// again, in place.
    pub fn unconfigure_instance(&self, name: &str) {
        write(&self.inner.instance_configs).remove(name);
        let b = {
            let mut map = write(&self.inner.breakers);
            map.get_mut(name).map(|e| {
                e.own_config = false;
                e.breaker.clone()
            })
        };
        if let Some(b) = b {
            self.replace_in_place(&b, self.default_config());
        }
    }

    /// Replaces the config of the existing breaker `name` in place; `false` if there is no
    /// such breaker.
    pub fn replace_config(&self, name: &str, config: CircuitBreakerConfig) -> bool {
        match self.find(name) {
            Some(_) => {
                self.configure_instance(name, config);
                true
            }
            None => false,
        }
    }

    /// Applies a whole new configuration in one step (what a reload does): the default
    /// config, every named config, and every instance config. Instances no longer listed go
    /// back to the default config. All breakers are updated under the registry's write lock,
    /// so no breaker is created from a half-applied configuration.
    pub fn apply(
        &self,
        default_config: CircuitBreakerConfig,
        configs: impl IntoIterator<Item = (String, CircuitBreakerConfig)>,
        instances: impl IntoIterator<Item = (String, CircuitBreakerConfig)>,
    ) {
        let default_config = Arc::new(default_config);
        let instances: HashMap<String, Arc<CircuitBreakerConfig>> = instances
            .into_iter()
            .map(|(n, c)| (n, Arc::new(c)))
            .collect();
        let mut added = Vec::new();
        let mut replaced = Vec::new();
        {
            let mut map = write(&self.inner.breakers);
            *write(&self.inner.configs) = configs
                .into_iter()
                .filter(|(n, _)| n != DEFAULT_CONFIG_NAME)
                .map(|(n, c)| (n, Arc::new(c)))
                .collect();
            *write(&self.inner.instance_configs) = instances.clone();
            self.inner.default_config.store(default_config.clone());
            for (name, e) in map.iter_mut() {
                let (config, own) = match instances.get(name) {
                    Some(c) => (c.clone(), true),
                    None => (default_config.clone(), false),
                };
                e.own_config = own;
                let old = e.breaker.config();
                if !Arc::ptr_eq(&old, &config) {
                    e.breaker.replace_config(self.stamped(&config));
                    resize(e);
                    replaced.push((e.breaker.clone(), old, e.breaker.config()));
                }
            }
            for (name, config) in &instances {
                if !map.contains_key(name) {
                    let b = CircuitBreaker::new(name.as_str(), self.stamped(config));
                    map.insert(
                        name.clone(),
                        Entry {
                            buffer: self.new_buffer(&b),
                            breaker: b.clone(),
                            own_config: true,
                        },
                    );
                    added.push(b);
                }
            }
        }
        for (breaker, old, new) in replaced {
            self.emit(&RegistryEvent::Replaced { breaker, old, new });
        }
        for b in added {
            self.emit(&RegistryEvent::Added(b));
        }
    }

    /// Runs every breaker this registry creates from now on on `clock`, whatever clock its
    /// config names: the configs of a loaded file, the default config that names not listed
    /// get, and configs given later. Breakers that already exist keep their clock. Resilience4j
    /// has no registry-wide clock; this is for tests that drive a whole configuration with a
    /// [`ManualClock`](crate::ManualClock).
    pub fn set_clock(&self, clock: Arc<dyn Clock>) {
        *write(&self.inner.clock) = Some(clock);
    }

    /// `config` with the registry's clock, if one is set.
    fn stamped(&self, config: &CircuitBreakerConfig) -> CircuitBreakerConfig {
        let mut c = config.clone();
        if let Some(clock) = read(&self.inner.clock).as_ref() {
            c.clock = clock.clone();
        }
        c
    }

    /// Keeps the recent events of every breaker, existing and future, in a bounded buffer
    /// (Resilience4j's actuator `circuitbreakerevents` buffers) of the size its config's
    /// [`InstanceSettings::event_consumer_buffer_size`](crate::InstanceSettings::event_consumer_buffer_size)
    /// says (`eventConsumerBufferSize`, default 100; resized when the config is replaced).
    /// Off by default: a buffer makes every call build its event.
    pub fn enable_event_buffers(&self) {
        self.inner
            .buffers_enabled
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let mut map = write(&self.inner.breakers);
        for e in map.values_mut() {
            if e.buffer.is_none() {
                e.buffer = self.new_buffer(&e.breaker);
            }
        }
    }

    /// The buffered recent events of the breaker `name`, oldest first; `None` when there is no
    /// such breaker or buffers are not enabled.
    pub fn recent_events(&self, name: &str) -> Option<Vec<CircuitBreakerEvent>> {
        read(&self.inner.breakers)
            .get(name)
            .and_then(|e| e.buffer.as_ref().map(EventBuffer::events))
    }

    /// The capacity of the event buffer of the breaker `name`; `None` when there is no such
    /// breaker or buffers are not enabled.
    pub fn event_buffer_capacity(&self, name: &str) -> Option<usize> {
        read(&self.inner.breakers)
            .get(name)
            .and_then(|e| e.buffer.as_ref().map(EventBuffer::capacity))
    }

    fn new_buffer(&self, breaker: &CircuitBreaker) -> Option<EventBuffer> {
        if !self
            .inner
            .buffers_enabled
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return None;
        }
        Some(breaker.attach_event_buffer(buffer_size(&breaker.config())))
    }

    fn replace_in_place(&self, b: &CircuitBreaker, config: Arc<CircuitBreakerConfig>) {
        let old = b.config();
        b.replace_config(self.stamped(&config));
        if let Some(e) = write(&self.inner.breakers).get_mut(b.name()) {
            if e.breaker.ptr_eq(b) {
                resize(e);
            }
        }
        self.emit(&RegistryEvent::Replaced {
            breaker: b.clone(),
            old,
            new: b.config(),
        });
    }

    /// Calls `f` for every registry event (added, replaced, removed), synchronously.
    pub fn subscribe(&self, f: impl Fn(&RegistryEvent) + Send + Sync + 'static) {
        let f: Listener = Arc::new(f);
        self.inner.listeners.rcu(|l| {
            let mut l = Vec::clone(l);
            l.push(f.clone());
            l
        });
    }

    fn emit(&self, e: &RegistryEvent) {
        for l in self.inner.listeners.load().iter() {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| l(e))).is_err() {
                tracing::warn!("registry event listener panicked");
            }
        }
    }
}

fn buffer_size(c: &CircuitBreakerConfig) -> usize {
    c.instance_settings().event_consumer_buffer_size.max(1) as usize
}

/// Gives an entry's event buffer the size its breaker's config asks for now.
fn resize(e: &mut Entry) {
    if let Some(buffer) = &e.buffer {
        buffer.set_capacity(buffer_size(&e.breaker.config()));
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field(
                "breakers",
                &read(&self.inner.breakers).keys().collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}
