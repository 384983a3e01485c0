//! The process-global registry that `#[circuit_breaker]` uses when no `registry = ...` is
//! given.
//!
//! It is set once: explicitly at startup, before the first protected call, with
//! [`init_from_file`] (a Spring file and the [`ErrorCatalog`](crate::ErrorCatalog) that binds
//! its exception names) or [`init`] (any registry); or on first use by [`global`], which loads
//! the file named by the `BREAKER_CONFIG` environment variable, else the Spring files of the
//! working directory ([`default_config_files`]), else uses Resilience4j's defaults. Files are
//! watched and reloaded when they change.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use breaker_config::modules::ModuleRegistries;

use crate::stack::StackOrder;
use crate::Registry;

static GLOBAL: OnceLock<Registry> = OnceLock::new();

/// The registries of the other four modules that the attributes use without `registry = ...`.
static MODULES: OnceLock<ModuleRegistries> = OnceLock::new();

/// The global nesting of stacked attributes ([`StackOrder::pack`]): one atomic word, read on
/// every stacked call, replaced when a reload changes the aspect orders.
static ORDER: AtomicU32 = AtomicU32::new(u32::MAX);

/// The environment variable naming the config file the global registry loads on first use.
pub const CONFIG_ENV: &str = "BREAKER_CONFIG";

/// The main file the global registry looks for on first use when [`CONFIG_ENV`] is not set
/// (see [`default_config_files`] for all of them).
pub const DEFAULT_CONFIG_FILE: &str = "application.yml";

/// [`init`] was called after the global registry was already set (by an earlier `init`, or by
/// a protected call that loaded it on first use).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlreadyInitialized;

impl fmt::Display for AlreadyInitialized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "the global circuit-breaker registry is already initialised; call resilience4rs::init \
             once, before the first protected call",
        )
    }
}

impl std::error::Error for AlreadyInitialized {}

/// Sets the process-global registry used by `#[circuit_breaker]` fns without `registry = ...`.
///
/// # Errors
/// [`AlreadyInitialized`] if the global registry was set before, by `init` or by a first
/// protected call; `registry` is dropped and the existing one stays.
pub fn init(registry: Registry) -> Result<(), AlreadyInitialized> {
    GLOBAL.set(registry).map_err(|_| AlreadyInitialized)
}

/// The process-global registry, loaded on first use if [`init`] was not called.
///
/// # Panics
/// On first use without [`init`] / [`init_from_file`], if `BREAKER_CONFIG` names no file, or
/// a config file cannot be read, is invalid, or names exceptions (no catalog is known on this
/// path): running with other settings than the ones you wrote would be worse. Call
/// [`init_from_file`] at startup to handle such errors yourself.
pub fn global() -> &'static Registry {
    GLOBAL.get_or_init(load_from_environment)
}

/// The process-global registries of Retry, TimeLimiter, Bulkhead, ThreadPoolBulkhead and
/// RateLimiter, used by `#[retry]`, `#[time_limiter]`, `#[bulkhead]` and `#[rate_limiter]`
/// without `registry = ...`: the ones loaded with the global circuit-breaker registry from
/// the same Spring files (by [`init_from_file`] or on first use, see [`global`]), or set by
/// [`init_modules`]. After [`init`] alone (a circuit-breaker registry only), the modules use
/// Resilience4j's defaults.
///
/// # Panics
/// As [`global`], on first use.
pub fn global_modules() -> &'static ModuleRegistries {
    if let Some(m) = MODULES.get() {
        return m;
    }
    // Loading the global registry from files sets the modules too.
    let _ = global();
    MODULES.get_or_init(ModuleRegistries::default)
}

/// The nesting of stacked attributes now: from the aspect orders of the global config
/// (`resilience4j.retry.retryAspectOrder`, ...; kept current by live reload), else
/// Spring Boot 3's default. One atomic read.
pub fn global_stack_order() -> StackOrder {
    let bits = ORDER.load(Ordering::Acquire);
    if bits != u32::MAX {
        return StackOrder::unpack(bits);
    }
    let _ = global();
    match ORDER.load(Ordering::Acquire) {
        u32::MAX => StackOrder::DEFAULT,
        bits => StackOrder::unpack(bits),
    }
}

