//! [`BulkheadRegistry`] and [`ThreadPoolBulkheadRegistry`]: named bulkheads sharing named
//! configs (Resilience4j's `BulkheadRegistry` and `ThreadPoolBulkheadRegistry`).

use std::sync::Arc;

use super::config::BulkheadConfig;
use super::events::BulkheadEvent;
use super::semaphore_bulkhead::Bulkhead;
use super::threadpool::ThreadPoolBulkhead;
use super::threadpool_config::ThreadPoolBulkheadConfig;
use crate::named::{module_registry, Instance};
use crate::publisher::RecentEvents;

impl Instance for Bulkhead {
    type Config = BulkheadConfig;
    type Event = BulkheadEvent;
    fn create(name: &str, config: BulkheadConfig) -> Self {
        Bulkhead::new(name, config)
    }
    fn current_config(&self) -> Arc<BulkheadConfig> {
        self.config()
    }
    fn change_config(&self, config: BulkheadConfig) {
        Bulkhead::change_config(self, config)
    }
    fn attach_event_buffer(&self, capacity: usize) -> RecentEvents<BulkheadEvent> {
        Bulkhead::attach_event_buffer(self, capacity)
    }
}

impl Instance for ThreadPoolBulkhead {
    type Config = ThreadPoolBulkheadConfig;
    type Event = BulkheadEvent;
    fn create(name: &str, config: ThreadPoolBulkheadConfig) -> Self {
        ThreadPoolBulkhead::new(name, config)
    }
    fn current_config(&self) -> Arc<ThreadPoolBulkheadConfig> {
        self.config()
    }
    fn change_config(&self, config: ThreadPoolBulkheadConfig) {
        ThreadPoolBulkhead::change_config(self, config)
    }
    fn attach_event_buffer(&self, capacity: usize) -> RecentEvents<BulkheadEvent> {
        ThreadPoolBulkhead::attach_event_buffer(self, capacity)
    }
}

module_registry!(
    /// Named semaphore bulkheads sharing named configs (Resilience4j's `BulkheadRegistry`).
    /// Cheap to clone; clones share everything.
    ///
    /// `bulkhead(name)` returns the existing bulkhead or creates it from the config assigned
    /// to that name ([`configure_instance`](Self::configure_instance)) or else the default
    /// config. Changing a live bulkhead's config is [`Bulkhead::change_config`]: its permits
    /// follow the new `maxConcurrentCalls` without dropping calls in flight.
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
    BulkheadRegistry,
    Bulkhead,
    BulkheadConfig,
    BulkheadEvent,
    "bulkhead",
    bulkhead,
    bulkhead_with_config,
    bulkhead_with_config_name
);

module_registry!(
    /// Named thread-pool bulkheads sharing named configs (Resilience4j's
    /// `ThreadPoolBulkheadRegistry`). Cheap to clone; clones share everything.
    ///
    /// Spring registers their event buffers beside the semaphore bulkheads' under the key
    /// `ThreadPoolBulkhead-<name>`; here each registry keeps its own buffers by name.
    ThreadPoolBulkheadRegistry,
    ThreadPoolBulkhead,
    ThreadPoolBulkheadConfig,
    BulkheadEvent,
    "thread-pool bulkhead",
    bulkhead,
    bulkhead_with_config,
    bulkhead_with_config_name
);
