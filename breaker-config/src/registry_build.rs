//! Turning a loaded Spring configuration into breaker-core configs and registries:
//! `Registry::from_file`, as Spring Boot's auto-configuration does at start-up.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use breaker_core::{CircuitBreakerConfig, Clock, ErrorCatalog, Registry};

use crate::catalog::UnclaimedName;
use crate::error::{ConfigError, LoadError};
use crate::load::{Format, Loaded, Loader};

/// Why a configuration could not become a registry.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegistryLoadError {
    /// A file could not be read or parsed, or exceeded a budget.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The files parsed, but settings are invalid (Spring would refuse to start). Every
    /// error is listed, each with its file, line, column and key.
    #[error("{}", list(.0))]
    Invalid(Vec<ConfigError>),
    /// `recordExceptions` / `ignoreExceptions` name exceptions that no Rust error answers to
    /// (nothing in the [`ErrorCatalog`] claims them), so errors would be classified
    /// differently than in Java. Spring Boot likewise refuses to start on an unknown class.
    #[error("{}", unclaimed(.0))]
    UnclaimedExceptionNames(Vec<UnclaimedName>),
}

fn unclaimed(names: &[UnclaimedName]) -> String {
    // The same written name is inherited by several instances: report each place once.
    let mut seen = Vec::new();
    let mut lines = String::new();
    for n in names {
        let key = (n.name.clone(), n.origin.clone());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        lines.push_str("\n  ");
        if let Some(o) = &n.origin {
            lines.push_str(&format!("{o}: "));
        }
        lines.push_str(&format!("'{}'", n.name));
    }
    format!(
        "{} exception name{} in recordExceptions / ignoreExceptions answer to no Rust error, so \
         errors would be classified differently than in Java:{lines}\n\
         Register the errors that answer to each name in an ErrorCatalog, e.g. \
         ErrorCatalog::new().register(\"java.io.IOException\", |e: &MyError| matches!(e, MyError::Io(_))), \
         or .acknowledge(name) for a Java-only exception, and load the file with it \
         (resilience4rs::init_from_file(path, catalog), LiveConfig::load(paths, loader, catalog) or \
         Registry::from_file_with(path, loader, catalog)).",
        seen.len(),
        if seen.len() == 1 { "" } else { "s" }
    )
}

fn list(errors: &[ConfigError]) -> String {
    let all_breaker = errors
        .iter()
        .all(|e| e.key.starts_with("resilience4j.circuitbreaker"));
    let mut s = format!(
        "{} invalid {}setting{}:",
        errors.len(),
        if all_breaker { "circuit-breaker " } else { "" },
        if errors.len() == 1 { "" } else { "s" }
    );
    for e in errors {
        s.push_str("\n  ");
        s.push_str(&e.to_string());
    }
    s
}

/// The breaker-core configs of a loaded file: the default config (what a name not listed
/// gets) and one config per instance. Each carries its instance's settings beside the state
/// machine too ([`breaker_core::InstanceSettings`]: `eventConsumerBufferSize`, ...).
#[derive(Debug, Clone)]
pub struct CoreConfigs {
    /// `configs.default` over Resilience4j's defaults, or Resilience4j's defaults.
    pub default_config: CircuitBreakerConfig,
    /// Every instance under `instances` / `backends`, by name.
    pub instances: Vec<(String, CircuitBreakerConfig)>,
}

/// Converts every instance and the default config of `loaded` to breaker-core configs,
/// binding exception names through `catalog`.
///
/// # Errors
/// [`RegistryLoadError::Invalid`] with every error of the files when any instance, the
/// default config or a named config of any section (circuit breaker, retry, time limiter,
/// bulkheads, rate limiter, aspect orders) is invalid: all or nothing, as Spring Boot refuses
/// to start;
/// [`RegistryLoadError::UnclaimedExceptionNames`] when an exception name in the file is not
/// claimed by `catalog`.
pub fn core_configs(
    loaded: &Loaded,
    catalog: &ErrorCatalog,
) -> Result<CoreConfigs, RegistryLoadError> {
    let errors: Vec<ConfigError> = loaded.errors().into_iter().cloned().collect();
    if !errors.is_empty() {
        return Err(RegistryLoadError::Invalid(errors));
    }
    let unclaimed = loaded.config.unclaimed_in_catalog(catalog);
    if !unclaimed.is_empty() {
        return Err(RegistryLoadError::UnclaimedExceptionNames(unclaimed));
    }
    // The resolver already ran every instance through breaker-core's builder; this only
    // fails if the catalog changes that, which it cannot today.
    let invalid = |e: breaker_core::ConfigError, name: &str| {
        RegistryLoadError::Invalid(vec![ConfigError {
            origin: None,
            key: format!(
                "resilience4j.circuitbreaker.instances.{name}.{}",
                e.setting()
            ),
            value: Some(e.value().to_string()),
            message: e.message().to_string(),
            allowed: e.allowed().to_string(),
        }])
    };
    let default_config = match &loaded.config.default_config {
        Ok(d) => d
            .to_core_config(catalog)
            .map_err(|e| invalid(e, "default"))?,
        Err(e) => return Err(RegistryLoadError::Invalid(vec![e.clone()])),
    };
    let mut instances = Vec::with_capacity(loaded.config.instances.len());
    for (name, i) in &loaded.config.instances {
        instances.push((
            name.clone(),
            i.to_core_config(catalog).map_err(|e| invalid(e, name))?,
        ));
    }
    Ok(CoreConfigs {
        default_config,
        instances,
    })
}

