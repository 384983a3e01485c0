//! The human-readable report of `breaker check`.

use std::fmt::Write;

use breaker_config::json::{instance_json, sources_json};
use breaker_config::{Base, Loaded, ResolvedInstance};
use serde_json::Value;

fn base_text(b: &Base) -> String {
    match b {
        Base::BaseConfig(n) => format!("baseConfig: configs.{n}"),
        Base::SameName(n) => format!("configs.{n} (same name)"),
        Base::DefaultConfig => "configs.default".into(),
        Base::LibraryDefaults => "library defaults".into(),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Null => "not configured".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn unit(key: &str) -> &'static str {
    if key.contains("Duration") {
        " ms"
    } else if key.ends_with("RateThreshold") {
        " %"
    } else {
        ""
    }
}

fn instance(out: &mut String, title: &str, i: &ResolvedInstance) {
    let _ = writeln!(out, "{title}  (inherits from {})", base_text(&i.base));
    let values = instance_json(i);
    let sources = sources_json(i);
    if let (Value::Object(vals), Value::Object(srcs)) = (&values, &sources) {
        let width = vals.keys().map(String::len).max().unwrap_or(0);
        for (k, v) in vals {
            let src = &srcs[k];
            let from = src["from"].as_str().unwrap_or("");
            let at = src["at"]
                .as_str()
                .map(|a| format!(" {a}"))
                .unwrap_or_default();
            let shown = match v {
                Value::Object(_) => v.to_string(),
                Value::Number(_) => format!("{}{}", value_text(v), unit(k)),
                _ => value_text(v),
            };
            let _ = writeln!(out, "  {k:width$}  {shown}  [{from}{at}]");
        }
    }
    out.push('\n');
}

/// Renders the whole report.
pub fn render(loaded: &Loaded) -> String {
    let c = &loaded.config;
    let mut out = String::new();
    let _ = writeln!(out, "Active profiles: {}\n", c.profiles.join(", "));
    if c.instances.is_empty() && c.errors.is_empty() {
        out.push_str("No circuit-breaker instances are listed.\n\n");
    }
    for (name, i) in &c.instances {
        instance(&mut out, &format!("Circuit breaker '{name}'"), i);
    }
    for (name, e) in &c.errors {
        let _ = writeln!(out, "Circuit breaker '{name}': INVALID\n  {e}\n");
    }
    match &c.default_config {
        Ok(d) => instance(&mut out, "Any other name (default config)", d),
        Err(e) => {
            let _ = writeln!(out, "Any other name (default config): INVALID\n  {e}\n");
        }
    }
    if loaded.warnings.is_empty() {
        out.push_str("No warnings.\n");
    } else {
        let _ = writeln!(out, "Warnings ({}):", loaded.warnings.len());
        for w in &loaded.warnings {
            let _ = writeln!(out, "  {w}");
        }
    }
    out
}
