//! breaker-core registries for the retry, time-limiter, bulkhead, thread-pool-bulkhead and
//! rate-limiter sections, built from loaded files as Spring Boot's auto-configuration builds
//! them at start-up: the default config, every named config, every listed instance created
//! eagerly with its `eventConsumerBufferSize`.

use std::sync::Arc;

use breaker_core::bulkhead::{
    BulkheadConfig, BulkheadConfigBuilder, BulkheadRegistry, ThreadPoolBulkheadConfig,
    ThreadPoolBulkheadConfigBuilder, ThreadPoolBulkheadRegistry,
};
use breaker_core::ratelimiter::{RateLimiterConfig, RateLimiterConfigBuilder, RateLimiterRegistry};
use breaker_core::retry::{RetryConfig, RetryConfigBuilder, RetryRegistry};
use breaker_core::timelimiter::{TimeLimiterConfig, TimeLimiterConfigBuilder, TimeLimiterRegistry};
use breaker_core::{Clock, ErrorCatalog};

use crate::error::ConfigError;
use crate::load::Loaded;
use crate::registry_build::RegistryLoadError;

use super::{ModuleConfig, ModulesConfig};

/// One module's breaker-core configs, converted and checked.
#[derive(Debug, Clone)]
pub struct CoreSection<C> {
    /// What names not listed get (`configs.default`, or Resilience4j's defaults).
    pub default_config: C,
    /// Every other `configs` entry, by name.
    pub configs: Vec<(String, C)>,
    /// Every listed instance, by name.
    pub instances: Vec<(String, C)>,
    /// `eventConsumerBufferSize` of every listed instance.
    pub event_consumer_buffer_sizes: Vec<(String, usize)>,
}

/// The breaker-core configs of every module section of a loaded configuration.
#[derive(Debug, Clone)]
pub struct ModuleCoreConfigs {
    /// `resilience4j.retry`.
    pub retry: CoreSection<RetryConfig>,
    /// `resilience4j.timelimiter`.
    pub time_limiter: CoreSection<TimeLimiterConfig>,
    /// `resilience4j.bulkhead`.
    pub bulkhead: CoreSection<BulkheadConfig>,
    /// `resilience4j.thread-pool-bulkhead`.
    pub thread_pool_bulkhead: CoreSection<ThreadPoolBulkheadConfig>,
    /// `resilience4j.ratelimiter`.
    pub rate_limiter: CoreSection<RateLimiterConfig>,
}

/// `builder.clock(clock)` when a clock is given.
fn on<B>(builder: B, clock: Option<&Arc<dyn Clock>>, set: fn(B, Arc<dyn Clock>) -> B) -> B {
    match clock {
        Some(c) => set(builder, c.clone()),
        None => builder,
    }
}

fn section<R, C>(
    m: &ModuleConfig<R>,
    prefix: &str,
    buffer: impl Fn(&R) -> i32,
    convert: impl Fn(&R) -> Result<C, breaker_core::ConfigError>,
) -> Result<CoreSection<C>, RegistryLoadError> {
    let invalid = |e: breaker_core::ConfigError, block: &str| {
        RegistryLoadError::Invalid(vec![ConfigError {
            origin: None,
            key: format!("{prefix}.{block}.{}", e.setting()),
            value: Some(e.value().to_string()),
            message: e.message().to_string(),
            allowed: e.allowed().to_string(),
        }])
    };
    let default_config = match &m.default_config {
        Ok(d) => convert(d).map_err(|e| invalid(e, "configs.default"))?,
        Err(e) => return Err(RegistryLoadError::Invalid(vec![e.clone()])),
    };
    let mut configs = Vec::new();
    for (name, r) in m.configs.iter().filter(|(n, _)| *n != "default") {
        configs.push((
            name.clone(),
            convert(r).map_err(|e| invalid(e, &format!("configs.{name}")))?,
        ));
    }
    let mut instances = Vec::new();
    for (name, r) in &m.instances {
        instances.push((
            name.clone(),
            convert(r).map_err(|e| invalid(e, &format!("instances.{name}")))?,
        ));
    }
    let event_consumer_buffer_sizes = m
        .instances
        .iter()
        .map(|(n, r)| (n.clone(), buffer(r).max(1) as usize))
        .collect();
    Ok(CoreSection {
        default_config,
        configs,
        instances,
        event_consumer_buffer_sizes,
    })
}