/// A registry with every instance of `loaded` created eagerly, as Spring does.
///
/// # Errors
/// As [`core_configs`].
pub fn registry_from_loaded(
    loaded: &Loaded,
    catalog: &ErrorCatalog,
) -> Result<Registry, RegistryLoadError> {
    registry_with_clock(loaded, catalog, None)
}

/// [`registry_from_loaded`] whose breakers, now and later, run on `clock` when given (see
/// [`Registry::set_clock`]).
pub(crate) fn registry_with_clock(
    loaded: &Loaded,
    catalog: &ErrorCatalog,
    clock: Option<Arc<dyn Clock>>,
) -> Result<Registry, RegistryLoadError> {
    let c = core_configs(loaded, catalog)?;
    let registry = Registry::with_default_config(c.default_config);
    if let Some(clock) = clock {
        registry.set_clock(clock);
    }
    for (name, config) in c.instances {
        registry.configure_instance(&name, config);
    }
    Ok(registry)
}

/// `Registry::from_file(path)` and friends: build a [`Registry`] from Spring Boot files.
///
/// ```
/// use breaker_config::RegistryFromFile;
/// use breaker_core::Registry;
/// let registry = Registry::from_yaml_str("
/// resilience4j.circuitbreaker.instances.backendA:
///   sliding-window-size: 5
///   wait-duration-in-open-state: 10s
/// ").unwrap();
/// let a = registry.find("backendA").expect("instances are created eagerly");
/// assert_eq!(a.config().sliding_window_size(), 5);
/// ```
pub trait RegistryFromFile: Sized {
    /// Loads `path` (`.yml`, `.yaml` or `.properties`) with the process environment and
    /// `SPRING_PROFILES_ACTIVE`, without an exception catalog: a file that names exceptions in
    /// `recordExceptions` / `ignoreExceptions` is refused; use
    /// [`from_file_with`](Self::from_file_with) and an [`ErrorCatalog`] for those.
    ///
    /// # Errors
    /// [`RegistryLoadError`] when the file cannot be read or parsed, or holds invalid
    /// settings.
    fn from_file(path: impl AsRef<Path>) -> Result<Self, RegistryLoadError> {
        Self::from_file_with(path, &Loader::new(), &ErrorCatalog::new())
    }
    /// Loads `path` with an explicit loader (profiles, environment, limits) and exception
    /// catalog.
    ///
    /// # Errors
    /// As [`from_file`](Self::from_file).
    fn from_file_with(
        path: impl AsRef<Path>,
        loader: &Loader,
        catalog: &ErrorCatalog,
    ) -> Result<Self, RegistryLoadError>;
    /// Loads YAML text (named `application.yml` in messages).
    ///
    /// # Errors
    /// As [`from_file`](Self::from_file).
    fn from_yaml_str(text: &str) -> Result<Self, RegistryLoadError>;
}

impl RegistryFromFile for Registry {
    fn from_file_with(
        path: impl AsRef<Path>,
        loader: &Loader,
        catalog: &ErrorCatalog,
    ) -> Result<Self, RegistryLoadError> {
        let loaded = loader.load_files(&[path.as_ref()])?;
        registry_from_loaded(&loaded, catalog)
    }

    fn from_yaml_str(text: &str) -> Result<Self, RegistryLoadError> {
        let loaded = Loader::new().load_str("application.yml", Format::Yaml, text)?;
        registry_from_loaded(&loaded, &ErrorCatalog::new())
    }
}

impl fmt::Display for CoreConfigs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "default + {} instances", self.instances.len())
    }
}
