//! The registry behind [`BulkheadRegistry`](crate::bulkhead::BulkheadRegistry),
//! [`ThreadPoolBulkheadRegistry`](crate::bulkhead::ThreadPoolBulkheadRegistry) and
//! [`RateLimiterRegistry`](crate::ratelimiter::RateLimiterRegistry): named instances sharing
//! named configs, shaped like the circuit breaker's [`Registry`](crate::Registry) (a default
//! config, named configs, get-or-create by name, a live instance's config changed in place,
//! removal, registry events, `eventConsumerBufferSize` buffers).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use arc_swap::ArcSwap;

use crate::events::DEFAULT_EVENT_CONSUMER_BUFFER_SIZE;
use crate::publisher::{ModuleEvent, RecentEvents};
use crate::registry::{RegistryError, DEFAULT_CONFIG_NAME};

/// What a registry needs of the instances it holds.
pub(crate) trait Instance: Clone + Send + Sync + 'static {
    type Config: Clone + Send + Sync + 'static;
    type Event: ModuleEvent;
    fn create(name: &str, config: Self::Config) -> Self;
    fn current_config(&self) -> Arc<Self::Config>;
    /// Applies `config` to the live instance, keeping its state.
    fn change_config(&self, config: Self::Config);
    fn attach_event_buffer(&self, capacity: usize) -> RecentEvents<Self::Event>;
}

/// Something that changed in a registry (Resilience4j's `EntryAddedEvent`,
/// `EntryReplacedEvent`, `EntryRemovedEvent`).
#[derive(Debug, Clone)]
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

struct Entry<T: Instance> {
    instance: T,
    /// `false`: follows the registry default config.
    own_config: bool,
    buffer: Option<RecentEvents<T::Event>>,
}

type Listener<T> = Arc<dyn Fn(&RegistryEntryEvent<T, <T as Instance>::Config>) + Send + Sync>;

pub(crate) struct NamedRegistry<T: Instance> {
    default_config: ArcSwap<T::Config>,
    configs: RwLock<HashMap<String, Arc<T::Config>>>,
    instance_configs: RwLock<HashMap<String, Arc<T::Config>>>,
    instances: RwLock<BTreeMap<String, Entry<T>>>,
    listeners: ArcSwap<Vec<Listener<T>>>,
    buffer_sizes: RwLock<HashMap<String, usize>>,
    buffers_enabled: AtomicBool,
}

fn read<X>(l: &RwLock<X>) -> RwLockReadGuard<'_, X> {
    l.read().unwrap_or_else(|p| p.into_inner())
}
fn write<X>(l: &RwLock<X>) -> RwLockWriteGuard<'_, X> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

impl<T: Instance> NamedRegistry<T> {
    pub(crate) fn new(default_config: T::Config) -> Self {
        NamedRegistry {
            default_config: ArcSwap::from_pointee(default_config),
            configs: RwLock::new(HashMap::new()),
            instance_configs: RwLock::new(HashMap::new()),
            instances: RwLock::new(BTreeMap::new()),
            listeners: ArcSwap::from_pointee(Vec::new()),
            buffer_sizes: RwLock::new(HashMap::new()),
            buffers_enabled: AtomicBool::new(false),
        }
    }

    pub(crate) fn get(&self, name: &str) -> T {
        if let Some(e) = read(&self.instances).get(name) {
            return e.instance.clone();
        }
        let assigned = read(&self.instance_configs).get(name).cloned();
        let own = assigned.is_some();
        let config = assigned.unwrap_or_else(|| self.default_config.load_full());
        self.get_or_insert(name, config, own)
    }

    pub(crate) fn get_with_config(&self, name: &str, config: T::Config) -> T {
        if let Some(e) = read(&self.instances).get(name) {
            return e.instance.clone();
        }
        self.get_or_insert(name, Arc::new(config), true)
    }

    pub(crate) fn get_with_config_name(
        &self,
        name: &str,
        config_name: &str,
    ) -> Result<T, RegistryError> {
        if let Some(e) = read(&self.instances).get(name) {
            return Ok(e.instance.clone());
        }
        let config = self
            .configuration(config_name)
            .ok_or_else(|| RegistryError::ConfigurationNotFound(config_name.to_string()))?;
        Ok(self.get_or_insert(name, config, true))
    }

