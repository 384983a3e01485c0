//! [`RetryRegistry`]: named retries and named retry configs (Resilience4j's `RetryRegistry`).

use super::config::RetryConfig;
use super::instance::Retry;
use crate::instance_registry::InstanceRegistry;
use crate::registry::RegistryError;

/// Named retries sharing named configs: default config (`configs.default`), named configs,
/// get-or-create by name, live config replacement, removal. See [`InstanceRegistry`] for
/// every method.
///
/// ```
/// use breaker_core::retry::{RetryConfig, RetryRegistry};
/// let registry = RetryRegistry::new();
/// let a = registry.retry("backendA");
/// assert!(a.ptr_eq(&registry.retry("backendA")));
/// registry.configure_instance("backendA", RetryConfig::builder().max_attempts(5).build()?);
/// assert_eq!(a.config().max_attempts(), 5);
/// # Ok::<(), breaker_core::ConfigError>(())
/// ```
pub type RetryRegistry = InstanceRegistry<Retry>;

impl InstanceRegistry<Retry> {
    /// The retry named `name`, created on first use (`registry.retry(name)`).
    pub fn retry(&self, name: &str) -> Retry {
        self.instance(name)
    }

    /// The retry named `name`, created with `config` if it does not exist yet
    /// (`registry.retry(name, config)`; an existing retry wins).
    pub fn retry_with_config(&self, name: &str, config: RetryConfig) -> Retry {
        self.instance_with_config(name, config)
    }

    /// The retry named `name`, created from the named config `config_name` if it does not
    /// exist yet (`registry.retry(name, configName)`).
    ///
    /// # Errors
    /// [`RegistryError::ConfigurationNotFound`] when no config has that name.
    pub fn retry_with_config_name(
        &self,
        name: &str,
        config_name: &str,
    ) -> Result<Retry, RegistryError> {
        self.instance_with_config_name(name, config_name)
    }
}