/// Sets the module registries and the nesting the attributes use without `registry = ...`,
/// for an application that builds its registries itself (with [`init`] for the circuit
/// breaker). Call it once, before the first protected call.
///
/// # Errors
/// [`AlreadyInitialized`] if the module registries were set before (by `init_modules`, by
/// [`init_from_file`], or by a first call that loaded them); nothing changes.
pub fn init_modules(
    modules: ModuleRegistries,
    order: StackOrder,
) -> Result<(), AlreadyInitialized> {
    MODULES.set(modules).map_err(|_| AlreadyInitialized)?;
    ORDER.store(order.pack(), Ordering::Release);
    Ok(())
}

/// Makes `live` (a [`LiveConfig`](breaker_config::LiveConfig) the application loaded itself,
/// e.g. with its own [`Loader`](breaker_config::Loader) or to print its resolved settings)
/// the global config: its circuit-breaker registry, its module registries and its aspect
/// orders, kept current by its reloads. Call it once, before the first protected call.
///
/// # Errors
/// [`AlreadyInitialized`] if the global registry was set before; nothing changes.
pub fn init_live(live: &breaker_config::LiveConfig) -> Result<(), AlreadyInitialized> {
    if MODULES.get().is_some() {
        return Err(AlreadyInitialized);
    }
    init(live.registry().clone())?;
    adopt_modules(live);
    Ok(())
}

/// Makes `live`'s module registries and aspect orders the global ones, and keeps the order
/// current across reloads.
fn adopt_modules(live: &breaker_config::LiveConfig) {
    if MODULES.set(live.module_registries().clone()).is_err() {
        return;
    }
    let order = StackOrder::from_aspect_order(&live.modules().aspect_order);
    ORDER.store(order.pack(), Ordering::Release);
    let watched = live.clone();
    live.on_reload(move |event| {
        if let breaker_config::ReloadEvent::Applied(_) = event {
            let order = StackOrder::from_aspect_order(&watched.modules().aspect_order);
            ORDER.store(order.pack(), Ordering::Release);
        }
    });
}

/// Loads `path` (a `.yml`, `.yaml` or `.properties` Spring file) with `catalog`, watches it
/// for changes, and makes it the global registry that `#[circuit_breaker]` fns use. Call it
/// at startup, before the first protected call, when the file names exceptions
/// (`recordExceptions` / `ignoreExceptions`): the catalog says which Rust errors answer to
/// those names.
///
/// # Errors
/// [`InitError::Load`] when the file cannot be read or parsed, a setting is invalid, or an
/// exception name is not claimed by `catalog`; [`InitError::AlreadyInitialized`] when the
/// global registry was set before.
pub fn init_from_file(
    path: impl AsRef<std::path::Path>,
    catalog: breaker_core::ErrorCatalog,
) -> Result<&'static breaker_config::LiveConfig, InitError> {
    if GLOBAL.get().is_some() {
        return Err(InitError::AlreadyInitialized(AlreadyInitialized));
    }
    let (live, watch) = load_live(&[path.as_ref().to_path_buf()], catalog)?;
    init(live.registry().clone()).map_err(InitError::AlreadyInitialized)?;
    adopt_modules(&live);
    let _ = LIVE.set((live, watch));
    Ok(global_live_config().expect("just set"))
}

/// The error of [`init_from_file`].
#[derive(Debug, Clone, PartialEq)]
pub enum InitError {
    /// The global registry was already set.
    AlreadyInitialized(AlreadyInitialized),
    /// The file could not be loaded.
    Load(breaker_config::RegistryLoadError),
}

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InitError::AlreadyInitialized(e) => e.fmt(f),
            InitError::Load(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for InitError {}

impl From<breaker_config::RegistryLoadError> for InitError {
    fn from(e: breaker_config::RegistryLoadError) -> Self {
        InitError::Load(e)
    }
}

/// The live config behind the global registry when it was loaded from files.
static LIVE: OnceLock<(breaker_config::LiveConfig, Option<breaker_config::Watch>)> =
    OnceLock::new();

/// The [`LiveConfig`](breaker_config::LiveConfig) the global registry was loaded from (by
/// [`init_from_file`] or on first use), to read
/// [`last_reload_error`](breaker_config::LiveConfig::last_reload_error) or reload by hand;
/// `None` when [`init`] set it or no config file was found.
pub fn global_live_config() -> Option<&'static breaker_config::LiveConfig> {
    LIVE.get().map(|(live, _)| live)
}

fn load_live(
    paths: &[std::path::PathBuf],
    catalog: breaker_core::ErrorCatalog,
) -> Result<
    (breaker_config::LiveConfig, Option<breaker_config::Watch>),
    breaker_config::RegistryLoadError,
