//! The process-global registry that `#[circuit_breaker]` uses when no `registry = ...` is
//! given.
//!
//! It is set once, either explicitly with [`init`] (do this at startup, before the first
//! protected call), or on first use by [`global`], which loads the configuration from the file
//! named by the `BREAKER_CONFIG` environment variable, else from `application.yml` in the
//! working directory, else uses Resilience4j's defaults.

use std::fmt;
use std::sync::OnceLock;

use crate::Registry;

static GLOBAL: OnceLock<Registry> = OnceLock::new();

/// The environment variable naming the config file the global registry loads on first use.
pub const CONFIG_ENV: &str = "BREAKER_CONFIG";

/// The file the global registry loads on first use when [`CONFIG_ENV`] is not set.
pub const DEFAULT_CONFIG_FILE: &str = "application.yml";

/// [`init`] was called after the global registry was already set (by an earlier `init`, or by
/// a protected call that loaded it on first use).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlreadyInitialized;

impl fmt::Display for AlreadyInitialized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "the global circuit-breaker registry is already initialised; call breaker::init \
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
/// On first use without [`init`], if the config file exists but cannot be read or is invalid:
/// running with defaults instead of the configuration you wrote would be worse. Call [`init`]
/// at startup to handle such errors yourself.
pub fn global() -> &'static Registry {
    GLOBAL.get_or_init(load_from_environment)
}

/// The registry [`global`] creates when nothing was initialised.
fn load_from_environment() -> Registry {
    let path = std::env::var_os(CONFIG_ENV)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(DEFAULT_CONFIG_FILE));
    load_file(&path)
}

/// The live config behind the global registry when it was loaded from a file on first use.
static LIVE: OnceLock<(breaker_config::LiveConfig, Option<breaker_config::Watch>)> =
    OnceLock::new();

/// The [`LiveConfig`](breaker_config::LiveConfig) the global registry was loaded from on first
/// use (to read [`last_reload_error`](breaker_config::LiveConfig::last_reload_error) or
/// reload by hand); `None` when [`init`] set it or no config file was found.
pub fn global_live_config() -> Option<&'static breaker_config::LiveConfig> {
    LIVE.get().map(|(live, _)| live)
}

/// Loads `path` into a new registry and watches it for changes (reloaded all or nothing);
/// a missing file gives a registry with Resilience4j's defaults.
fn load_file(path: &std::path::Path) -> Registry {
    if !path.exists() {
        return Registry::new();
    }
    let live = breaker_config::LiveConfig::load(
        &[path],
        breaker_config::Loader::new(),
        breaker_core::ErrorCatalog::new(),
    )
    .unwrap_or_else(|e| panic!("breaker: cannot load {}: {e}", path.display()));
    let watch = live
        .watch(std::time::Duration::from_millis(200))
        .map_err(|e| tracing::warn!("breaker: not watching {}: {e}", path.display()))
        .ok();
    let registry = live.registry().clone();
    let _ = LIVE.set((live, watch));
    registry
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
