//! [`LiveConfig`]: a registry kept in step with its Spring files, reloaded all or nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use breaker_core::{Clock, ErrorCatalog, Registry};
use serde_json::Value;

use crate::error::Warning;
use crate::json::instance_json;
use crate::load::{Loaded, Loader};
use crate::modules::{module_core_configs_with_clock, ModuleRegistries};
use crate::registry_build::{core_configs, registry_with_clock, RegistryLoadError};
use crate::watch::Watch;

/// One setting of one instance that a reload changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingChange {
    /// The circuit breaker's name, or `default` for the config that names not listed get;
    /// for the other modules `<module>:<name>` (`retry:backendA`, `ratelimiter:default`), and
    /// `aspectOrder` for the aspect orders.
    pub instance: String,
    /// Resilience4j's camelCase setting name, e.g. `waitDurationInOpenState`.
    pub setting: String,
    /// The value before, as in `breaker check --json` (durations in ms).
    pub old: String,
    /// The value after.
    pub new: String,
}

impl fmt::Display for SettingChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{}: {} -> {}",
            self.instance, self.setting, self.old, self.new
        )
    }
}

/// What a successful reload changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReloadReport {
    /// Settings whose value changed, by instance then setting name.
    pub changes: Vec<SettingChange>,
    /// Instances that appeared in the files (created now).
    pub added: Vec<String>,
    /// Instances no longer in the files; their breakers stay, following the default config.
    pub removed: Vec<String>,
}

impl ReloadReport {
    /// Whether the reload changed nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.added.is_empty() && self.removed.is_empty()
    }
}

impl fmt::Display for ReloadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("no changes");
        }
        let mut parts: Vec<String> = self.changes.iter().map(ToString::to_string).collect();
        parts.extend(self.added.iter().map(|n| format!("{n}: added")));
        parts.extend(
            self.removed
                .iter()
                .map(|n| format!("{n}: removed (now follows default)")),
        );
        f.write_str(&parts.join(", "))
    }
}

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
    contents: Vec<Option<Vec<u8>>>,
    loaded: Loaded,
}

pub(crate) struct LiveInner {
    registry: Registry,
    modules: ModuleRegistries,
    loader: Loader,
    paths: Vec<PathBuf>,
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

fn read_all(paths: &[PathBuf]) -> Vec<Option<Vec<u8>>> {
    paths.iter().map(|p| std::fs::read(p).ok()).collect()
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
        let contents = read_all(&paths);
        let loaded = loader.load_files(&paths)?;
        let modules = module_core_configs_with_clock(&loaded, &catalog, clock.as_ref())?;
        let registry = registry_with_clock(&loaded, &catalog, clock.clone())?;
        let modules = ModuleRegistries::from_core_configs(modules);
        for w in &loaded.warnings {
            tracing::warn!("{w}");
        }
        Ok(LiveConfig {
            inner: Arc::new(LiveInner {
                registry,
                modules,
                loader,
                paths,
                catalog,
                clock,
                current: Mutex::new(Current { contents, loaded }),
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

    /// Reads the files again and applies them, even if unchanged.
    ///
    /// # Errors
    /// The [`RegistryLoadError`] of the new files; nothing changed then.
    pub fn reload(&self) -> Result<ReloadReport, RegistryLoadError> {
        self.inner.reload(true).map(Option::unwrap_or_default)
    }

    /// Reloads only if a file's bytes differ from the config in force; `Ok(None)` when
    /// nothing changed. This is what the watcher calls.
    ///
    /// # Errors
    /// As [`reload`](Self::reload).
    pub fn reload_if_changed(&self) -> Result<Option<ReloadReport>, RegistryLoadError> {
        self.inner.reload(false)
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
        Watch::start(Arc::downgrade(&self.inner), &self.inner.paths, debounce)
    }
}

impl LiveInner {
    pub(crate) fn reload(&self, force: bool) -> Result<Option<ReloadReport>, RegistryLoadError> {
        let mut cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let contents = read_all(&self.paths);
        if !force && contents == cur.contents {
            return Ok(None);
        }
        // Every section is converted and checked before anything is applied.
        let result = self
            .loader
            .load_files(&self.paths)
            .map_err(RegistryLoadError::from)
            .and_then(|loaded| {
                let configs = core_configs(&loaded, &self.catalog)?;
                let modules =
                    module_core_configs_with_clock(&loaded, &self.catalog, self.clock.as_ref())?;
                Ok((loaded, configs, modules))
            });
        let event = match result {
            Ok((loaded, configs, modules)) => {
                let report = diff(&cur.loaded, &loaded);
                self.registry
                    .apply(configs.default_config, Vec::new(), configs.instances);
                self.modules.apply(modules);
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
                    files = ?self.paths,
                    changes = report.changes.len(),
                    added = ?report.added,
                    removed = ?report.removed,
                    "resilience4j config reloaded: {report}"
                );
                *cur = Current { contents, loaded };
                *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = None;
                ReloadEvent::Applied(report)
            }
            Err(e) => {
                // Remember the bad content so the watcher does not retry it in a loop.
                cur.contents = contents;
                tracing::error!(
                    target: "breaker::reload",
                    files = ?self.paths,
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

/// Every setting, as `breaker check --json` shows it, per instance (and `default`).
fn settings(loaded: &Loaded) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let flat = |v: Value| -> BTreeMap<String, String> {
        match v {
            Value::Object(m) => m.into_iter().map(|(k, v)| (k, v.to_string())).collect(),
            _ => BTreeMap::new(),
        }
    };
    if let Ok(d) = &loaded.config.default_config {
        out.insert("default".to_string(), flat(instance_json(d)));
    }
    for (name, i) in &loaded.config.instances {
        out.insert(name.clone(), flat(instance_json(i)));
    }
    // The other modules, as `<module>:<name>` (`retry:backendA`, `retry:default`).
    for (module, v) in loaded.modules.report() {
        if module == "aspectOrder" {
            out.insert(module, flat(v));
            continue;
        }
        if !v["defaultConfig"].is_null() {
            out.insert(
                format!("{module}:default"),
                flat(v["defaultConfig"].clone()),
            );
        }
        if let Value::Object(instances) = &v["instances"] {
            for (name, i) in instances {
                out.insert(format!("{module}:{name}"), flat(i.clone()));
            }
        }
    }
    out
}

fn diff(old: &Loaded, new: &Loaded) -> ReloadReport {
    let (a, b) = (settings(old), settings(new));
    let mut report = ReloadReport::default();
    let names: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for name in names {
        match (a.get(name), b.get(name)) {
            (Some(x), Some(y)) => {
                let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    let (o, n) = (x.get(k), y.get(k));
                    if o != n {
                        report.changes.push(SettingChange {
                            instance: name.clone(),
                            setting: k.clone(),
                            old: o.cloned().unwrap_or_else(|| "null".into()),
                            new: n.cloned().unwrap_or_else(|| "null".into()),
                        });
                    }
                }
            }
            (None, Some(_)) => report.added.push(name.clone()),
            (Some(_), None) => report.removed.push(name.clone()),
            (None, None) => {}
        }
    }
    report
}
