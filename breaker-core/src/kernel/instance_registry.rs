//! [`InstanceRegistry`]: named instances of one module and named configs, shaped like the
//! circuit breaker's [`Registry`](crate::Registry): Resilience4j's `RetryRegistry`,
//! `TimeLimiterRegistry`, `BulkheadRegistry`, `ThreadPoolBulkheadRegistry` and
//! `RateLimiterRegistry`, with live config replacement, registry events and
//! `eventConsumerBufferSize` buffers.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use arc_swap::ArcSwap;

use crate::events::{SubscriptionId, DEFAULT_EVENT_CONSUMER_BUFFER_SIZE};
use crate::publisher::{EventPublisher, ModuleEvent, RecentEvents};
use crate::registry::{RegistryError, DEFAULT_CONFIG_NAME};

/// A kind of instance an [`InstanceRegistry`] holds: a cheap-to-clone handle with a name, a
/// replaceable config and an event publisher. Implemented by
/// [`Retry`](crate::retry::Retry), [`TimeLimiter`](crate::timelimiter::TimeLimiter),
/// [`Bulkhead`](crate::bulkhead::Bulkhead),
/// [`ThreadPoolBulkhead`](crate::bulkhead::ThreadPoolBulkhead) and
/// [`RateLimiter`](crate::ratelimiter::RateLimiter).
pub trait RegistryInstance: Clone + Send + Sync + 'static {
    /// The instance's config.
    type Config: Send + Sync + 'static;
    /// The instance's events.
    type Event: ModuleEvent;

    /// Resilience4j's defaults (`ofDefaults()`), the registry default when none is given.
    fn default_config() -> Self::Config;
    /// A new instance named `name`, using `config` (shared, not copied).
    fn create(name: &str, config: Arc<Self::Config>) -> Self;
    /// The instance's name.
    fn name(&self) -> &str;
    /// The config the instance uses now.
    fn config(&self) -> Arc<Self::Config>;
    /// Replaces the config in place, keeping the instance's state (a bulkhead's permits in
    /// use, a rate limiter's permissions); calls already running keep the config they
    /// started with.
    fn replace_config(&self, config: Arc<Self::Config>);
    /// The instance's event publisher.
    fn event_publisher(&self) -> &EventPublisher<Self::Event>;
}

/// Something that changed in an [`InstanceRegistry`] (Resilience4j's `EntryAddedEvent`,
/// `EntryReplacedEvent`, `EntryRemovedEvent`): `T` is the instance type, `C` its config.
/// The registries deliver it as [`InstanceRegistryEvent`].
#[derive(Debug)]
pub enum RegistryEntryEvent<T, C> {
    /// An instance was created.
    Added(T),
    /// An instance's config was replaced in place; it kept its state.
    Replaced {
        /// The instance (the same one as before).
        instance: T,
        /// The config it had.
        old: Arc<C>,
        /// The config it has now.
        new: Arc<C>,
    },
    /// An instance was removed from the registry (existing handles keep working).
    Removed(T),
}

impl<T: Clone, C> Clone for RegistryEntryEvent<T, C> {
    fn clone(&self) -> Self {
        match self {
            RegistryEntryEvent::Added(i) => RegistryEntryEvent::Added(i.clone()),
            RegistryEntryEvent::Replaced { instance, old, new } => RegistryEntryEvent::Replaced {
                instance: instance.clone(),
                old: old.clone(),
                new: new.clone(),
            },
            RegistryEntryEvent::Removed(i) => RegistryEntryEvent::Removed(i.clone()),
        }
    }
}

/// The event an [`InstanceRegistry<I>`] delivers to its listeners
/// ([`InstanceRegistry::subscribe`]).
pub type InstanceRegistryEvent<I> = RegistryEntryEvent<I, <I as RegistryInstance>::Config>;

struct Entry<I: RegistryInstance> {
    instance: I,
    /// `false`: follows the registry default config.
    own_config: bool,
    buffer: Option<(RecentEvents<I::Event>, SubscriptionId)>,
}

type Listener<I> = Arc<dyn Fn(&InstanceRegistryEvent<I>) + Send + Sync>;

struct Inner<I: RegistryInstance> {
    default_config: ArcSwap<I::Config>,
    configs: RwLock<HashMap<String, Arc<I::Config>>>,
    /// Configs assigned to instance names, used when the instance is (re)created.
    instance_configs: RwLock<HashMap<String, Arc<I::Config>>>,
    instances: RwLock<BTreeMap<String, Entry<I>>>,
    listeners: ArcSwap<Vec<Listener<I>>>,
    /// `eventConsumerBufferSize` per instance name.
    buffer_sizes: RwLock<HashMap<String, usize>>,
    buffers_enabled: AtomicBool,
}

