#![doc = include_str!("../README.md")]

// The generated code names the facade `::resilience4rs`; this makes that path work inside
// the library too.
extern crate self as resilience4rs;

pub use breaker_core::*;

#[doc(hidden)]
pub mod __private;
mod global;

pub use breaker_macros::circuit_breaker;
pub use global::{
    default_config_files, global, global_live_config, init, init_from_file, AlreadyInitialized,
    InitError, CONFIG_ENV, DEFAULT_CONFIG_FILE,
};

/// Resilience4j's Micrometer meters through the `metrics` facade (feature `metrics`).
#[cfg(feature = "metrics")]
pub use breaker_metrics as metrics;

/// Spring Boot Actuator's endpoints as an axum Router (feature `actuator`).
#[cfg(feature = "actuator")]
pub use breaker_actuator as actuator;

/// tower Layers for every module (feature `tower`).
#[cfg(feature = "tower")]
pub use breaker_tower as tower;

/// Spring Boot configuration loading (`application.yml`, `.properties`) and live reload.
pub use breaker_config as config;
pub use breaker_config::{
    LiveConfig, Loader, RegistryFromFile, RegistryLoadError, ReloadEvent, ReloadReport,
    SpringConfig,
};