    fn get_or_insert(&self, name: &str, config: Arc<T::Config>, own_config: bool) -> T {
        let instance = {
            let mut map = write(&self.instances);
            if let Some(e) = map.get(name) {
                return e.instance.clone();
            }
            let instance = T::create(name, T::Config::clone(&config));
            map.insert(
                name.to_string(),
                Entry {
                    buffer: self.new_buffer(name, &instance),
                    instance: instance.clone(),
                    own_config,
                },
            );
            instance
        };
        self.emit(&RegistryEntryEvent::Added(instance.clone()));
        instance
    }

    pub(crate) fn find(&self, name: &str) -> Option<T> {
        read(&self.instances).get(name).map(|e| e.instance.clone())
    }

    pub(crate) fn all(&self) -> Vec<T> {
        read(&self.instances)
            .values()
            .map(|e| e.instance.clone())
            .collect()
    }

    pub(crate) fn remove(&self, name: &str) -> Option<T> {
        write(&self.instance_configs).remove(name);
        let removed = write(&self.instances).remove(name).map(|e| e.instance);
        if let Some(i) = &removed {
            self.emit(&RegistryEntryEvent::Removed(i.clone()));
        }
        removed
    }

    pub(crate) fn default_config(&self) -> Arc<T::Config> {
        self.default_config.load_full()
    }

    pub(crate) fn set_default_config(&self, config: T::Config) {
        let config = Arc::new(config);
        self.default_config.store(config.clone());
        let followers: Vec<T> = read(&self.instances)
            .values()
            .filter(|e| !e.own_config)
            .map(|e| e.instance.clone())
            .collect();
        for i in followers {
            self.replace_in_place(&i, &config);
        }
    }

    pub(crate) fn add_configuration(
        &self,
        name: &str,
        config: T::Config,
    ) -> Result<(), RegistryError> {
        if name == DEFAULT_CONFIG_NAME {
            return Err(RegistryError::DefaultIsReserved);
        }
        write(&self.configs).insert(name.to_string(), Arc::new(config));
        Ok(())
    }

    pub(crate) fn configuration(&self, name: &str) -> Option<Arc<T::Config>> {
        if name == DEFAULT_CONFIG_NAME {
            return Some(self.default_config());
        }
        read(&self.configs).get(name).cloned()
    }

    pub(crate) fn configure_instance(&self, name: &str, config: T::Config) -> T {
        let config = Arc::new(config);
        write(&self.instance_configs).insert(name.to_string(), config.clone());
        let existing = {
            let mut map = write(&self.instances);
            map.get_mut(name).map(|e| {
                e.own_config = true;
                e.instance.clone()
            })
        };
        match existing {
            Some(i) => {
                self.replace_in_place(&i, &config);
                i
            }
            None => self.get_or_insert(name, config, true),
        }
    }

    pub(crate) fn unconfigure_instance(&self, name: &str) {
        write(&self.instance_configs).remove(name);
        let i = {
            let mut map = write(&self.instances);
            map.get_mut(name).map(|e| {
                e.own_config = false;
                e.instance.clone()
            })
        };
        if let Some(i) = i {
            self.replace_in_place(&i, &self.default_config());
        }
    }

    pub(crate) fn replace_config(&self, name: &str, config: T::Config) -> bool {
        match self.find(name) {
            Some(_) => {
                self.configure_instance(name, config);
                true
            }
            None => false,
        }
    }

