//! [`LiveConfig`]: a registry kept in step with its Spring files, reloaded all or nothing.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::{Clock, ErrorCatalog, Registry};

use crate::config_files::ConfigFiles;
use crate::error::Warning;
use crate::load::{Loaded, Loader, SourceText};
use crate::locations::ConfigLocations;
use crate::modules::{module_core_configs_with_clock, ModuleRegistries};
use crate::registry_build::{core_configs, registry_with_clock, RegistryLoadError};
use crate::reload_report::{diff, ReloadReport};
use crate::snapshot::{
    located_fingerprint, looks_torn, read_paths, Fingerprint, Read, DEFAULT_SETTLE_TIME,
    MAX_SETTLE_ROUNDS,
};
use crate::watch::Watch;

/// What a reload attempt produced, for [`LiveConfig::on_reload`] listeners.
#[derive(Debug, Clone)]
pub enum ReloadEvent {
    /// The new files were applied to every breaker in one step.
    Applied(ReloadReport),
    /// The new files were rejected; the previous config keeps serving.
    Failed(RegistryLoadError),
}

type Listener = Arc<dyn Fn(&ReloadEvent) + Send + Sync>;

struct Current {
    contents: Fingerprint,
    /// The texts of the config in force, by file name (for the half-written-file guard).
    texts: Vec<SourceText>,
    loaded: Loaded,
}

pub(crate) struct LiveInner {
    registry: Registry,
    modules: ModuleRegistries,
    /// The drills of `breaker.drill.instances` (issue #28), on the instances' clock.
    drills: breaker_core::drill::DrillRegistry,
    loader: Loader,
    paths: Vec<PathBuf>,
    /// Where the files come from: fixed paths, or Spring's locations (found again on every
    /// reload, so a changed import or a new profile file is picked up).
    locations: Option<ConfigLocations>,
    /// The files whose directories [`LiveConfig::watch`] watches: the files read, and, for
    /// locations, every file looked for in a directory that exists (so a file created later,
    /// `application-prod.yml` or a first `application.yml`, is read).
    watch_files: Vec<PathBuf>,
    /// How long a changed file must stay unchanged before a reload applies it, in ns.
    settle_nanos: AtomicU64,
    /// Serialises reloads (the watcher's and the application's), held while settling.
    reloading: Mutex<()>,
    catalog: ErrorCatalog,
    /// The clock of every breaker and module instance, kept across reloads.
    clock: Option<Arc<dyn Clock>>,
    current: Mutex<Current>,
    last_error: Mutex<Option<RegistryLoadError>>,
    listeners: Mutex<Vec<Listener>>,
}

/// A [`Registry`] built from Spring files and reloaded from them on demand
/// ([`reload`](Self::reload)) or when they change on disk ([`watch`](Self::watch)).
///
/// It also keeps the retry, time-limiter, bulkhead, thread-pool-bulkhead and rate-limiter
/// registries ([`module_registries`](Self::module_registries)) in step with the same files.
///
/// A reload is all or nothing across every section: if anything in the new files is invalid
/// (a breaker setting, a retry setting, an aspect order...), no breaker, retry, limiter or
/// bulkhead changes, the previous config keeps serving, and the error is reported three ways: a
/// [`ReloadEvent::Failed`] to listeners, an ERROR log line through `tracing`, and
/// [`last_reload_error`](Self::last_reload_error). A successful reload replaces every
/// instance's config in place: breakers keep their state (see breaker-core's "Replacing a
/// config"), and handles cached at call sites see the new values at once.
///
/// Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct LiveConfig {
    inner: Arc<LiveInner>,
}

impl fmt::Debug for LiveConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveConfig")
            .field("paths", &self.inner.paths)
            .field("registry", &self.inner.registry)
            .finish_non_exhaustive()
    }
}

impl LiveConfig {
    /// Loads `paths` (later files override earlier ones) into a new registry whose
    /// instances are all created.
    ///
    /// # Errors
    /// [`RegistryLoadError`] when a file cannot be read or parsed, a setting is invalid, or
    /// an exception name is not claimed by `catalog`.
    pub fn load<P: AsRef<Path>>(
        paths: &[P],
        loader: Loader,
        catalog: ErrorCatalog,
    ) -> Result<Self, RegistryLoadError> {
        Self::load_with_clock(paths, loader, catalog, None)
    }

