#![doc = include_str!("../README.md")]

// The generated code names the facade `::resilience4rs`; this makes that path work inside
// the library too.
extern crate self as resilience4rs;

pub use breaker_core::*;

#[doc(hidden)]
pub mod __private;
mod global;
mod global_drills;
pub mod stack;

pub use breaker_macros::{bulkhead, circuit_breaker, rate_limiter, retry, time_limiter};
pub use global::{
    default_config_files, global, global_live_config, global_modules, global_stack_order, init,
    init_from_file, init_from_file_with_args, init_live, init_modules, AlreadyInitialized,
    InitError, CONFIG_ENV, DEFAULT_CONFIG_FILE,
};
pub use global_drills::{global_drills, init_drills};

/// Resilience4j's Micrometer meters through the `metrics` facade (feature `metrics`).
#[cfg(feature = "metrics")]
pub use breaker_metrics as metrics;

/// Spring Boot Actuator's endpoints as an axum Router (feature `actuator`).
#[cfg(feature = "actuator")]
pub use breaker_actuator as actuator;

/// tower Layers for every module (feature `tower`).
#[cfg(feature = "tower")]
pub use breaker_tower as tower;

/// One breaker across replicas: state shared through Redis (feature `redis`).
#[cfg(feature = "redis")]
pub use breaker_redis as redis;

/// Resilience4j's meters through the OpenTelemetry metrics API, named as Micrometer's OTLP
/// registry names them (feature `otel`).
#[cfg(feature = "otel")]
pub use breaker_otel as otel;

/// Spring Boot configuration loading (`application.yml`, `.properties`) and live reload.
pub use breaker_config as config;
pub use breaker_config::modules::{AspectOrder, ModuleRegistries};
pub use breaker_config::{
    LiveConfig, Loader, RegistryFromFile, RegistryLoadError, ReloadEvent, ReloadReport,
    SpringConfig,
};
pub use stack::{Aspect, StackError, StackOrder};
