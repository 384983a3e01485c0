//! The Spring file, live: load it into a registry, reload it when it changes on disk, and
//! report what changed.
//!
//! SEAM (issue #5): breaker-config's `LiveConfig` (load + watch + `on_reload` with per-instance
//! changes) has not landed yet. This module does the same with the public pieces that exist
//! (`Loader`, `ResolvedInstance::to_core_config`, `Registry::apply`): `LiveFile::load` /
//! `reload` / `changed_on_disk` are the parts to replace with `LiveConfig::load(..)`,
//! `.reload()` and `.watch()` once they are there.

use std::path::{Path, PathBuf};
use std::time::Duration;

use breaker::{CircuitBreakerConfig, ErrorCatalog, Registry};
use breaker_config::{Loader, ResolvedConfig, ResolvedInstance};

use super::flags::show;

/// One setting of one instance that a reload changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Instance name (`default` for `configs.default`).
    pub instance: String,
    /// Resilience4j's setting name.
    pub setting: &'static str,
    /// Value before, as the yml would write it.
    pub old: String,
    /// Value after.
    pub new: String,
}

/// A config file bound to a registry.
pub struct LiveFile {
    path: PathBuf,
    catalog: ErrorCatalog,
    registry: Registry,
    resolved: ResolvedConfig,
    text: String,
}

impl LiveFile {
    /// Loads `path`: a registry with `configs.default` as its default config and every
    /// instance configured. Returns the loader's warnings too.
    pub fn load(path: &Path, catalog: ErrorCatalog) -> Result<(LiveFile, Vec<String>), String> {
        let (text, resolved, mut warnings) = read(path)?;
        warnings.extend(
            resolved
                .unclaimed_in_catalog(&catalog)
                .iter()
                .map(|u| u.to_string()),
        );
        let (default, instances) = to_core_all(&resolved, &catalog)?;
        let registry = Registry::with_default_config(default);
        for (name, config) in instances {
            registry.configure_instance(&name, config);
        }
        let live = LiveFile {
            path: path.to_path_buf(),
            catalog,
            registry,
            resolved,
            text,
        };
        Ok((live, warnings))
    }

    /// The registry the file configures.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The instances the file lists, and the shared configs they can inherit from.
    pub fn instance_names(&self) -> Vec<&str> {
        self.resolved.instances.keys().map(String::as_str).collect()
    }

    /// The resolved settings a breaker named `name` gets.
    pub fn resolved(&self, name: &str) -> Option<&ResolvedInstance> {
        self.resolved.config_for(name)
    }

    /// Whether the file's content differs from what was last loaded.
    pub fn changed_on_disk(&self) -> bool {
        std::fs::read_to_string(&self.path).is_ok_and(|t| t != self.text)
    }

    /// Reads the file again and applies it to the live breakers in place (their state and,
    /// where the window is unchanged, their recorded calls are kept). On error nothing
    /// changes and the previous configuration stays in force.
    pub fn reload(&mut self) -> Result<Vec<Change>, String> {
        let (text, resolved, _) = read(&self.path)?;
        let (default, instances) = to_core_all(&resolved, &self.catalog)?;
        let changes = diff(&self.resolved, &resolved);
        self.registry.apply(default, Vec::new(), instances);
        self.resolved = resolved;
        self.text = text;
        Ok(changes)
    }
}

fn read(path: &Path) -> Result<(String, ResolvedConfig, Vec<String>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let loaded = Loader::new()
        .load_files(&[path])
        .map_err(|e| e.to_string())?;
    let errors = loaded.errors();
    if !errors.is_empty() {
        let all: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(all.join("\n"));
    }
    let warnings = loaded.warnings.iter().map(|w| w.to_string()).collect();
    Ok((text, loaded.config, warnings))
}

type CoreConfigs = (CircuitBreakerConfig, Vec<(String, CircuitBreakerConfig)>);

fn to_core(i: &ResolvedInstance, catalog: &ErrorCatalog) -> Result<CircuitBreakerConfig, String> {
    i.to_core_config(catalog)
        .map_err(|e| format!("circuit breaker '{}': {e}", i.name))
}

fn to_core_all(resolved: &ResolvedConfig, catalog: &ErrorCatalog) -> Result<CoreConfigs, String> {
    let default = match &resolved.default_config {
        Ok(d) => to_core(d, catalog)?,
        Err(e) => return Err(e.to_string()),
    };
    let instances = resolved
        .instances
        .iter()
        .map(|(name, i)| Ok((name.clone(), to_core(i, catalog)?)))
        .collect::<Result<_, String>>()?;
    Ok((default, instances))
}