/// Converts every module section of `loaded` to breaker-core configs, binding the retry's
/// exception names through `catalog`.
///
/// # Errors
/// [`RegistryLoadError::Invalid`] with every error of the files when any section (the
/// circuit breaker's included) is invalid, or when breaker-core refuses a value Resilience4j
/// would only refuse later (a retry's capped backoff from 0 ms);
/// [`RegistryLoadError::UnclaimedExceptionNames`] when a retry's exception name is not
/// claimed by `catalog`.
pub fn module_core_configs(
    loaded: &Loaded,
    catalog: &ErrorCatalog,
) -> Result<ModuleCoreConfigs, RegistryLoadError> {
    module_core_configs_with_clock(loaded, catalog, None)
}

/// [`module_core_configs`] whose configs run on `clock` when given (retry waits, timeouts,
/// rate-limiter cycles and event times; a `ManualClock` in tests).
///
/// # Errors
/// As [`module_core_configs`].
pub fn module_core_configs_with_clock(
    loaded: &Loaded,
    catalog: &ErrorCatalog,
    clock: Option<&Arc<dyn Clock>>,
) -> Result<ModuleCoreConfigs, RegistryLoadError> {
    let errors: Vec<ConfigError> = loaded.errors().into_iter().cloned().collect();
    if !errors.is_empty() {
        return Err(RegistryLoadError::Invalid(errors));
    }
    let m: &ModulesConfig = &loaded.modules;
    let unclaimed = m.retry.unclaimed_exception_names(&|n| catalog.claims(n));
    if !unclaimed.is_empty() {
        return Err(RegistryLoadError::UnclaimedExceptionNames(unclaimed));
    }
    let time_limiter = section(
        &m.time_limiter,
        "resilience4j.timelimiter",
        |r| r.event_consumer_buffer_size.value,
        |r| on(r.to_core_builder(), clock, TimeLimiterConfigBuilder::clock).build(),
    )?;
    let mut retry = section(
        &m.retry,
        "resilience4j.retry",
        |r| r.event_consumer_buffer_size.value,
        |r| on(r.to_core_builder(catalog), clock, RetryConfigBuilder::clock).build(),
    )?;
    apply_budgets(&loaded.budgets, &mut retry, &time_limiter)?;
    Ok(ModuleCoreConfigs {
        retry,
        time_limiter,
        bulkhead: section(
            &m.bulkhead,
            "resilience4j.bulkhead",
            |r| r.event_consumer_buffer_size.value,
            |r| on(r.to_core_builder(), clock, BulkheadConfigBuilder::clock).build(),
        )?,
        thread_pool_bulkhead: section(
            &m.thread_pool_bulkhead,
            "resilience4j.thread-pool-bulkhead",
            |r| r.event_consumer_buffer_size.value,
            |r| {
                on(
                    r.to_core_builder(),
                    clock,
                    ThreadPoolBulkheadConfigBuilder::clock,
                )
                .build()
            },
        )?,
        rate_limiter: section(
            &m.rate_limiter,
            "resilience4j.ratelimiter",
            |r| r.event_consumer_buffer_size.value,
            |r| on(r.to_core_builder(), clock, RateLimiterConfigBuilder::clock).build(),
        )?,
    })
}

/// The registries of every module beside the circuit breaker. Cheap to clone; clones share
/// everything.
#[derive(Debug, Clone, Default)]
pub struct ModuleRegistries {
    /// Retries (`resilience4j.retry`).
    pub retry: RetryRegistry,
    /// Time limiters (`resilience4j.timelimiter`).
    pub time_limiter: TimeLimiterRegistry,
    /// Semaphore bulkheads (`resilience4j.bulkhead`).
    pub bulkhead: BulkheadRegistry,
    /// Thread-pool bulkheads (`resilience4j.thread-pool-bulkhead`).
    pub thread_pool_bulkhead: ThreadPoolBulkheadRegistry,
    /// Rate limiters (`resilience4j.ratelimiter`).
    pub rate_limiter: RateLimiterRegistry,
}

