//! [`SpringConfig`]: a Spring Boot configuration (text or files) to a [`Registry`] in one
//! call, with an exception catalog and a clock.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use breaker_core::{Clock, ErrorCatalog, Registry};

use crate::live::LiveConfig;
use crate::load::{Format, Loader};
use crate::registry_build::{registry_with_clock, RegistryLoadError};

#[derive(Clone, Debug)]
enum Source {
    Files(Vec<PathBuf>),
    Text {
        name: &'static str,
        format: Format,
        text: String,
    },
}

/// A Spring Boot configuration to build a [`Registry`] from, in one expression: where it is
/// (a file, several, or YAML / `.properties` text), then optionally the [`ErrorCatalog`] that
/// binds its exception names, a [`Clock`] for every breaker, and the [`Loader`] (profiles,
/// environment, limits).
///
/// ```
/// use std::time::Duration;
/// use breaker_config::SpringConfig;
/// use breaker_core::{ManualClock, State};
///
/// let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
/// let registry = SpringConfig::yaml("
/// resilience4j.circuitbreaker.instances.payments:
///   slidingWindowSize: 2
///   minimumNumberOfCalls: 2
///   waitDurationInOpenState: 10s
/// ")
/// .clock(clock.clone())
/// .registry()?;
/// let payments = registry.circuit_breaker("payments");
/// payments.try_acquire_permission()?.on_error();
/// payments.try_acquire_permission()?.on_error();
/// assert_eq!(payments.state(), State::Open);
/// clock.advance(Duration::from_millis(10_001));
/// payments.try_acquire_permission()?.on_success(); // the trial call
/// assert_eq!(payments.state(), State::HalfOpen);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct SpringConfig {
    source: Source,
    loader: Loader,
    catalog: ErrorCatalog,
    clock: Option<Arc<dyn Clock>>,
}

impl SpringConfig {
    fn new(source: Source) -> Self {
        SpringConfig {
            source,
            loader: Loader::new(),
            catalog: ErrorCatalog::new(),
            clock: None,
        }
    }

    /// The file at `path`: `.properties` is read as properties, anything else as YAML.
    pub fn file(path: impl AsRef<Path>) -> Self {
        Self::new(Source::Files(vec![path.as_ref().to_path_buf()]))
    }

    /// Several files, later ones overriding earlier ones (as `application.yml` then
    /// `application-prod.yml`).
    pub fn files<P: AsRef<Path>>(paths: &[P]) -> Self {
        Self::new(Source::Files(
            paths.iter().map(|p| p.as_ref().to_path_buf()).collect(),
        ))
    }

    /// YAML text (positions in messages name it `application.yml`).
    pub fn yaml(text: impl Into<String>) -> Self {
        Self::new(Source::Text {
            name: "application.yml",
            format: Format::Yaml,
            text: text.into(),
        })
    }

    /// `.properties` text (positions in messages name it `application.properties`).
    pub fn properties(text: impl Into<String>) -> Self {
        Self::new(Source::Text {
            name: "application.properties",
            format: Format::Properties,
            text: text.into(),
        })
    }

    /// The catalog that says which Rust errors answer to the exception names of
    /// `recordExceptions` / `ignoreExceptions` (default: an empty one, which refuses a file
    /// that names exceptions).
    pub fn catalog(mut self, catalog: ErrorCatalog) -> Self {
        self.catalog = catalog;
        self
    }

    /// The clock of every breaker the registry makes, those of the file's instances and
    /// those made later for other names (e.g. a [`ManualClock`](breaker_core::ManualClock),
    /// passed as a clone of the one the test advances). Default: the system clock.
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Some(Arc::new(clock));
        self
    }

    /// The loader: active profiles, environment for `${...}` placeholders, limits (default
    /// [`Loader::new`]: the process environment and `SPRING_PROFILES_ACTIVE`).
    pub fn loader(mut self, loader: Loader) -> Self {
        self.loader = loader;
        self
    }

    /// Builds the registry: every instance of the file created at once (as Spring does), the
    /// default config (`configs.default`) for every other name, the catalog and clock applied
    /// to all of them.
    ///
    /// # Errors
    /// [`RegistryLoadError`] when the source cannot be read or parsed, a setting is invalid
    /// (every error, each with its file, line and key), or an exception name is not claimed by
    /// the catalog.
    pub fn registry(&self) -> Result<Registry, RegistryLoadError> {
        let loaded = match &self.source {
            Source::Files(paths) => self.loader.load_files(paths)?,
            Source::Text { name, format, text } => self.loader.load_str(name, *format, text)?,
        };
        registry_with_clock(&loaded, &self.catalog, self.clock.clone())
    }

    /// Builds a [`LiveConfig`]: the same registry, reloaded from the files on demand or when
    /// they change ([`LiveConfig::watch`]); the clock stays in force across reloads.
    ///
    /// # Errors
    /// As [`registry`](Self::registry); text sources have no file to follow and are refused
    /// ([`RegistryLoadError::Load`]).
    pub fn live(&self) -> Result<LiveConfig, RegistryLoadError> {
        match &self.source {
            Source::Files(paths) => LiveConfig::load_with_clock(
                paths,
                self.loader.clone(),
                self.catalog.clone(),
                self.clock.clone(),
            ),
            Source::Text { name, .. } => Err(RegistryLoadError::Load(crate::LoadError::Io {
                path: (*name).to_string(),
                message: "given as text, so there is no file to follow; use SpringConfig::file \
                              for a live configuration"
                    .into(),
            })),
        }
    }
}

impl fmt::Debug for SpringConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpringConfig")
            .field("source", &self.source)
            .field("loader", &self.loader)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}
