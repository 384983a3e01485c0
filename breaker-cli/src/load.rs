//! Loading the user's files for `simulate` and `explain`, exactly as `breaker check` loads
//! them, and turning one instance into a breaker-core config on a virtual clock.

use std::path::PathBuf;
use std::sync::Arc;

use breaker_config::{ConfigFiles as FilesRead, ConfigLocations, Loaded, Loader};
use breaker_core::{CircuitBreakerConfig, ErrorCatalog, ManualClock};
use clap::Args;

/// The files and profiles, shared by `simulate` and `explain`.
#[derive(Args, Debug, Clone)]
pub struct ConfigFiles {
    /// application.yml / .yaml / .properties files; later files override earlier ones
    /// (loaded exactly as `breaker check` loads them: with their profile-specific files and
    /// imports).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Active Spring profile (repeatable, or comma-separated). Default: SPRING_PROFILES_ACTIVE,
    /// then spring.profiles.active in the files, then `default`.
    #[arg(long = "profile", value_name = "P")]
    pub profiles: Vec<String>,
}

impl ConfigFiles {
    /// Loads the files; prints their warnings on stderr.
    ///
    /// # Errors
    /// The load error, or every invalid setting (Spring Boot would refuse to start), as one
    /// message.
    pub fn load(&self) -> Result<Loaded, String> {
        let loader = Loader::new().profiles(self.profiles.clone());
        let (read, loaded) = ConfigLocations::files(&self.files)
            .load(&loader)
            .map_err(|e| e.to_string())?;
        if read.files.len() > self.files.len() {
            eprintln!("{}", files_text(&read).trim_end());
        }
        let errors = loaded.errors();
        if !errors.is_empty() {
            let list: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
            return Err(format!(
                "the files hold invalid settings (Spring Boot would refuse to start; \
                 `breaker check` shows them all):\n{}",
                list.join("\n")
            ));
        }
        for w in &loaded.warnings {
            eprintln!("warning: {w}");
        }
        Ok(loaded)
    }
}

/// "Files read (lowest precedence first):" and one line per file with why it is read.
pub fn files_text(read: &FilesRead) -> String {
    if read.files.is_empty() {
        return String::new();
    }
    let mut out = String::from("Files read (lowest precedence first):\n");
    for f in &read.files {
        out.push_str(&format!("  {}  ({})\n", f.path.display(), f.reason));
    }
    out.push('\n');
    out
}

/// The `files` array of `check --json`: `[{"path", "reason"}]`, lowest precedence first.
pub fn files_json(read: &FilesRead) -> serde_json::Value {
    read.files
        .iter()
        .map(|f| {
            serde_json::json!({
                "path": f.path.display().to_string(),
                "reason": f.reason.to_string(),
            })
        })
        .collect()
}

/// The message when no file was found: what was looked for, and that defaults apply.
pub fn none_found(read: &FilesRead) -> String {
    let looked: Vec<String> = read
        .looked_for
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    format!(
        "no config file found (looked for {}); Resilience4j's defaults apply",
        looked.join(", ")
    )
}

/// The instances the files list, in name order.
pub fn instance_names(loaded: &Loaded) -> Vec<String> {
    loaded.config.instances.keys().cloned().collect()
}

/// The instance `--instance` names, or the only instance when the flag is absent.
///
/// # Errors
/// No flag and not exactly one instance (the message lists them).
pub fn pick_instance(loaded: &Loaded, flag: Option<&str>) -> Result<String, String> {
    let names = instance_names(loaded);
    match flag {
        Some(n) => Ok(n.to_string()),
        None if names.len() == 1 => Ok(names[0].clone()),
        None if names.is_empty() => Err(
            "the files list no circuit-breaker instance; name one with --instance NAME \
             (a name not listed gets the default config)"
                .into(),
        ),
        None => Err(format!(
            "the files list {} instances; choose one with --instance NAME ({})",
            names.len(),
            names.join(", ")
        )),
    }
}

/// The breaker-core config a circuit breaker named `name` gets from the files (its
/// instance entry, else the default config, as in Spring), on `clock`.
///
/// Errors are simulated as recorded failures (`Permit::on_error`), so exception names in
/// `recordExceptions` / `ignoreExceptions` play no part and need no catalog.
///
/// # Errors
/// The instance is invalid, or breaker-core's builder refuses it.
pub fn core_config(
    loaded: &Loaded,
    name: &str,
    clock: &ManualClock,
) -> Result<CircuitBreakerConfig, String> {
    if !loaded.config.instances.contains_key(name) {
        eprintln!(
            "note: '{name}' is not listed under resilience4j.circuitbreaker.instances; it gets \
             the default config, as in Spring (listed: {})",
            instance_names(loaded).join(", ")
        );
    }
    let resolved = loaded
        .config
        .config_for(name)
        .ok_or_else(|| format!("circuit breaker '{name}' is invalid; run `breaker check`"))?;
    resolved
        .to_core_builder(&ErrorCatalog::new())
        .clock(Arc::new(clock.clone()))
        .build()
        .map_err(|e| format!("circuit breaker '{name}': {e}"))
}