    /// [`load`](Self::load) whose breakers (and retries, time limiters, bulkheads, rate
    /// limiters), now and after every reload, run on `clock` when given (see
    /// [`Registry::set_clock`]).
    pub(crate) fn load_with_clock<P: AsRef<Path>>(
        paths: &[P],
        loader: Loader,
        catalog: ErrorCatalog,
        clock: Option<Arc<dyn Clock>>,
    ) -> Result<Self, RegistryLoadError> {
        let paths: Vec<PathBuf> = paths.iter().map(|p| p.as_ref().to_path_buf()).collect();
        // Reloads re-read the files; the environment and arguments stay as at start.
        let loader = loader.with_environment_fixed();
        let read = read_paths(&paths);
        let (texts, _) = read.sources?;
        let loaded = loader.load_sources(&texts)?;
        let watch = paths.clone();
        Self::build(
            (paths, watch),
            None,
            read.fingerprint,
            texts,
            loaded,
            loader,
            catalog,
            clock,
        )
    }

    /// Loads the files Spring Boot would read from `locations` (see [`ConfigLocations`]:
    /// the default locations or `SPRING_CONFIG_LOCATION`, profile-specific files, imports)
    /// with `loader`'s environment and profiles. Every reload finds the files again, so an
    /// added import or profile file is read; the watch covers the directories of the files
    /// found at start.
    ///
    /// # Errors
    /// As [`load`](Self::load), and [`LoadError::Location`](crate::LoadError::Location) for a missing non-optional
    /// location or import, or an import chain deeper than 32 files.
    pub fn load_located(
        locations: ConfigLocations,
        loader: Loader,
        catalog: ErrorCatalog,
    ) -> Result<(Self, ConfigFiles), RegistryLoadError> {
        // Reloads find and re-read the files; the environment and arguments stay as at start.
        let loader = loader.with_environment_fixed();
        let files = locations.resolve(&loader)?;
        let loaded = files.load(&loader)?;
        let fingerprint = located_fingerprint(&files);
        let mut watch = files.paths();
        watch.extend(
            files
                .looked_for
                .iter()
                .filter(|p| {
                    p.parent()
                        .is_some_and(|d| d.as_os_str().is_empty() || d.is_dir())
                })
                .cloned(),
        );
        let live = Self::build(
            (files.paths(), watch),
            Some(locations),
            fingerprint,
            files.sources.clone(),
            loaded,
            loader,
            catalog,
            None,
        )?;
        Ok((live, files))
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        (paths, watch_files): (Vec<PathBuf>, Vec<PathBuf>),
        locations: Option<ConfigLocations>,
        contents: Fingerprint,
        texts: Vec<SourceText>,
        loaded: Loaded,
        loader: Loader,
        catalog: ErrorCatalog,
        clock: Option<Arc<dyn Clock>>,
    ) -> Result<Self, RegistryLoadError> {
        let modules = module_core_configs_with_clock(&loaded, &catalog, clock.as_ref())?;
        let registry = registry_with_clock(&loaded, &catalog, clock.clone())?;
        let modules = ModuleRegistries::from_core_configs(modules);
        for w in &loaded.warnings {
            tracing::warn!("{w}");
        }
        let drills = crate::drill::registry_for(&loaded.drills, clock.clone());
        Ok(LiveConfig {
            inner: Arc::new(LiveInner {
                registry,
                modules,
                drills,
                loader,
                paths,
                watch_files,
                locations,
                settle_nanos: AtomicU64::new(DEFAULT_SETTLE_TIME.as_nanos() as u64),
                reloading: Mutex::new(()),
                catalog,
                clock,
                current: Mutex::new(Current {
                    contents,
                    texts,
                    loaded,
                }),
                last_error: Mutex::new(None),
                listeners: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The registry. Hand it to `resilience4rs::init` for `#[circuit_breaker]` fns.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The retry, time-limiter, bulkhead, thread-pool-bulkhead and rate-limiter registries,
    /// reloaded together with the circuit breakers.
    pub fn module_registries(&self) -> &ModuleRegistries {
        &self.inner.modules
    }

    /// The drills of the files' `breaker.drill.instances` (off when none), started, changed
    /// and stopped by reloads; start or stop one at run time with
    /// [`DrillRegistry::start`](breaker_core::drill::DrillRegistry::start) (the next reload
    /// that changes the file's drills replaces such a change).
    pub fn drills(&self) -> &breaker_core::drill::DrillRegistry {
        &self.inner.drills
    }

    /// Turns on the recommended logging for every module, in one call: the circuit
    /// breakers' transitions (WARN into OPEN and FORCED_OPEN, INFO otherwise) and rejection
    /// summaries (target `breaker::circuit_breaker`), and the other modules' summaries
    /// ([`ModuleRegistries::trace_events`]), for the instances that exist and those created
    /// later. Reloads log whether or not this is called (target `breaker::reload`: INFO when
    /// applied, ERROR when rejected). Show them with a `tracing` subscriber, e.g.
    /// `tracing_subscriber::fmt().with_env_filter(EnvFilter::from_default_env()).init()`
    /// and `RUST_LOG=breaker=info`. Call it once: every call subscribes again.
    pub fn trace_events(&self) {
        breaker_core::trace::circuit_breakers(&self.inner.registry);
        self.inner.modules.trace_events();
    }

    /// The files, in override order.
    pub fn paths(&self) -> &[PathBuf] {
        &self.inner.paths
    }

    /// The retry, time-limiter, bulkhead, thread-pool-bulkhead and rate-limiter sections and
    /// aspect orders in force: after a rejected reload, still the last good ones.
    pub fn modules(&self) -> crate::modules::ModulesConfig {
        let cur = self.inner.current.lock().unwrap_or_else(|p| p.into_inner());
        cur.loaded.modules.clone()
    }

    /// The `management.*` settings in force (metric tags, health indicators, endpoint
    /// exposure): after a rejected reload, still the last good ones.
    pub fn management(&self) -> crate::ManagementConfig {
        let cur = self.inner.current.lock().unwrap_or_else(|p| p.into_inner());
        cur.loaded.management.clone()
    }

    /// The warnings of the config in force (unknown keys, Java predicate classes).
    pub fn warnings(&self) -> Vec<String> {
        let cur = self.inner.current.lock().unwrap_or_else(|p| p.into_inner());
        cur.loaded.warnings.iter().map(Warning::to_string).collect()
    }

    /// Reads the files again and applies them, even if unchanged (at once, without waiting
    /// for them to settle). A file that became empty or lost its `resilience4j` section is
    /// kept as by [`reload_if_changed`](Self::reload_if_changed) (an empty report).
    ///
    /// # Errors
    /// The [`RegistryLoadError`] of the new files; nothing changed then.
    pub fn reload(&self) -> Result<ReloadReport, RegistryLoadError> {
        self.inner.reload(true).map(Option::unwrap_or_default)
    }

    /// Reloads only if a file's bytes differ from the config in force; `Ok(None)` when
    /// nothing changed. This is what the watcher calls.
    ///
    /// A changed file is applied only once it has stopped changing: read again after the
    /// [settle time](Self::set_settle_time), its bytes, length and modification time must
    /// be the same (this waits, up to 50 settle times, then gives up until the next change).
    /// A file that became empty, or whose `resilience4j` section is gone while the config in
    /// force had one, is taken for a half-written file: the previous config is kept, with a
    /// warning, and `Ok(None)` is returned. To really remove every setting of a file, write
    /// `resilience4j: {}` in it.
    ///
    /// # Errors
    /// As [`reload`](Self::reload).
    pub fn reload_if_changed(&self) -> Result<Option<ReloadReport>, RegistryLoadError> {
        self.inner.reload(false)
    }

    /// Sets how long a changed file must stay unchanged before
    /// [`reload_if_changed`](Self::reload_if_changed) and the watcher apply it (default
    /// [`DEFAULT_SETTLE_TIME`]; [`watch`](Self::watch) sets it to its debounce). Longer than
    /// the longest pause of a writer in the middle of a file. Zero applies the first read.
    pub fn set_settle_time(&self, settle: Duration) {
        self.inner.settle_nanos.store(
            settle.as_nanos().min(u64::MAX as u128) as u64,
            Ordering::Relaxed,
        );
    }

    /// The error of the last reload attempt, `None` when it succeeded (or none was tried).
    pub fn last_reload_error(&self) -> Option<RegistryLoadError> {
        self.inner
            .last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Calls `f` after every reload attempt that read changed files, on the reloading thread.
    pub fn on_reload(&self, f: impl Fn(&ReloadEvent) + Send + Sync + 'static) {
        self.inner
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::new(f));
    }

    /// Watches the files' directories (so editors' rename-saves and Kubernetes ConfigMap
    /// symlink swaps are seen), debounced by `debounce` (200 ms is a good default), and
    /// reloads when a file's content changes. Watching stops when the returned [`Watch`] is
    /// dropped.
    ///
    /// # Errors
    /// The file-watching backend's error (e.g. a directory that does not exist).
    pub fn watch(&self, debounce: std::time::Duration) -> Result<Watch, notify::Error> {
        self.set_settle_time(debounce);
        let live = Arc::downgrade(&self.inner);
        Watch::start(&self.inner.watch_files, debounce, move || {
            if let Some(live) = live.upgrade() {
                // Content comparison decides; events for other files in the directory are
                // cheap no-ops.
                let _ = live.reload(false);
            }
        })
    }
}

impl LiveInner {
    /// Reads the files once (finding them again from the locations, if any).
    fn read(&self) -> Read {
        let Some(locations) = &self.locations else {
            return read_paths(&self.paths);
        };
        match locations.resolve(&self.loader) {
            Ok(files) => Read {
                fingerprint: located_fingerprint(&files),
                sources: Ok((files.sources.clone(), Some(files))),
            },
            Err(e) => Read {
                fingerprint: vec![(PathBuf::new(), Some(e.to_string().into_bytes()), None)],
                sources: Err(e),
            },
        }
    }

    /// Reads until two reads a settle time apart are equal; `None` if they never were.
    fn settled_read(&self, mut read: Read) -> Option<Read> {
        let settle = Duration::from_nanos(self.settle_nanos.load(Ordering::Relaxed));
        if settle.is_zero() {
            return Some(read);
        }
        for _ in 0..MAX_SETTLE_ROUNDS {
            std::thread::sleep(settle);
            let next = self.read();
            if next.fingerprint == read.fingerprint {
                return Some(next);
            }
            read = next;
        }
        None
    }

    pub(crate) fn reload(&self, force: bool) -> Result<Option<ReloadReport>, RegistryLoadError> {
        let _one_at_a_time = self.reloading.lock().unwrap_or_else(|p| p.into_inner());
        let mut read = self.read();
        if !force {
            let unchanged = {
                let cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
                read.fingerprint == cur.contents
            };
            if unchanged {
                return Ok(None);
            }
            match self.settled_read(read) {
                Some(r) => read = r,
                None => {
                    tracing::warn!(
                        target: "breaker::reload",
                        files = crate::log_fields::list(&crate::log_fields::paths(&self.paths)),
                        "resilience4j config files still changing; previous config kept until \
                         they stop"
                    );
                    return Ok(None);
                }
            }
        }
        let contents = read.fingerprint;
        if let Ok((texts, _)) = &read.sources {
            let cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(why) = looks_torn(&cur.texts, texts, &self.loader.limits) {
                tracing::warn!(
                    target: "breaker::reload",
                    files = crate::log_fields::list(&crate::log_fields::paths(&self.paths)),
                    "{why}: taken for a half-written file, previous config kept; to really \
                     remove every setting, write `resilience4j: {{}}` in it"
                );
                return Ok(None);
            }
        }
        let texts = read
            .sources
            .as_ref()
            .map(|(t, _)| t.clone())
            .unwrap_or_default();
        // Every section is converted and checked before anything is applied.
        let result = read
            .sources
            .and_then(|(texts, files)| match files {
                Some(files) => files.load(&self.loader),
                None => self.loader.load_sources(&texts),
            })
            .map_err(RegistryLoadError::from)
            .and_then(|loaded| {
                let configs = core_configs(&loaded, &self.catalog)?;
                let modules =
                    module_core_configs_with_clock(&loaded, &self.catalog, self.clock.as_ref())?;
                Ok((loaded, configs, modules))
            });
        let mut cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let event = match result {
            Ok((loaded, configs, modules)) => {
                let report = diff(&cur.loaded, &loaded);
                self.registry
                    .apply(configs.default_config, Vec::new(), configs.instances);
                self.modules.apply(modules);
                if loaded.drills.instances != cur.loaded.drills.instances {
                    crate::drill::apply(&self.drills, &loaded.drills);
                }
                for w in &loaded.warnings {
                    tracing::warn!("{w}");
                }
                for c in &report.changes {
                    tracing::debug!(
                        target: "breaker::reload",
                        instance = %c.instance,
                        setting = %c.setting,
                        old = %c.old,
                        new = %c.new,
                        "setting changed"
                    );
                }
                tracing::info!(
                    target: "breaker::reload",
                    files = crate::log_fields::list(&crate::log_fields::paths(&self.paths)),
                    changes = report.changes.len(),
                    added = crate::log_fields::list(&report.added),
                    removed = crate::log_fields::list(&report.removed),
                    "resilience4j config reloaded: {report}"
                );
                *cur = Current {
                    contents,
                    texts,
                    loaded,
                };
                *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = None;
                ReloadEvent::Applied(report)
            }
            Err(e) => {
                // Remember the bad content so the watcher does not retry it in a loop.
                cur.contents = contents;
                tracing::error!(
                    target: "breaker::reload",
                    files = crate::log_fields::list(&crate::log_fields::paths(&self.paths)),
                    error = %e,
                    "resilience4j config reload rejected, previous config kept"
                );
                *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.clone());
                ReloadEvent::Failed(e)
            }
        };
        drop(cur);
        let listeners = self
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for l in &listeners {
            l(&event);
        }
        match event {
            ReloadEvent::Applied(r) => Ok(Some(r)),
            ReloadEvent::Failed(e) => Err(e),
        }
    }
}