/// `apply` and `set_event_consumer_buffer_size` of one registry, whatever its type.
macro_rules! apply_section {
    ($registry:expr, $section:expr) => {{
        let s = $section;
        for (name, size) in &s.event_consumer_buffer_sizes {
            $registry.set_event_consumer_buffer_size(name, *size);
        }
        $registry.apply(s.default_config, s.configs, s.instances);
    }};
}

impl ModuleRegistries {
    /// Registries holding `configs`, every listed instance created.
    pub fn from_core_configs(configs: ModuleCoreConfigs) -> Self {
        let r = ModuleRegistries::default();
        r.apply(configs);
        r
    }

    /// Logs the events an operator wants of every instance of the five registries, those
    /// that exist and those created later, through `tracing` (see `breaker_core::trace`):
    /// summaries of exhausted retries, time-outs and bulkhead and rate-limiter rejections
    /// (WARN, at most once per instance every 10 s; targets `breaker::retry`,
    /// `breaker::time_limiter`, `breaker::bulkhead`, `breaker::rate_limiter`) and each retry
    /// (DEBUG). Call it once: every call subscribes again (and logs each event again).
    pub fn trace_events(&self) {
        breaker_core::trace::instances(&self.retry);
        breaker_core::trace::instances(&self.time_limiter);
        breaker_core::trace::instances(&self.bulkhead);
        breaker_core::trace::instances(&self.thread_pool_bulkhead);
        breaker_core::trace::instances(&self.rate_limiter);
    }

    /// Applies a whole new configuration to every registry (what a reload does): instances
    /// keep their state, instances no longer listed follow the default config again.
    pub fn apply(&self, c: ModuleCoreConfigs) {
        apply_section!(self.retry, c.retry);
        apply_section!(self.time_limiter, c.time_limiter);
        apply_section!(self.bulkhead, c.bulkhead);
        apply_section!(self.thread_pool_bulkhead, c.thread_pool_bulkhead);
        apply_section!(self.rate_limiter, c.rate_limiter);
    }
}

/// Registries for every module of `loaded`, every listed instance created eagerly, as Spring
/// does.
///
/// # Errors
/// As [`module_core_configs`].
pub fn module_registries_from_loaded(
    loaded: &Loaded,
    catalog: &ErrorCatalog,
) -> Result<ModuleRegistries, RegistryLoadError> {
    Ok(ModuleRegistries::from_core_configs(module_core_configs(
        loaded, catalog,
    )?))
}

/// Sets the budget keys on the retry configs of `retries`: on the listed instance of each
/// name, or on an instance made from the default config when the name is not listed. An
/// `attempt-timeout` left out is the time limiter of the same name's `timeoutDuration`
/// (listed instance, else none).
///
/// # Errors
/// [`RegistryLoadError::Invalid`](RegistryLoadError::Invalid) when
/// breaker-core refuses a value.
fn apply_budgets(
    budgets: &crate::BudgetsConfig,
    retries: &mut CoreSection<breaker_core::retry::RetryConfig>,
    time_limiters: &CoreSection<breaker_core::timelimiter::TimeLimiterConfig>,
) -> Result<(), RegistryLoadError> {
    for (name, b) in &budgets.retries {
        let mut b = *b;
        if b.attempt_timeout.is_none() {
            b.attempt_timeout = time_limiters
                .instances
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| t.timeout_duration());
        }
        let base = match retries.instances.iter().position(|(n, _)| n == name) {
            Some(i) => retries.instances.remove(i).1,
            None => retries.default_config.clone(),
        };
        let built = base.to_builder().budgets(b).build().map_err(|e| {
            RegistryLoadError::Invalid(vec![ConfigError {
                origin: None,
                key: format!("breaker.retry.instances.{name}.{}", e.setting()),
                value: Some(e.value().to_string()),
                message: e.message().to_string(),
                allowed: e.allowed().to_string(),
            }])
        })?;
        retries.instances.push((name.clone(), built));
    }
    Ok(())
}