/// Named instances of one module sharing named configs (Resilience4j's `RetryRegistry`,
/// `TimeLimiterRegistry`, `BulkheadRegistry`, `ThreadPoolBulkheadRegistry`,
/// `RateLimiterRegistry`). Cheap to clone; clones share everything.
/// [`RetryRegistry`](crate::retry::RetryRegistry),
/// [`TimeLimiterRegistry`](crate::timelimiter::TimeLimiterRegistry),
/// [`BulkheadRegistry`](crate::bulkhead::BulkheadRegistry),
/// [`ThreadPoolBulkheadRegistry`](crate::bulkhead::ThreadPoolBulkheadRegistry) and
/// [`RateLimiterRegistry`](crate::ratelimiter::RateLimiterRegistry) are this type, each with
/// its module's getters (`retry(name)`, `time_limiter(name)`, `bulkhead(name)`,
/// `rate_limiter(name)`, and their `_with_config` / `_with_config_name` forms).
///
/// [`instance`](Self::instance) returns the existing instance or creates it from the config
/// assigned to that name ([`configure_instance`](Self::configure_instance)) or else the
/// default config. Configs can be replaced while calls run: every handle, including handles
/// cached at call sites, uses the new config from its next call, and keeps its state.
pub struct InstanceRegistry<I: RegistryInstance> {
    inner: Arc<Inner<I>>,
}