    pub(crate) fn apply(
        &self,
        default_config: T::Config,
        configs: impl IntoIterator<Item = (String, T::Config)>,
        instances: impl IntoIterator<Item = (String, T::Config)>,
    ) {
        let default_config = Arc::new(default_config);
        let instances: HashMap<String, Arc<T::Config>> = instances
            .into_iter()
            .map(|(n, c)| (n, Arc::new(c)))
            .collect();
        let mut added = Vec::new();
        let mut replaced = Vec::new();
        {
            let mut map = write(&self.instances);
            *write(&self.configs) = configs
                .into_iter()
                .filter(|(n, _)| n != DEFAULT_CONFIG_NAME)
                .map(|(n, c)| (n, Arc::new(c)))
                .collect();
            *write(&self.instance_configs) = instances.clone();
            self.default_config.store(default_config.clone());
            for (name, e) in map.iter_mut() {
                let (config, own) = match instances.get(name) {
                    Some(c) => (c.clone(), true),
                    None => (default_config.clone(), false),
                };
                e.own_config = own;
                let old = e.instance.current_config();
                e.instance.change_config(T::Config::clone(&config));
                replaced.push((e.instance.clone(), old, config));
            }
            for (name, config) in &instances {
                if !map.contains_key(name) {
                    let i = T::create(name, T::Config::clone(config));
                    map.insert(
                        name.clone(),
                        Entry {
                            buffer: self.new_buffer(name, &i),
                            instance: i.clone(),
                            own_config: true,
                        },
                    );
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

    pub(crate) fn set_event_consumer_buffer_size(&self, name: &str, capacity: usize) {
        write(&self.buffer_sizes).insert(name.to_string(), capacity.max(1));
    }

    pub(crate) fn enable_event_buffers(&self) {
        self.buffers_enabled.store(true, Ordering::SeqCst);
        let mut map = write(&self.instances);
        for (name, e) in map.iter_mut() {
            if e.buffer.is_none() {
                e.buffer = self.new_buffer(name, &e.instance);
            }
        }
    }

    pub(crate) fn recent_events(&self, name: &str) -> Option<Vec<T::Event>> {
        read(&self.instances)
            .get(name)
            .and_then(|e| e.buffer.as_ref().map(RecentEvents::events))
    }

    fn new_buffer(&self, name: &str, instance: &T) -> Option<RecentEvents<T::Event>> {
        if !self.buffers_enabled.load(Ordering::SeqCst) {
            return None;
        }
        let capacity = read(&self.buffer_sizes)
            .get(name)
            .copied()
            .unwrap_or(DEFAULT_EVENT_CONSUMER_BUFFER_SIZE);
        Some(instance.attach_event_buffer(capacity))
    }

    fn replace_in_place(&self, instance: &T, config: &Arc<T::Config>) {
        let old = instance.current_config();
        instance.change_config(T::Config::clone(config));
        self.emit(&RegistryEntryEvent::Replaced {
            instance: instance.clone(),
            old,
            new: config.clone(),
        });
    }

    pub(crate) fn subscribe(
        &self,
        f: impl Fn(&RegistryEntryEvent<T, T::Config>) + Send + Sync + 'static,
    ) {
        let f: Listener<T> = Arc::new(f);
        self.listeners.rcu(|l| {
            let mut l = Vec::clone(l);
            l.push(f.clone());
            l
        });
    }

    fn emit(&self, e: &RegistryEntryEvent<T, T::Config>) {
        for l in self.listeners.load().iter() {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| l(e))).is_err() {
                tracing::warn!("registry event listener panicked");
            }
        }
    }

    pub(crate) fn names(&self) -> Vec<String> {
        read(&self.instances).keys().cloned().collect()
    }
}

impl<T: Instance> fmt::Debug for NamedRegistry<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("instances", &self.names())
            .finish_non_exhaustive()
    }
}