> {
    let live = breaker_config::LiveConfig::load(paths, breaker_config::Loader::new(), catalog)?;
    let watch = live
        .watch(std::time::Duration::from_millis(200))
        .map_err(|e| tracing::warn!("breaker: not watching {paths:?}: {e}"))
        .ok();
    Ok((live, watch))
}

/// The files Spring Boot would read from the working directory, lowest precedence first:
/// `application.{yml,yaml,properties}` in `.` then in `./config`, then the same for every
/// profile in `SPRING_PROFILES_ACTIVE` (`application-<profile>.yml`, ...). Only existing
/// files are returned.
pub fn default_config_files() -> Vec<std::path::PathBuf> {
    let profiles: Vec<String> = std::env::var("SPRING_PROFILES_ACTIVE")
        .map(|v| {
            v.split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let stems = std::iter::once("application".to_string())
        .chain(profiles.iter().map(|p| format!("application-{p}")));
    let mut files = Vec::new();
    for stem in stems {
        for dir in [".", "config"] {
            for ext in ["yml", "yaml", "properties"] {
                let p = std::path::Path::new(dir).join(format!("{stem}.{ext}"));
                if p.is_file() {
                    files.push(p);
                }
            }
        }
    }
    files
}

/// The registry [`global`] creates when nothing was initialised: the file named by
/// [`CONFIG_ENV`] (which must exist), else [`default_config_files`], else Resilience4j's
/// defaults.
fn load_from_environment() -> Registry {
    let files = match std::env::var_os(CONFIG_ENV) {
        Some(p) => {
            let p = std::path::PathBuf::from(p);
            if !p.is_file() {
                panic!(
                    "breaker: {CONFIG_ENV}={} names no file; fix the variable or unset it to \
                     read application.yml from the working directory",
                    p.display()
                );
            }
            vec![p]
        }
        None => default_config_files(),
    };
    if files.is_empty() {
        return Registry::new();
    }
    match load_live(&files, breaker_core::ErrorCatalog::new()) {
        Ok((live, watch)) => {
            let registry = live.registry().clone();
            adopt_modules(&live);
            let _ = LIVE.set((live, watch));
            registry
        }
        Err(e) => panic!("breaker: cannot load {files:?}: {e}"),
    }
}

/// [`init_from_file`] that also reads the program's command-line arguments, as a Spring Boot
/// application hands its `args` to `SpringApplication.run`: an option
/// `--resilience4j.retry.instances.payments.max-attempts=5` overrides the files, the
/// environment and `SPRING_APPLICATION_JSON` (see [`Loader::args`](breaker_config::Loader::args)
/// for the syntax; other arguments are ignored). Pass `std::env::args().skip(1)` to read the
/// process's own arguments. Reloads re-read the file and keep the arguments and the
/// environment as they were at this call.
///
/// ```no_run
/// let live = resilience4rs::init_from_file_with_args(
///     "application.yml",
///     resilience4rs::ErrorCatalog::new(),
///     std::env::args().skip(1),
/// )?;
/// # Ok::<(), resilience4rs::InitError>(())
/// ```
///
/// # Errors
/// As [`init_from_file`]; a load error also for an argument `--=value`.
pub fn init_from_file_with_args<I, S>(
    path: impl AsRef<std::path::Path>,
    catalog: breaker_core::ErrorCatalog,
    args: I,
) -> Result<&'static breaker_config::LiveConfig, InitError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    if GLOBAL.get().is_some() {
        return Err(InitError::AlreadyInitialized(AlreadyInitialized));
    }
    let paths = [path.as_ref().to_path_buf()];
    let loader = breaker_config::Loader::new().args(args);
    let live = breaker_config::LiveConfig::load(&paths, loader, catalog)?;
    let watch = live
        .watch(std::time::Duration::from_millis(200))
        .map_err(|e| tracing::warn!("breaker: not watching {paths:?}: {e}"))
        .ok();
    init(live.registry().clone()).map_err(InitError::AlreadyInitialized)?;
    adopt_modules(&live);
    let _ = LIVE.set((live, watch));
    Ok(global_live_config().expect("just set"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_after_use_is_rejected() {
        let first = global();
        assert_eq!(init(Registry::new()), Err(AlreadyInitialized));
        assert!(std::ptr::eq(first, global()));
    }
}
