//! [`RateLimiterRegistry`]: named rate limiters sharing named configs (Resilience4j's
//! `RateLimiterRegistry`).

use std::sync::Arc;

use super::config::RateLimiterConfig;
use super::events::RateLimiterEvent;
use super::limiter::RateLimiter;
use crate::instance_registry::{InstanceRegistry, RegistryInstance};
use crate::publisher::EventPublisher;
use crate::registry::RegistryError;

/// Named rate limiters sharing named configs (Resilience4j's `RateLimiterRegistry`):
/// default config (`configs.default`), named configs, get-or-create by name, live config
/// changes, removal, registry events, event buffers. Cheap to clone; clones share
/// everything. See [`InstanceRegistry`] for every method.
///
/// [`rate_limiter`](InstanceRegistry::rate_limiter) returns the existing limiter or creates
/// it from the config assigned to that name
/// ([`configure_instance`](InstanceRegistry::configure_instance)) or else the default
/// config. A config changed on a live limiter keeps its permissions
/// ([`RateLimiter::change_config`]).
///
/// ```
/// use breaker_core::ratelimiter::{RateLimiterConfig, RateLimiterRegistry};
/// let registry = RateLimiterRegistry::new();
/// let a = registry.rate_limiter("search");
/// assert!(a.ptr_eq(&registry.rate_limiter("search")));
/// registry.configure_instance("search", RateLimiterConfig::builder().limit_for_period(10).build()?);
/// assert_eq!(a.config().limit_for_period(), 10);
/// # Ok::<(), breaker_core::ConfigError>(())
/// ```
pub type RateLimiterRegistry = InstanceRegistry<RateLimiter>;

impl RegistryInstance for RateLimiter {
    type Config = RateLimiterConfig;
    type Event = RateLimiterEvent;

    fn default_config() -> RateLimiterConfig {
        RateLimiterConfig::default()
    }
    fn create(name: &str, config: Arc<RateLimiterConfig>) -> Self {
        RateLimiter::with_shared_config(name.into(), config)
    }
    fn name(&self) -> &str {
        RateLimiter::name(self)
    }
    fn config(&self) -> Arc<RateLimiterConfig> {
        RateLimiter::config(self)
    }
    fn replace_config(&self, config: Arc<RateLimiterConfig>) {
        self.change_shared_config(config);
    }
    fn event_publisher(&self) -> &EventPublisher<RateLimiterEvent> {
        RateLimiter::event_publisher(self)
    }
}

impl InstanceRegistry<RateLimiter> {
    /// The rate limiter named `name`, created on first use from the config assigned to that
    /// name or else the default config (`registry.rateLimiter(name)`). Take it once and
    /// keep the handle: lookups hash the name.
    pub fn rate_limiter(&self, name: &str) -> RateLimiter {
        self.instance(name)
    }

    /// The rate limiter named `name`, created with `config` if it does not exist yet
    /// (`registry.rateLimiter(name, config)`; an existing limiter wins).
    pub fn rate_limiter_with_config(&self, name: &str, config: RateLimiterConfig) -> RateLimiter {
        self.instance_with_config(name, config)
    }

    /// The rate limiter named `name`, created from the named config `config_name` if it
    /// does not exist yet (`registry.rateLimiter(name, configName)`).
    ///
    /// # Errors
    /// [`RegistryError::ConfigurationNotFound`] when it does not exist and no config has
    /// that name.
    pub fn rate_limiter_with_config_name(
        &self,
        name: &str,
        config_name: &str,
    ) -> Result<RateLimiter, RegistryError> {
        self.instance_with_config_name(name, config_name)
    }
}