impl<I: RegistryInstance> Clone for InstanceRegistry<I> {
    fn clone(&self) -> Self {
        InstanceRegistry {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<I: RegistryInstance> Default for InstanceRegistry<I> {
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

impl<I: RegistryInstance> InstanceRegistry<I> {
    /// A registry whose default config is Resilience4j's defaults for its module.
    pub fn new() -> Self {
        Self::with_default_config(I::default_config())
    }

    /// A registry with `default_config` as its default (`configs.default`).
    pub fn with_default_config(default_config: I::Config) -> Self {
        InstanceRegistry {
            inner: Arc::new(Inner {
                default_config: ArcSwap::from_pointee(default_config),
                configs: RwLock::new(HashMap::new()),
                instance_configs: RwLock::new(HashMap::new()),
                instances: RwLock::new(BTreeMap::new()),
                listeners: ArcSwap::from_pointee(Vec::new()),
                buffer_sizes: RwLock::new(HashMap::new()),
                buffers_enabled: AtomicBool::new(false),
            }),
        }
    }

    /// The instance named `name`, created on first use from its assigned config or the
    /// default config. Take it once and keep the handle: lookups hash the name.
    pub fn instance(&self, name: &str) -> I {
        if let Some(i) = self.find(name) {
            return i;
        }
        let assigned = read(&self.inner.instance_configs).get(name).cloned();
        let own = assigned.is_some();
        let config = assigned.unwrap_or_else(|| self.inner.default_config.load_full());
        self.get_or_insert(name, config, own)
    }

    /// The instance named `name`, created with `config` if it does not exist yet. An
    /// existing instance is returned unchanged, as in Resilience4j.
    pub fn instance_with_config(&self, name: &str, config: I::Config) -> I {
        if let Some(i) = self.find(name) {
            return i;
        }
        self.get_or_insert(name, Arc::new(config), true)
    }

    /// The instance named `name`, created from the named config `config_name` if it does
    /// not exist yet.
    ///
    /// # Errors
    /// [`RegistryError::ConfigurationNotFound`] (`Configuration with name '<name>' does not
    /// exist`) when the instance does not exist and no config has that name.
    pub fn instance_with_config_name(
        &self,
        name: &str,
        config_name: &str,
    ) -> Result<I, RegistryError> {
        if let Some(i) = self.find(name) {
            return Ok(i);
        }
        let config = self
            .configuration(config_name)
            .ok_or_else(|| RegistryError::ConfigurationNotFound(config_name.to_string()))?;
        Ok(self.get_or_insert(name, config, true))
    }

    fn get_or_insert(&self, name: &str, config: Arc<I::Config>, own_config: bool) -> I {
        let instance = {
            let mut map = write(&self.inner.instances);
            if let Some(e) = map.get(name) {
                return e.instance.clone();
            }
            let instance = I::create(name, config);
            map.insert(
                name.to_string(),
                self.entry(name, instance.clone(), own_config),
            );
            instance
        };
        self.emit(&RegistryEntryEvent::Added(instance.clone()));
        instance
    }

    fn entry(&self, name: &str, instance: I, own_config: bool) -> Entry<I> {
        Entry {
            buffer: self.new_buffer(name, &instance),
            instance,
            own_config,
        }
    }

    /// The existing instance named `name`, without creating it.
    pub fn find(&self, name: &str) -> Option<I> {
        read(&self.inner.instances)
            .get(name)
            .map(|e| e.instance.clone())
    }

    /// Every instance, sorted by name.
    pub fn all(&self) -> Vec<I> {
        read(&self.inner.instances)
            .values()
            .map(|e| e.instance.clone())
            .collect()
    }

    /// Removes the instance named `name` (and its assigned config and event buffer).
    /// Handles already taken keep working but are no longer reachable through the
    /// registry.
    pub fn remove(&self, name: &str) -> Option<I> {
        write(&self.inner.instance_configs).remove(name);
        let removed = write(&self.inner.instances).remove(name);
        removed.map(|e| {
            if let Some((_, id)) = e.buffer {
                e.instance.event_publisher().unsubscribe(id);
            }
            self.emit(&RegistryEntryEvent::Removed(e.instance.clone()));
            e.instance
        })
    }

    /// The default config (`configs.default`, else Resilience4j's defaults).
    pub fn default_config(&self) -> Arc<I::Config> {
        self.inner.default_config.load_full()
    }

    /// Replaces the default config; every instance that follows it (no assigned config)
    /// gets the new one in place.
    ///
    /// Like [`apply`](Self::apply), the instances change under the registry's write lock,
    /// so a reload running at the same time is applied wholly before or after this change,
    /// never interleaved with it (an instance never keeps a config the registry no longer
    /// records).
    pub fn set_default_config(&self, config: I::Config) {
        let config = Arc::new(config);
        let mut replaced = Vec::new();
        {
            let map = write(&self.inner.instances);
            self.inner.default_config.store(config.clone());
            for e in map.values().filter(|e| !e.own_config) {
                replaced.push(Self::replace_locked(&e.instance, config.clone()));
            }
        }
        for r in replaced {
            self.emit(&r);
        }
    }

    /// Adds or replaces a named config (`configs.<name>`). Existing instances are
    /// unaffected.
    ///
    /// # Errors
    /// [`RegistryError::DefaultIsReserved`] for `default`: use
    /// [`set_default_config`](Self::set_default_config).
    pub fn add_configuration(&self, name: &str, config: I::Config) -> Result<(), RegistryError> {
        if name == DEFAULT_CONFIG_NAME {
            return Err(RegistryError::DefaultIsReserved);
        }
        write(&self.inner.configs).insert(name.to_string(), Arc::new(config));
        Ok(())
    }

    /// The named config, or the default config for `default`.
    pub fn configuration(&self, name: &str) -> Option<Arc<I::Config>> {
        if name == DEFAULT_CONFIG_NAME {
            return Some(self.default_config());
        }
        read(&self.inner.configs).get(name).cloned()
    }

    /// The config assigned to the instance `name` (`instances.<name>`), or `None` when it
    /// follows the default config.
    pub fn instance_config(&self, name: &str) -> Option<Arc<I::Config>> {
        read(&self.inner.instance_configs).get(name).cloned()
    }

    /// Assigns `config` to the instance `name` (`instances.<name>`): creates the instance if
    /// it does not exist (eagerly, as Spring does), else replaces its config in place,
    /// keeping its state. Returns the instance.
    pub fn configure_instance(&self, name: &str, config: I::Config) -> I {
        let config = Arc::new(config);
        let replaced = {
            let mut map = write(&self.inner.instances);
            write(&self.inner.instance_configs).insert(name.to_string(), config.clone());
            map.get_mut(name).map(|e| {
                e.own_config = true;
                let event = Self::replace_locked(&e.instance, config.clone());
                (e.instance.clone(), event)
            })
        };
        match replaced {
            Some((instance, event)) => {
                self.emit(&event);
                instance
            }
            None => self.get_or_insert(name, config, true),
        }
    }

    /// Drops the config assigned to `name`: the instance (if any) follows the default
    /// config again, in place.
    pub fn unconfigure_instance(&self, name: &str) {
        let replaced = {
            let mut map = write(&self.inner.instances);
            write(&self.inner.instance_configs).remove(name);
            let default = self.default_config();
            map.get_mut(name).map(|e| {
                e.own_config = false;
                Self::replace_locked(&e.instance, default)
            })
        };
        if let Some(event) = replaced {
            self.emit(&event);
        }
    }

    /// Replaces the config of the existing instance `name` in place, keeping its state;
    /// `false` if there is no such instance.
    pub fn replace_config(&self, name: &str, config: I::Config) -> bool {
        match self.find(name) {
            Some(_) => {
                self.configure_instance(name, config);
                true
            }
            None => false,
        }
    }

    /// Applies a whole new configuration in one step (what a reload does): the default
    /// config, every named config (an entry named `default` is ignored), and every instance
    /// config. Every existing instance gets its new config in place (a `Replaced` event
    /// each); instances no longer listed go back to the default config; listed instances
    /// that do not exist yet are created. All instances are updated under the registry's
    /// write lock, so none is created from a half-applied configuration; registry events
    /// are delivered after it is released.
    pub fn apply(
        &self,
        default_config: I::Config,
        configs: impl IntoIterator<Item = (String, I::Config)>,
        instances: impl IntoIterator<Item = (String, I::Config)>,
    ) {
        let default_config = Arc::new(default_config);
        let instances: HashMap<String, Arc<I::Config>> = instances
            .into_iter()
            .map(|(n, c)| (n, Arc::new(c)))
            .collect();
        let mut added = Vec::new();
        let mut replaced = Vec::new();
        {
            let mut map = write(&self.inner.instances);
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
                let old = e.instance.config();
                e.instance.replace_config(config.clone());
                replaced.push((e.instance.clone(), old, config));
            }
            for (name, config) in &instances {
                if !map.contains_key(name) {
                    let i = I::create(name, config.clone());
                    map.insert(name.clone(), self.entry(name, i.clone(), true));
                    added.push(i);
                }
            }
        }
        for (instance, old, new) in replaced {
            self.emit(&RegistryEntryEvent::Replaced { instance, old, new });
        }
        for i in added {
            self.emit(&RegistryEntryEvent::Added(i));
        }
    }

    /// Sets `eventConsumerBufferSize` (>= 1; 0 counts as 1) for the instance `name`: how
    /// many recent events its buffer keeps once buffers are enabled. Default 100. Applies to
    /// buffers attached from now on (an instance that already has a buffer keeps its size).
    pub fn set_event_consumer_buffer_size(&self, name: &str, capacity: usize) {
        write(&self.inner.buffer_sizes).insert(name.to_string(), capacity.max(1));
    }

    /// Keeps the recent events of every instance, existing and future, in a bounded buffer
    /// (Resilience4j's actuator event buffers, the events endpoint), sized by
    /// [`set_event_consumer_buffer_size`](Self::set_event_consumer_buffer_size). Off by
    /// default: a buffer makes every call build its events.
    pub fn enable_event_buffers(&self) {
        self.inner.buffers_enabled.store(true, Ordering::SeqCst);
        let mut map = write(&self.inner.instances);
        for (name, e) in map.iter_mut() {
            if e.buffer.is_none() {
                e.buffer = self.new_buffer(name, &e.instance);
            }
        }
    }

    /// The buffered recent events of the instance `name`, oldest first; `None` when there
    /// is no such instance or buffers are not enabled.
    pub fn recent_events(&self, name: &str) -> Option<Vec<I::Event>> {
        read(&self.inner.instances)
            .get(name)
            .and_then(|e| e.buffer.as_ref().map(|(b, _)| b.events()))
    }

    fn new_buffer(
        &self,
        name: &str,
        instance: &I,
    ) -> Option<(RecentEvents<I::Event>, SubscriptionId)> {
        if !self.inner.buffers_enabled.load(Ordering::SeqCst) {
            return None;
        }
        let capacity = read(&self.inner.buffer_sizes)
            .get(name)
            .copied()
            .unwrap_or(DEFAULT_EVENT_CONSUMER_BUFFER_SIZE);
        let buffer = RecentEvents::new(capacity);
        let theirs = buffer.clone();
        let id = instance
            .event_publisher()
            .subscribe(move |e: &I::Event| theirs.push(e));
        Some((buffer, id))
    }

    /// Puts `config` in force on `i` (the caller holds the instances' write lock); the
    /// event to emit once the lock is released.
    fn replace_locked(i: &I, config: Arc<I::Config>) -> InstanceRegistryEvent<I> {
        let old = i.config();
        i.replace_config(config.clone());
        RegistryEntryEvent::Replaced {
            instance: i.clone(),
            old,
            new: config,
        }
    }

    /// Calls `f` for every registry event (added, replaced, removed), synchronously, after
    /// the change. A panicking listener is logged and affects neither the change nor the
    /// other listeners.
    pub fn subscribe(&self, f: impl Fn(&InstanceRegistryEvent<I>) + Send + Sync + 'static) {
        let f: Listener<I> = Arc::new(f);
        self.inner.listeners.rcu(|l| {
            let mut l = Vec::clone(l);
            l.push(f.clone());
            l
        });
    }

    fn emit(&self, e: &InstanceRegistryEvent<I>) {
        for l in self.inner.listeners.load().iter() {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| l(e))).is_err() {
                tracing::warn!("registry event listener panicked");
            }
        }
    }
}

/// `BulkheadRegistry { instances: ["a", "b"], .. }`: the registry named after its instance
/// type, and the names of its instances.
impl<I: RegistryInstance> fmt::Debug for InstanceRegistry<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = std::any::type_name::<I>();
        let path = path.split('<').next().unwrap_or(path);
        let kind = path.rsplit("::").next().unwrap_or(path);
        f.debug_struct(&format!("{kind}Registry"))
            .field(
                "instances",
                &read(&self.inner.instances).keys().collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}
