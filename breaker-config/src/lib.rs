//! Spring Boot configuration loading for `breaker` (issue #3).
//!
//! Reads the `application.yml` / `application.properties` a Spring team already has and
//! resolves `resilience4j.circuitbreaker` exactly as Resilience4j's Spring Boot support does:
//! relaxed names, `backends` alias, Spring durations, lenient enums, lists, profiles,
//! placeholders, `baseConfig` inheritance, and Spring's validation messages. The other
//! sections (`resilience4j.retry`, `.timelimiter`, `.bulkhead`, `.thread-pool-bulkhead`,
//! `.ratelimiter`) and the aspect orders go through the same binder and are resolved by their
//! own rules ([`modules`]); [`modules::ModuleRegistries`] builds breaker-core registries from
//! them and [`LiveConfig`] reloads every section together, all or nothing.
//!
//! ```
//! use breaker_config::{Format, Loader};
//! let yaml = "
//! resilience4j.circuitbreaker:
//!   configs:
//!     default: { slidingWindowSize: 10, waitDurationInOpenState: 5s }
//!   instances:
//!     backendA: { failure-rate-threshold: 70 }
//! ";
//! let loaded = Loader::new().env(Default::default()).load_str("application.yml", Format::Yaml, yaml).unwrap();
//! let a = &loaded.config.instances["backendA"];
//! assert_eq!(a.failure_rate_threshold.value, 70.0);
//! assert_eq!(a.sliding_window_size.value, 10);
//! assert_eq!(a.wait_duration_in_open_state.value, std::time::Duration::from_secs(5));
//! ```
//!
//! The other modules, e.g. a retry whose named config inherits `configs.default`:
//!
//! ```
//! use breaker_config::{Format, Loader};
//! let yaml = "
//! resilience4j.retry:
//!   configs:
//!     default: { maxAttempts: 5 }
//!     slow: { wait-duration: 2s }
//!   instances:
//!     inventory: { baseConfig: slow }
//! ";
//! let loaded = Loader::new().env(Default::default()).load_str("application.yml", Format::Yaml, yaml).unwrap();
//! let r = &loaded.modules.retry.instances["inventory"];
//! assert_eq!(r.max_attempts.value, 5); // from configs.default, through configs.slow
//! assert_eq!(r.to_core_config(&Default::default()).unwrap().wait_duration(),
//!            Some(std::time::Duration::from_secs(2)));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bind;
mod budgets;
mod catalog;
mod circuit_breaker_schema;
mod config_files;
mod convert;
mod drill;
mod duration;
mod error;
pub mod json;
mod keys;
mod limits;
mod live;
mod load;
mod locations;
mod log_fields;
mod management;
mod map_keys;
mod model;
pub mod modules;
mod origin;
mod placeholders;
mod profiles;
mod properties;
mod property;
mod registry_build;
mod relaxed;
mod reload_report;
mod resolve;
mod schema;
mod shared_store;
mod snapshot;
mod sources;
mod spring;
mod to_core;
mod unresolved;
mod validate;
mod watch;
mod yaml;

pub use budgets::BudgetsConfig;
pub use catalog::{ExceptionList, UnclaimedName};
pub use config_files::{ConfigFile, ConfigFiles, FileReason};
pub use drill::{DrillsConfig, DRILL_KEYS};
pub use error::{ConfigError, LoadError, Warning};
pub use limits::Limits;
pub use live::{LiveConfig, ReloadEvent};
pub use load::{Format, Loaded, Loader, SourceText};
pub use locations::{ConfigLocations, MAX_IMPORT_DEPTH};
pub use management::{
    ManagementConfig, ModuleMetrics, ShowDetails, DEFAULT_STATUS_ORDER, METRIC_SECTIONS,
};
pub use model::{
    Base, ResolvedConfig, ResolvedInstance, Setting, SlidingWindowType, State, ValueSource,
    WaitInterval,
};
pub use origin::Origin;
pub use property::{Document, Element, Property, ValueKind};
pub use registry_build::{
    core_configs, registry_from_loaded, CoreConfigs, RegistryFromFile, RegistryLoadError,
};
pub use reload_report::{ReloadReport, SettingChange};
pub use shared_store::{RedisSettings, SharedStoreConfig, StoreKind};
pub use snapshot::DEFAULT_SETTLE_TIME;
pub use spring::SpringConfig;
pub use watch::Watch;

/// Loads files with the process environment and default limits (see [`Loader`]).
pub fn load_files<P: AsRef<std::path::Path>>(paths: &[P]) -> Result<Loaded, LoadError> {
    Loader::new().load_files(paths)
}
