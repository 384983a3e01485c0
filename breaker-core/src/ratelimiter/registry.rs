//! [`RateLimiterRegistry`]: named rate limiters sharing named configs (Resilience4j's
//! `RateLimiterRegistry`).

use std::sync::Arc;

use super::config::RateLimiterConfig;
use super::events::RateLimiterEvent;
use super::limiter::RateLimiter;
use crate::named::{module_registry, Instance};
use crate::publisher::RecentEvents;

impl Instance for RateLimiter {
    type Config = RateLimiterConfig;
    type Event = RateLimiterEvent;
    fn create(name: &str, config: RateLimiterConfig) -> Self {
        RateLimiter::new(name, config)
    }
    fn current_config(&self) -> Arc<RateLimiterConfig> {
        self.config()
    }
    fn change_config(&self, config: RateLimiterConfig) {
        RateLimiter::change_config(self, config)
    }
    fn attach_event_buffer(&self, capacity: usize) -> RecentEvents<RateLimiterEvent> {
        RateLimiter::attach_event_buffer(self, capacity)
    }
}

module_registry!(
    /// Named rate limiters sharing named configs (Resilience4j's `RateLimiterRegistry`).
    /// Cheap to clone; clones share everything.
    ///
    /// `rate_limiter(name)` returns the existing limiter or creates it from the config
    /// assigned to that name ([`configure_instance`](Self::configure_instance)) or else the
    /// default config. A config changed on a live limiter keeps its permissions
    /// ([`RateLimiter::change_config`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_core::ratelimiter::{RateLimiterConfig, RateLimiterRegistry};
    /// let registry = RateLimiterRegistry::new();
    /// let a = registry.rate_limiter("search");
    /// assert!(a.ptr_eq(&registry.rate_limiter("search")));
    /// registry.configure_instance("search", RateLimiterConfig::builder().limit_for_period(10).build()?);
    /// assert_eq!(a.config().limit_for_period(), 10);
    /// # Ok::<(), breaker_core::ConfigError>(())
    /// ```
    RateLimiterRegistry,
    RateLimiter,
    RateLimiterConfig,
    RateLimiterEvent,
    "rate limiter",
    rate_limiter,
    rate_limiter_with_config,
    rate_limiter_with_config_name
);
