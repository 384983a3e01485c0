//! The human-readable report of `breaker check`.

use std::fmt::Write;

use breaker_config::json::{instance_json, sources_json};
use breaker_config::modules::{ModuleConfig, ModulesConfig};
use breaker_config::{Base, Loaded};
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
    if key.contains("Duration") || key == "limitRefreshPeriod" {
        " ms"
    } else if key.ends_with("RateThreshold") {
        " %"
    } else {
        ""
    }
}

fn instance(out: &mut String, title: &str, base: &Base, values: &Value, sources: &Value) {
    let _ = writeln!(out, "{title}  (inherits from {})", base_text(base));
    if let (Value::Object(vals), Value::Object(srcs)) = (values, sources) {
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
        let title = format!("Circuit breaker '{name}'");
        instance(
            &mut out,
            &title,
            &i.base,
            &instance_json(i),
            &sources_json(i),
        );
    }
    for (name, e) in &c.errors {
        let _ = writeln!(out, "Circuit breaker '{name}': INVALID\n  {e}\n");
    }
    match &c.default_config {
        Ok(d) => instance(
            &mut out,
            "Any other name (default config)",
            &d.base,
            &instance_json(d),
            &sources_json(d),
        ),
        Err(e) => {
            let _ = writeln!(out, "Any other name (default config): INVALID\n  {e}\n");
        }
    }
    modules(&mut out, &loaded.modules);
    shared_state(&mut out, &loaded.shared_store);
    // No "No warnings." here: the check ends with the count of errors and warnings.
    if !loaded.warnings.is_empty() {
        let _ = writeln!(out, "Warnings ({}):", loaded.warnings.len());
        for w in &loaded.warnings {
            let _ = writeln!(out, "  {w}");
        }
    }
    out
}

/// The last line of `breaker check`: `2 errors, 1 warning`.
pub fn counts(errors: usize, warnings: usize) -> String {
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {}",
        plural(errors, "error"),
        plural(warnings, "warning")
    )
}

/// What each module's resolved type offers the report.
trait Shown {
    fn base(&self) -> &Base;
    fn values(&self) -> Value;
    fn sources(&self) -> Value;
}

macro_rules! shown {
    ($($t:ty),*) => {$(
        impl Shown for $t {
            fn base(&self) -> &Base {
                &self.base
            }
            fn values(&self) -> Value {
                self.to_json()
            }
            fn sources(&self) -> Value {
                self.sources_json()
            }
        }
    )*};
}

shown!(
    breaker_config::modules::ResolvedRetry,
    breaker_config::modules::ResolvedTimeLimiter,
    breaker_config::modules::ResolvedBulkhead,
    breaker_config::modules::ResolvedThreadPoolBulkhead,
    breaker_config::modules::ResolvedRateLimiter
);

/// One module: every instance, every error, and what other names get. A module the files
/// do not configure at all takes one line.
fn module<R: Shown>(out: &mut String, what: &str, m: &ModuleConfig<R>) {
    let untouched = |d: &R| {
        d.sources()
            .as_object()
            .is_some_and(|s| s.values().all(|v| v["from"] == "default"))
    };
    if m.instances.is_empty()
        && m.errors.is_empty()
        && m.default_config.as_ref().is_ok_and(untouched)
    {
        let _ = writeln!(
            out,
            "{what}: none configured (any name gets Resilience4j's defaults)\n"
        );
        return;
    }
    for (name, i) in &m.instances {
        instance(
            out,
            &format!("{what} '{name}'"),
            i.base(),
            &i.values(),
            &i.sources(),
        );
    }
    for (name, e) in &m.errors {
        let _ = writeln!(out, "{what} '{name}': INVALID\n  {e}\n");
    }
    let title = format!("{what}: any other name (default config)");
    match &m.default_config {
        Ok(d) => instance(out, &title, d.base(), &d.values(), &d.sources()),
        Err(e) => {
            let _ = writeln!(out, "{title}: INVALID\n  {e}\n");
        }
    }
}

fn modules(out: &mut String, m: &ModulesConfig) {
    module(out, "Retry", &m.retry);
    module(out, "Time limiter", &m.time_limiter);
    module(out, "Bulkhead", &m.bulkhead);
    module(out, "Thread-pool bulkhead", &m.thread_pool_bulkhead);
    module(out, "Rate limiter", &m.rate_limiter);
    let layers: Vec<String> = m
        .aspect_order
        .outermost_first()
        .iter()
        .map(|(n, o)| format!("{n} ({o})"))
        .collect();
    let _ = writeln!(
        out,
        "Aspect order, outermost layer first: {}\n",
        layers.join(" > ")
    );
}

/// breaker's `breaker.*` extension keys: which breakers share their state through Redis.
fn shared_state(out: &mut String, c: &breaker_config::SharedStoreConfig) {
    if *c == breaker_config::SharedStoreConfig::default() {
        return;
    }
    out.push_str("Shared state (breaker.*, ignored by Spring):\n");
    for (name, kind) in &c.instances {
        let key = format!("breaker.circuitbreaker.instances.{name}.store");
        let at = c
            .origins
            .get(&key)
            .map(|o| format!("  ({o})"))
            .unwrap_or_default();
        let _ = writeln!(out, "  circuit breaker '{name}': store {}{at}", kind.name());
    }
    let r = &c.redis;
    let ms = |d: Option<std::time::Duration>, default: &str| {
        d.map_or(format!("{default} (default)"), |d| {
            format!("{} ms", d.as_millis())
        })
    };
    if let Some(url) = &r.url {
        let _ = writeln!(
            out,
            "  redis url: {}",
            breaker_config::SharedStoreConfig::redacted_url(url)
        );
    }
    let _ = writeln!(
        out,
        "  redis key-prefix: {}",
        r.key_prefix.as_deref().unwrap_or("breaker: (default)")
    );
    let _ = writeln!(
        out,
        "  redis refresh-interval: {}",
        ms(r.refresh_interval, "100 ms")
    );
    let _ = writeln!(out, "  redis timeout: {}", ms(r.timeout, "50 ms"));
    let _ = writeln!(out, "  redis trial-lease: {}", ms(r.trial_lease, "10 s"));
    let _ = writeln!(out, "  redis key-ttl: {}", ms(r.key_ttl, "24 h"));
    out.push('\n');
}
