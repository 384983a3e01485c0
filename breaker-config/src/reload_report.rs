//! What a reload changed ([`ReloadReport`]): the instances added and removed and each setting
//! whose value differs, compared as `breaker check --json` shows them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use crate::json::instance_json;
use crate::load::Loaded;

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

/// What changed from `old` to `new`: instances added and removed, and each setting of the
/// others whose `breaker check --json` value differs.
pub(crate) fn diff(old: &Loaded, new: &Loaded) -> ReloadReport {
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