/// Declares a public registry type over [`NamedRegistry`] with Resilience4j's method names
/// for its module (`bulkhead(name)`, `rate_limiter(name)`, ...).
macro_rules! module_registry {
    (
        $(#[$meta:meta])*
        $registry:ident, $instance:ty, $config:ty, $event:ty, $kind:literal,
        $get:ident, $get_with_config:ident, $get_with_config_name:ident
    ) => {
        $(#[$meta])*
        #[derive(Clone)]
        pub struct $registry {
            inner: std::sync::Arc<$crate::named::NamedRegistry<$instance>>,
        }

        impl Default for $registry {
            fn default() -> Self {
                Self::new()
            }
        }

        impl std::fmt::Debug for $registry {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($registry))
                    .field("instances", &self.inner.names())
                    .finish_non_exhaustive()
            }
        }

        impl $registry {
            #[doc = concat!("A registry whose default config is Resilience4j's defaults for a ", $kind, ".")]
            pub fn new() -> Self {
                Self::with_default_config(<$config>::default())
            }

            /// A registry with `default_config` as its default (`configs.default`).
            pub fn with_default_config(default_config: $config) -> Self {
                $registry {
                    inner: std::sync::Arc::new($crate::named::NamedRegistry::new(default_config)),
                }
            }

            #[doc = concat!("The ", $kind, " named `name`, created on first use from the config assigned to")]
            /// that name or else the default config. Take it once and keep the handle:
            /// lookups hash the name.
            pub fn $get(&self, name: &str) -> $instance {
                self.inner.get(name)
            }

            #[doc = concat!("The ", $kind, " named `name`, created with `config` if it does not exist yet;")]
            /// an existing one is returned unchanged, as in Resilience4j.
            pub fn $get_with_config(&self, name: &str, config: $config) -> $instance {
                self.inner.get_with_config(name, config)
            }

            #[doc = concat!("The ", $kind, " named `name`, created from the named config `config_name` if it")]
            /// does not exist yet.
            ///
            /// # Errors
            /// [`RegistryError::ConfigurationNotFound`](crate::RegistryError::ConfigurationNotFound)
            /// when it does not exist and no config has that name.
            pub fn $get_with_config_name(
                &self,
                name: &str,
                config_name: &str,
            ) -> Result<$instance, $crate::RegistryError> {
                self.inner.get_with_config_name(name, config_name)
            }

            /// The existing instance named `name`, without creating it.
            pub fn find(&self, name: &str) -> Option<$instance> {
                self.inner.find(name)
            }

            /// Every instance, sorted by name.
            pub fn all(&self) -> Vec<$instance> {
                self.inner.all()
            }

            /// Removes the instance named `name` (and its assigned config). Handles already
            /// taken keep working.
            pub fn remove(&self, name: &str) -> Option<$instance> {
                self.inner.remove(name)
            }

            /// The default config (`configs.default`, else Resilience4j's defaults).
            pub fn default_config(&self) -> std::sync::Arc<$config> {
                self.inner.default_config()
            }

            /// Replaces the default config; every instance that follows it (no assigned
            /// config) gets the new one in place.
            pub fn set_default_config(&self, config: $config) {
                self.inner.set_default_config(config)
            }

            /// Adds or replaces a named config (`configs.<name>`). Existing instances are
            /// unaffected.
            ///
            /// # Errors
            /// [`RegistryError::DefaultIsReserved`](crate::RegistryError::DefaultIsReserved)
            /// for `default`.
            pub fn add_configuration(
                &self,
                name: &str,
                config: $config,
            ) -> Result<(), $crate::RegistryError> {
                self.inner.add_configuration(name, config)
            }

            /// The named config, or the default config for `default`.
            pub fn configuration(&self, name: &str) -> Option<std::sync::Arc<$config>> {
                self.inner.configuration(name)
            }

            /// Assigns `config` to the instance `name` (`instances.<name>`): creates it if it
            /// does not exist (eagerly, as Spring does), else changes its config in place,
            /// keeping its state.
            pub fn configure_instance(&self, name: &str, config: $config) -> $instance {
                self.inner.configure_instance(name, config)
            }

            /// Drops the config assigned to `name`: the instance (if any) follows the
            /// default config again, in place.
            pub fn unconfigure_instance(&self, name: &str) {
                self.inner.unconfigure_instance(name)
            }

            /// Changes the config of the existing instance `name` in place; `false` if there
            /// is no such instance.
            pub fn replace_config(&self, name: &str, config: $config) -> bool {
                self.inner.replace_config(name, config)
            }

            /// Applies a whole new configuration in one step (what a reload does): the
            /// default config, every named config and every instance config. Instances no
            /// longer listed follow the default config again.
            pub fn apply(
                &self,
                default_config: $config,
                configs: impl IntoIterator<Item = (String, $config)>,
                instances: impl IntoIterator<Item = (String, $config)>,
            ) {
                self.inner.apply(default_config, configs, instances)
            }

            /// Sets `eventConsumerBufferSize` (>= 1, default 100) for the instance `name`.
            pub fn set_event_consumer_buffer_size(&self, name: &str, capacity: usize) {
                self.inner.set_event_consumer_buffer_size(name, capacity)
            }

            /// Keeps the recent events of every instance, existing and future, in a bounded
            /// buffer (the actuator's events endpoint). Off by default.
            pub fn enable_event_buffers(&self) {
                self.inner.enable_event_buffers()
            }

            /// The buffered recent events of the instance `name`, oldest first; `None` when
            /// there is no such instance or buffers are not enabled.
            pub fn recent_events(
                &self,
                name: &str,
            ) -> Option<Vec<$event>> {
                self.inner.recent_events(name)
            }

            /// Calls `f` for every registry event (added, replaced, removed), synchronously.
            pub fn subscribe(
                &self,
                f: impl Fn(&$crate::named::RegistryEntryEvent<$instance, $config>)
                    + Send
                    + Sync
                    + 'static,
            ) {
                self.inner.subscribe(f)
            }
        }
    };
}

pub(crate) use module_registry;
