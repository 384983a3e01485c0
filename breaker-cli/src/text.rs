//! The human-readable report of `breaker check`.

use std::fmt::Write;

use breaker_config::json::{instance_json, sources_json};
use breaker_config::modules::{ModuleConfig, ModulesConfig};
use breaker_config::{Base, Loaded, ResolvedInstance, SlidingWindowType, Warning};
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

/// The CPU count, as Java's `Runtime.availableProcessors()` reports it.
fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A value as shown: the machine-dependent thread-pool sizes as numbers, with the rule.
fn shown_value(k: &str, v: &Value) -> String {
    match v {
        Value::Object(_) => v.to_string(),
        Value::Number(_) => format!("{}{}", value_text(v), unit(k)),
        Value::String(s) if s == "availableProcessors" => format!(
            "{} (not set: the CPU count, Runtime.availableProcessors())",
            cpus()
        ),
        Value::String(s) if s == "availableProcessors-1" => format!(
            "{} (not set: the CPU count {} minus 1, at least 1)",
            cpus().saturating_sub(1).max(1),
            cpus()
        ),
        _ => value_text(v),
    }
}

/// What the report prints for one instance besides its values: effective values that differ
/// from the resolved ones (by setting), and the warnings about its block.
#[derive(Default)]
struct Notes {
    effective: Vec<(&'static str, String)>,
    warnings: Vec<String>,
}

/// The warnings about the block of instance `name` in section `section`
/// (`resilience4j.<section>.instances.<name>.*`, or `backends`).
fn warnings_for(warnings: &[Warning], section: &str, name: &str) -> Vec<String> {
    let prefix = format!("resilience4j.{section}.");
    let (inst, back) = (format!(".instances.{name}."), format!(".backends.{name}."));
    warnings
        .iter()
        .filter(|w| w.key.starts_with(&prefix) && (w.key.contains(&inst) || w.key.contains(&back)))
        .map(|w| {
            let setting = w.key.rsplit('.').next().unwrap_or("");
            format!("{setting}: {}", w.message)
        })
        .collect()
}

fn instance(
    out: &mut String,
    title: &str,
    base: &Base,
    values: &Value,
    sources: &Value,
    notes: &Notes,
) {
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
            let shown = match notes.effective.iter().find(|(s, _)| s == k) {
                Some((_, e)) => e.clone(),
                None => shown_value(k, v),
            };
            let _ = writeln!(out, "  {k:width$}  {shown}  [{from}{at}]");
        }
    }
    for w in &notes.warnings {
        let _ = writeln!(out, "  ! {w}");
    }
    out.push('\n');
}

/// A circuit breaker's effective values where they differ from the resolved ones: a
/// COUNT_BASED window caps `minimumNumberOfCalls` at its size (Resilience4j's
/// `CircuitBreakerConfig.Builder.build()` stores `min(minimumNumberOfCalls, slidingWindowSize)`).
fn breaker_notes(i: &ResolvedInstance, warnings: Vec<String>) -> Notes {
    let mut effective = Vec::new();
    let (min, size) = (i.minimum_number_of_calls.value, i.sliding_window_size.value);
    if i.sliding_window_type.value == SlidingWindowType::CountBased && min > size {
        effective.push((
            "minimumNumberOfCalls",
            format!(
                "{size} (effective; {min} configured: a COUNT_BASED window uses min(minimumNumberOfCalls, slidingWindowSize))"
            ),
        ));
    }
    Notes {
        effective,
        warnings,
    }
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
        let notes = breaker_notes(i, warnings_for(&loaded.warnings, "circuitbreaker", name));
        instance(
            &mut out,
            &title,
            &i.base,
            &instance_json(i),
            &sources_json(i),
            &notes,
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
            &breaker_notes(d, Vec::new()),
        ),
        Err(e) => {
            let _ = writeln!(out, "Any other name (default config): INVALID\n  {e}\n");
        }
    }
    modules(&mut out, &loaded.modules, &loaded.warnings);
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
fn module<R: Shown>(
    out: &mut String,
    (what, section): (&str, &str),
    m: &ModuleConfig<R>,
    warnings: &[Warning],
) {
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
        let notes = Notes {
            effective: Vec::new(),
            warnings: warnings_for(warnings, section, name),
        };
        instance(
            out,
            &format!("{what} '{name}'"),
            i.base(),
            &i.values(),
            &i.sources(),
            &notes,
        );
    }
    for (name, e) in &m.errors {
        let _ = writeln!(out, "{what} '{name}': INVALID\n  {e}\n");
    }
    let title = format!("{what}: any other name (default config)");
    match &m.default_config {
        Ok(d) => instance(
            out,
            &title,
            d.base(),
            &d.values(),
            &d.sources(),
            &Notes::default(),
        ),
        Err(e) => {
            let _ = writeln!(out, "{title}: INVALID\n  {e}\n");
        }
    }
}

fn modules(out: &mut String, m: &ModulesConfig, w: &[Warning]) {
    module(out, ("Retry", "retry"), &m.retry, w);
    module(out, ("Time limiter", "timelimiter"), &m.time_limiter, w);
    module(out, ("Bulkhead", "bulkhead"), &m.bulkhead, w);
    let tp = ("Thread-pool bulkhead", "thread-pool-bulkhead");
    module(out, tp, &m.thread_pool_bulkhead, w);
    module(out, ("Rate limiter", "ratelimiter"), &m.rate_limiter, w);
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
    let modules = [
        ("circuitbreaker", "circuit breaker", &c.instances),
        ("ratelimiter", "rate limiter", &c.rate_limiters),
        ("bulkhead", "bulkhead", &c.bulkheads),
    ];
    for (module, label, stores) in modules {
        for (name, kind) in stores {
            let key = format!("breaker.{module}.instances.{name}.store");
            let at = c
                .origins
                .get(&key)
                .map(|o| format!("  ({o})"))
                .unwrap_or_default();
            let _ = writeln!(out, "  {label} '{name}': store {}{at}", kind.name());
        }
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
    let _ = writeln!(
        out,
        "  redis replica-lease: {}",
        ms(r.replica_lease, "10 s")
    );
    out.push('\n');
}
