//! The process-global registry that `#[circuit_breaker]` uses when no `registry = ...` is
//! given.
//!
//! It is set once: explicitly at startup, before the first protected call, with
//! [`init_from_file`] (a Spring file and the [`ErrorCatalog`](crate::ErrorCatalog) that binds
//! its exception names) or [`init`] (any registry); or on first use by [`global`], which loads
//! the file named by the `BREAKER_CONFIG` environment variable, else the files Spring Boot
//! would read ([`default_config_files`]: `./` and `./config/`, or `SPRING_CONFIG_LOCATION`,
//! with profile files and imports), else uses Resilience4j's defaults (and says so once).
//! Files are watched and reloaded when they change. A file that cannot be loaded on that
//! path stops the process with one message naming the file, line and key.

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
/// The first use loads the files once, on the calling thread; other threads that need the
/// registry meanwhile wait for it (parked, not spinning). Call `resilience4rs::global();`
/// at the start of `main` to load it before serving.
///
/// # Process exit
/// On first use without [`init`] / [`init_from_file`], if `BREAKER_CONFIG` names no file, or
/// a config file cannot be read, is invalid, or names exceptions (no catalog is known on this
/// path), the error is printed once (stderr and a `tracing` error: file, line, key, value,
/// what is allowed) and the process exits with code 1, as Spring Boot refuses to start:
/// running with other settings than the ones written would be worse, and a panic would only
/// end the calling task. Call [`init_from_file`] at startup to handle such errors yourself.
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
/// # Process exit
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

/// The nesting of stacked attributes if the global config was set or loaded, else Spring
/// Boot 3's default; never loads the files (for fns whose layers all name their registry).
pub(crate) fn stack_order_if_set() -> StackOrder {
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
/// for changes, and makes it the global registry that `#[circuit_breaker]` fns use. As
/// Spring Boot reads a `spring.config.location` file, the profile-specific files beside it
/// (`application-prod.yml` with `SPRING_PROFILES_ACTIVE=prod`) and the files it imports
/// (`spring.config.import`) are read too. Call it
/// at startup, before the first protected call, when the file names exceptions
/// (`recordExceptions` / `ignoreExceptions`): the catalog says which Rust errors answer to
/// those names.
///
/// # Errors
/// [`InitError::Load`] when the file cannot be read or parsed, a setting is invalid, or an
/// exception name is not claimed by `catalog`, or an import is missing;
/// [`InitError::AlreadyInitialized`] when the global registry was set before. Its `Debug`
/// form is its message (one line `file:line:col: key = 'value': ... (allowed: ...)` for one
/// invalid setting), so `init_from_file(..)?` in `main` prints that line.
pub fn init_from_file(
    path: impl AsRef<std::path::Path>,
    catalog: breaker_core::ErrorCatalog,
) -> Result<&'static breaker_config::LiveConfig, InitError> {
    init_located(path.as_ref(), breaker_config::Loader::new(), catalog)
}

/// Sets the global registries from the files Spring Boot reads for `path` (its profile
/// variants and imports), loaded with `loader`: the body of [`init_from_file`] and
/// [`init_from_file_with_args`].
fn init_located(
    path: &std::path::Path,
    loader: breaker_config::Loader,
    catalog: breaker_core::ErrorCatalog,
) -> Result<&'static breaker_config::LiveConfig, InitError> {
    if GLOBAL.get().is_some() {
        return Err(InitError::AlreadyInitialized(AlreadyInitialized));
    }
    let locations = breaker_config::ConfigLocations::files(&[path]);
    let (live, watch, _) = load_live(locations, loader, catalog)?;
    init(live.registry().clone()).map_err(InitError::AlreadyInitialized)?;
    adopt_modules(&live);
    let _ = LIVE.set((live, watch));
    Ok(global_live_config().expect("just set"))
}

/// The error of [`init_from_file`]. `Debug` prints the message (see [`init_from_file`]).
#[derive(Clone, PartialEq)]
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

