//! [`TimeLimiterRegistry`]: named time limiters and named configs (Resilience4j's
//! `TimeLimiterRegistry`).

use super::config::TimeLimiterConfig;
use super::instance::TimeLimiter;
use crate::instance_registry::InstanceRegistry;
use crate::registry::RegistryError;

/// Named time limiters sharing named configs: default config (`configs.default`), named
/// configs, get-or-create by name, live config replacement, removal. See
/// [`InstanceRegistry`] for every method.
pub type TimeLimiterRegistry = InstanceRegistry<TimeLimiter>;

impl InstanceRegistry<TimeLimiter> {
    /// The time limiter named `name`, created on first use (`registry.timeLimiter(name)`).
    pub fn time_limiter(&self, name: &str) -> TimeLimiter {
        self.instance(name)
    }

    /// The time limiter named `name`, created with `config` if it does not exist yet (an
    /// existing one wins).
    pub fn time_limiter_with_config(&self, name: &str, config: TimeLimiterConfig) -> TimeLimiter {
        self.instance_with_config(name, config)
    }

    /// The time limiter named `name`, created from the named config `config_name` if it
    /// does not exist yet.
    ///
    /// # Errors
    /// [`RegistryError::ConfigurationNotFound`] when no config has that name.
    pub fn time_limiter_with_config_name(
        &self,
        name: &str,
        config_name: &str,
    ) -> Result<TimeLimiter, RegistryError> {
        self.instance_with_config_name(name, config_name)
    }
}
