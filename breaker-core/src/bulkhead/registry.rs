//! [`BulkheadRegistry`] and [`ThreadPoolBulkheadRegistry`]: named bulkheads sharing named
//! configs (Resilience4j's `BulkheadRegistry` and `ThreadPoolBulkheadRegistry`).

use std::sync::Arc;

use super::config::BulkheadConfig;
use super::events::BulkheadEvent;
use super::semaphore_bulkhead::Bulkhead;
use super::threadpool::ThreadPoolBulkhead;
use super::threadpool_config::ThreadPoolBulkheadConfig;
use crate::instance_registry::{InstanceRegistry, RegistryInstance};
use crate::publisher::EventPublisher;
use crate::registry::RegistryError;

/// Named semaphore bulkheads sharing named configs (Resilience4j's `BulkheadRegistry`):
/// default config (`configs.default`), named configs, get-or-create by name, live config
/// changes, removal, registry events, event buffers. Cheap to clone; clones share
/// everything. See [`InstanceRegistry`] for every method.
///
/// `bulkhead(name)` returns the existing bulkhead or creates it from
/// the config assigned to that name ([`configure_instance`](InstanceRegistry::configure_instance))
/// or else the default config. A config changed on a live bulkhead is
/// [`Bulkhead::change_config`]: its permits follow the new `maxConcurrentCalls` without
/// dropping calls in flight.
///
/// ```
/// use breaker_core::bulkhead::{BulkheadConfig, BulkheadRegistry};
/// let registry = BulkheadRegistry::new();
/// let a = registry.bulkhead("inventory");
/// assert!(a.ptr_eq(&registry.bulkhead("inventory")));
/// registry.configure_instance("inventory", BulkheadConfig::builder().max_concurrent_calls(5).build()?);
/// assert_eq!(a.metrics().max_allowed_concurrent_calls, 5);
/// # Ok::<(), breaker_core::ConfigError>(())
/// ```
pub type BulkheadRegistry = InstanceRegistry<Bulkhead>;

/// Named thread-pool bulkheads sharing named configs (Resilience4j's
/// `ThreadPoolBulkheadRegistry`). Cheap to clone; clones share everything. See
/// [`InstanceRegistry`] for every method; `bulkhead(name)` gets or creates one by name. A config changed on a live bulkhead is
/// [`ThreadPoolBulkhead::change_config`].
///
/// Spring registers their event buffers beside the semaphore bulkheads' under the key
/// `ThreadPoolBulkhead-<name>`; here each registry keeps its own buffers by name.
pub type ThreadPoolBulkheadRegistry = InstanceRegistry<ThreadPoolBulkhead>;

impl RegistryInstance for Bulkhead {
    type Config = BulkheadConfig;
    type Event = BulkheadEvent;

    fn default_config() -> BulkheadConfig {
        BulkheadConfig::default()
    }
    fn create(name: &str, config: Arc<BulkheadConfig>) -> Self {
        Bulkhead::with_shared_config(name.into(), config)
    }
    fn name(&self) -> &str {
        Bulkhead::name(self)
    }
    fn config(&self) -> Arc<BulkheadConfig> {
        Bulkhead::config(self)
    }
    fn replace_config(&self, config: Arc<BulkheadConfig>) {
        self.change_shared_config(config);
    }
    fn event_publisher(&self) -> &EventPublisher<BulkheadEvent> {
        Bulkhead::event_publisher(self)
    }
}

impl RegistryInstance for ThreadPoolBulkhead {
    type Config = ThreadPoolBulkheadConfig;
    type Event = BulkheadEvent;

    fn default_config() -> ThreadPoolBulkheadConfig {
        ThreadPoolBulkheadConfig::default()
    }
    fn create(name: &str, config: Arc<ThreadPoolBulkheadConfig>) -> Self {
        ThreadPoolBulkhead::with_shared_config(name.into(), config)
    }
    fn name(&self) -> &str {
        ThreadPoolBulkhead::name(self)
    }
    fn config(&self) -> Arc<ThreadPoolBulkheadConfig> {
        ThreadPoolBulkhead::config(self)
    }
    fn replace_config(&self, config: Arc<ThreadPoolBulkheadConfig>) {
        self.change_shared_config(config);
    }
    fn event_publisher(&self) -> &EventPublisher<BulkheadEvent> {
        ThreadPoolBulkhead::event_publisher(self)
    }
}

impl InstanceRegistry<Bulkhead> {
    /// The bulkhead named `name`, created on first use from the config assigned to that
    /// name or else the default config (`registry.bulkhead(name)`). Take it once and keep
    /// the handle: lookups hash the name.
    pub fn bulkhead(&self, name: &str) -> Bulkhead {
        self.instance(name)
    }

    /// The bulkhead named `name`, created with `config` if it does not exist yet
    /// (`registry.bulkhead(name, config)`; an existing bulkhead wins).
    pub fn bulkhead_with_config(&self, name: &str, config: BulkheadConfig) -> Bulkhead {
        self.instance_with_config(name, config)
    }

    /// The bulkhead named `name`, created from the named config `config_name` if it does
    /// not exist yet (`registry.bulkhead(name, configName)`).
    ///
    /// # Errors
    /// [`RegistryError::ConfigurationNotFound`] when it does not exist and no config has
    /// that name.
    pub fn bulkhead_with_config_name(
        &self,
        name: &str,
        config_name: &str,
    ) -> Result<Bulkhead, RegistryError> {
        self.instance_with_config_name(name, config_name)
    }
}

impl InstanceRegistry<ThreadPoolBulkhead> {
    /// The thread-pool bulkhead named `name`, created on first use from the config assigned
    /// to that name or else the default config (`registry.bulkhead(name)`). Take it once
    /// and keep the handle: lookups hash the name.
    pub fn bulkhead(&self, name: &str) -> ThreadPoolBulkhead {
        self.instance(name)
    }

    /// The thread-pool bulkhead named `name`, created with `config` if it does not exist
    /// yet (an existing one wins).
    pub fn bulkhead_with_config(
        &self,
        name: &str,
        config: ThreadPoolBulkheadConfig,
    ) -> ThreadPoolBulkhead {
        self.instance_with_config(name, config)
    }

    /// The thread-pool bulkhead named `name`, created from the named config `config_name`
    /// if it does not exist yet.
    ///
    /// # Errors
    /// [`RegistryError::ConfigurationNotFound`] when it does not exist and no config has
    /// that name.
    pub fn bulkhead_with_config_name(
        &self,
        name: &str,
        config_name: &str,
    ) -> Result<ThreadPoolBulkhead, RegistryError> {
        self.instance_with_config_name(name, config_name)
    }
}