impl fmt::Debug for InitError {
    /// The message: `main`'s `?` prints this. One invalid setting is one line
    /// `file:line:col: key = 'value': message (allowed: ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InitError::Load(breaker_config::RegistryLoadError::Invalid(errors))
                if errors.len() == 1 =>
            {
                fmt::Display::fmt(&errors[0], f)
            }
            other => fmt::Display::fmt(other, f),
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
    locations: breaker_config::ConfigLocations,
    loader: breaker_config::Loader,
    catalog: breaker_core::ErrorCatalog,
) -> Result<
    (
        breaker_config::LiveConfig,
        Option<breaker_config::Watch>,
        breaker_config::ConfigFiles,
    ),
    breaker_config::RegistryLoadError,
> {
    let (live, files) = breaker_config::LiveConfig::load_located(locations, loader, catalog)?;
    let watch = live
        .watch(std::time::Duration::from_millis(200))
        .map_err(|e| tracing::warn!("breaker: not watching {:?}: {e}", files.paths()))
        .ok();
    if files.files.is_empty() {
        let looked: Vec<String> = files
            .looked_for
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        tracing::warn!(
            "breaker: no config file found (looked for {}); Resilience4j's defaults apply \
             (a file created later in one of these places is read)",
            looked.join(", ")
        );
    } else {
        let read: Vec<String> = files
            .files
            .iter()
            .map(|f| format!("{} ({})", f.path.display(), f.reason))
            .collect();
        tracing::info!("breaker: config files read: {}", read.join(", "));
    }
    Ok((live, watch, files))
}

/// The files Spring Boot would read from the working directory, lowest precedence first:
/// `application.{yaml,yml,properties}` in `./`, `./config/` and `./config/*/` (or the
/// locations of `SPRING_CONFIG_LOCATION`, plus `SPRING_CONFIG_ADDITIONAL_LOCATION`), then
/// the profile-specific files of the active profiles (`application-<profile>.yml`, ...),
/// each followed by the files it imports (`spring.config.import`). Only existing files are
/// returned; a location or import that cannot be resolved gives an empty list (the global
/// registry reports it when it loads).
pub fn default_config_files() -> Vec<std::path::PathBuf> {
    breaker_config::ConfigLocations::new()
        .resolve(&breaker_config::Loader::new())
        .map(|f| f.paths())
        .unwrap_or_default()
}

/// The registry [`global`] creates when nothing was initialised: the file named by
/// [`CONFIG_ENV`] (which must exist), else the files of [`default_config_files`], else
/// Resilience4j's defaults. A load error stops the process ([`global`]).
fn load_from_environment() -> Registry {
    let from_env = std::env::var_os(CONFIG_ENV).map(std::path::PathBuf::from);
    let locations = match &from_env {
        Some(p) => breaker_config::ConfigLocations::files(&[p]),
        None => breaker_config::ConfigLocations::new(),
    };
    match load_live(
        locations,
        breaker_config::Loader::new(),
        breaker_core::ErrorCatalog::new(),
    ) {
        Ok((live, watch, _)) => {
            let registry = live.registry().clone();
            adopt_modules(&live);
            let _ = LIVE.set((live, watch));
            registry
        }
        Err(e) => {
            let via = match &from_env {
                Some(p) => format!(" ({CONFIG_ENV}={})", p.display()),
                None => String::new(),
            };
            stop(&format!("cannot load the Spring config files{via}: {e}"))
        }
    }
}

/// Prints `message` once (stderr and `tracing`), then ends the process with exit code 1.
fn stop(message: &str) -> ! {
    tracing::error!("breaker: {message}");
    eprintln!(
        "breaker: {message}\nbreaker: stopping the process (exit code 1), as Spring Boot \
         refuses to start; call resilience4rs::init_from_file at start-up to handle the error \
         yourself"
    );
    std::process::exit(1)
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
    init_located(
        path.as_ref(),
        breaker_config::Loader::new().args(args),
        catalog,
    )
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
