//! The Spring file, live: breaker-config's `LiveConfig` builds the registry from it and
//! reloads it when it changes on disk; this module adds what the example prints (the
//! resolved settings, where they are written) and the edit the run makes halfway.

use std::path::{Path, PathBuf};
use std::time::Duration;

use breaker_config::{
    LiveConfig, Loader, ReloadEvent, ResolvedConfig, ResolvedInstance, SettingChange, Watch,
};
use resilience4rs::{ErrorCatalog, Registry};

use super::flags::show;

/// A config file bound to a live registry.
pub struct LiveFile {
    live: LiveConfig,
    path: PathBuf,
    resolved: ResolvedConfig,
}

impl LiveFile {
    /// Loads `path` into a registry with every instance created. Returns the loader's
    /// warnings too (unknown keys, exception names no error type claims).
    pub fn load(path: &Path, catalog: ErrorCatalog) -> Result<(LiveFile, Vec<String>), String> {
        let live = LiveConfig::load(&[path], Loader::new(), catalog).map_err(|e| e.to_string())?;
        // The resolved settings with their positions, for the banner and the edit.
        let resolved = Loader::new()
            .load_files(&[path])
            .map_err(|e| e.to_string())?
            .config;
        let warnings = live.warnings();
        Ok((
            LiveFile {
                live,
                path: path.to_path_buf(),
                resolved,
            },
            warnings,
        ))
    }

    /// The live config (registries, management settings).
    pub fn live(&self) -> &LiveConfig {
        &self.live
    }

    /// The registry the file configures.
    pub fn registry(&self) -> &Registry {
        self.live.registry()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The instances the file lists.
    pub fn instance_names(&self) -> Vec<&str> {
        self.resolved.instances.keys().map(String::as_str).collect()
    }

    /// The resolved settings a breaker named `name` gets, as first loaded.
    pub fn resolved(&self, name: &str) -> Option<&ResolvedInstance> {
        self.resolved.config_for(name)
    }

    /// Calls `f` after every reload that read a changed file.
    pub fn on_reload(&self, f: impl Fn(&ReloadEvent) + Send + Sync + 'static) {
        self.live.on_reload(f);
    }

    /// Watches the file and reloads it when it changes; stops when the guard is dropped.
    pub fn watch(&self) -> Result<Watch, String> {
        self.live
            .watch(Duration::from_millis(100))
            .map_err(|e| e.to_string())
    }
}

/// One setting of one instance that a reload changed, as the yml would write it.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Instance name (`default` for the default config).
    pub instance: String,
    /// Resilience4j's setting name.
    pub setting: String,
    /// Value before.
    pub old: String,
    /// Value after.
    pub new: String,
}

impl From<&SettingChange> for Change {
    /// Durations, which the report gives in ms, are written as in the yml (`5s`).
    fn from(c: &SettingChange) -> Self {
        let value = |v: &str| match v.parse::<u64>() {
            Ok(ms) if c.setting.contains("Duration") => show(Duration::from_millis(ms)),
            _ => v.to_string(),
        };
        Change {
            instance: c.instance.clone(),
            setting: c.setting.clone(),
            old: value(&c.old),
            new: value(&c.new),
        }
    }
}

/// `org.springframework.web.client.HttpClientErrorException` -> `HttpClientErrorException`.
pub fn short_class(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
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