/// The settings a person reads, as the yml would write them.
pub fn settings(i: &ResolvedInstance) -> Vec<(&'static str, String)> {
    let d = |d: Duration| show(d);
    let list = |l: &Option<Vec<String>>| match l {
        None => "-".to_string(),
        Some(v) => format!(
            "[{}]",
            v.iter()
                .map(|n| short_class(n))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    vec![
        (
            "slidingWindowType",
            i.sliding_window_type.value.name().to_string(),
        ),
        ("slidingWindowSize", i.sliding_window_size.value.to_string()),
        (
            "minimumNumberOfCalls",
            i.minimum_number_of_calls.value.to_string(),
        ),
        (
            "failureRateThreshold",
            format!("{}", i.failure_rate_threshold.value),
        ),
        (
            "waitDurationInOpenState",
            d(i.wait_duration_in_open_state.value),
        ),
        (
            "permittedNumberOfCallsInHalfOpenState",
            i.permitted_number_of_calls_in_half_open_state
                .value
                .to_string(),
        ),
        (
            "automaticTransitionFromOpenToHalfOpenEnabled",
            i.automatic_transition_from_open_to_half_open_enabled
                .value
                .to_string(),
        ),
        (
            "slowCallRateThreshold",
            format!("{}", i.slow_call_rate_threshold.value),
        ),
        (
            "slowCallDurationThreshold",
            d(i.slow_call_duration_threshold.value),
        ),
        (
            "maxWaitDurationInHalfOpenState",
            d(i.max_wait_duration_in_half_open_state.value),
        ),
        ("recordExceptions", list(&i.record_exceptions.value)),
        ("ignoreExceptions", list(&i.ignore_exceptions.value)),
    ]
}

/// `org.springframework.web.client.HttpClientErrorException` -> `HttpClientErrorException`.
pub fn short_class(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

fn diff(old: &ResolvedConfig, new: &ResolvedConfig) -> Vec<Change> {
    let mut out = Vec::new();
    let mut names: Vec<&String> = old.instances.keys().chain(new.instances.keys()).collect();
    names.sort();
    names.dedup();
    let pairs = names
        .into_iter()
        .map(|n| (n.as_str(), old.config_for(n), new.config_for(n)))
        .chain([(
            "default",
            old.default_config.as_ref().ok(),
            new.default_config.as_ref().ok(),
        )]);
    for (name, before, after) in pairs {
        let (Some(before), Some(after)) = (before, after) else {
            continue;
        };
        for ((setting, o), (_, n)) in settings(before).into_iter().zip(settings(after)) {
            if o != n {
                out.push(Change {
                    instance: name.to_string(),
                    setting,
                    old: o,
                    new: n,
                });
            }
        }
    }
    out
}

/// Rewrites the value of the setting `key` (any spelling) written at `origin` to `value`,
/// keeping the rest of the file byte for byte. Only a block-style YAML `key: value` line can be
/// edited this way. Returns the old and new line.
pub fn edit_value(
    origin: &breaker_config::Origin,
    key: &str,
    value: &str,
) -> Result<(String, String), String> {
    let path = Path::new(&*origin.file);
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let index = usize::try_from(origin.line)
        .ok()
        .and_then(|l| l.checked_sub(1));
    let line = index
        .and_then(|i| text.lines().nth(i))
        .ok_or_else(|| format!("{origin}: no such line"))?;
    let colon = line
        .find(':')
        .ok_or_else(|| format!("{origin}: not a `key: value` line"))?;
    let (written, rest) = line.split_at(colon + 1);
    let canonical = |k: &str| -> String {
        k.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    if !canonical(written).ends_with(&canonical(key)) {
        return Err(format!(
            "{origin}: `{}` is not a plain `{key}: value` line",
            line.trim()
        ));
    }
    let comment = rest.find(" #").map_or("", |c| &rest[c..]);
    let new_line = format!("{written} {value}{comment}");
    let mut out = String::with_capacity(text.len() + 8);
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if Some(i) == index {
            out.push_str(&new_line);
            out.push_str(&l[l.trim_end_matches(['\n', '\r']).len()..]);
        } else {
            out.push_str(l);
        }
    }
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((line.trim().to_string(), new_line.trim().to_string()))
}
