//! breaker's drill keys (issue #28): `breaker.drill.instances.<name>.*`, one fault-injection
//! drill per instance. Spring Boot binds nothing under `breaker.`; none of these keys is
//! Resilience4j's. Off by default: with no such key, nothing is injected. A bad value is an
//! error naming its file, line, key and allowed values (a reload with one keeps the last good
//! config); an unknown key under `breaker.drill` gets a warning.

use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

use breaker_core::drill::{DrillConfig, DrillErrorKind, Fault, Latency, Rejection};
use serde_json::{json, Value};

use crate::error::{ConfigError, Warning};
use crate::management::{error, starts, Reader};
use crate::origin::Origin;
use crate::placeholders::Resolver;
use crate::property::{Document, Property};
use crate::relaxed::map_key;

/// The keys of one drill, as the file spells them.
pub const DRILL_KEYS: [&str; 12] = [
    "fault",
    "error",
    "latency",
    "latency-min",
    "latency-max",
    "percentage",
    "start",
    "end",
    "delay",
    "duration",
    "calls",
    "seed",
];

/// The drills of a file: `breaker.drill.instances.<name>.*`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DrillsConfig {
    /// Each drilled instance's drill, by instance name.
    pub instances: BTreeMap<String, DrillConfig>,
    /// Where each key set here came from, by full key.
    pub origins: BTreeMap<String, Origin>,
}

impl DrillsConfig {
    /// The `breaker check` view: `{name: {"fault": "error", "error": "timeout", "percentage":
    /// 100, ...}}`, durations in ms, times in epoch ms.
    pub fn report(&self) -> Value {
        let ms = |d: Duration| d.as_millis() as u64;
        let mut out = serde_json::Map::new();
        for (name, c) in &self.instances {
            let mut m = serde_json::Map::new();
            m.insert("fault".into(), json!(c.fault.kind()));
            match &c.fault {
                Fault::Error(k) => {
                    m.insert("error".into(), json!(k.to_string()));
                }
                Fault::Latency(Latency::Fixed(d)) => {
                    m.insert("latencyMs".into(), json!(ms(*d)));
                }
                Fault::Latency(Latency::Uniform { min, max }) => {
                    m.insert("latencyMinMs".into(), json!(ms(*min)));
                    m.insert("latencyMaxMs".into(), json!(ms(*max)));
                }
                Fault::Hang => {}
            }
            m.insert("percentage".into(), json!(c.percentage));
            let put = |m: &mut serde_json::Map<String, Value>, k: &str, v: Option<u64>| {
                if let Some(v) = v {
                    m.insert(k.into(), json!(v));
                }
            };
            put(&mut m, "startEpochMs", c.start_nanos.map(|n| n / 1_000_000));
            put(&mut m, "endEpochMs", c.end_nanos.map(|n| n / 1_000_000));
            put(&mut m, "delayMs", c.delay.map(ms));
            put(&mut m, "durationMs", c.duration.map(ms));
            put(&mut m, "calls", c.max_calls);
            put(&mut m, "seed", c.seed);
            out.insert(name.clone(), Value::Object(m));
        }
        Value::Object(out)
    }
}

/// Whether `p` is under `breaker.drill` (read here, not warned about by the other
/// `breaker.*` readers).
pub(crate) fn is_drill_key(p: &Property) -> bool {
    starts(p, &["breaker", "drill"])
}

/// Reads the `breaker.drill.*` keys of `docs` (lowest precedence first).
pub(crate) fn read(
    docs: &[&Document],
    resolver: &Resolver<'_>,
    warnings: &mut Vec<Warning>,
) -> (DrillsConfig, Vec<ConfigError>) {
    let mut c = DrillsConfig::default();
    let mut errors = Vec::new();
    let mut r = Reader {
        resolver,
        errors: &mut errors,
    };
    // The last property of the highest document for each (instance, key) wins.
    let mut by_name: BTreeMap<String, BTreeMap<&'static str, &Property>> = BTreeMap::new();
    for p in docs.iter().flat_map(|d| d.properties.iter()) {
        if !is_drill_key(p) {
            continue;
        }
        let n = &p.name;
        let key = (n.len() == 5 && n[2].is("instances"))
            .then(|| DRILL_KEYS.iter().find(|k| n[4].is(k)))
            .flatten();
        match key {
            Some(k) => {
                by_name
                    .entry(map_key(&n[3].text, n[3].bracketed))
                    .or_default()
                    .insert(k, p);
            }
            None if !p.key_origin.file.starts_with("environment ") => {
                warnings.push(Warning::new(
                    Some(p.key_origin.clone()),
                    p.key.clone(),
                    format!(
                        "unknown drill setting; ignored (breaker reads breaker.drill.instances.<name>.{})",
                        DRILL_KEYS.join(", .")
                    ),
                ));
            }
            None => {}
        }
    }
    for (name, keys) in by_name {
        let mut values = BTreeMap::new();
        for (k, p) in &keys {
            if let Some(v) = r.resolved(p) {
                c.origins.insert(p.key.clone(), p.value_origin.clone());
                if !v.is_empty() {
                    values.insert(*k, (*p, v));
                }
            }
        }
        if let Some(d) = drill(&name, &values, &mut r) {
            c.instances.insert(name, d);
        }
    }
    (c, errors)
}

type Values<'a> = BTreeMap<&'static str, (&'a Property, String)>;

/// One instance's drill, or `None` with the errors pushed.
fn drill(name: &str, v: &Values<'_>, r: &mut Reader<'_, '_>) -> Option<DrillConfig> {
    let before = r.errors.len();
    let duration = |r: &mut Reader<'_, '_>, k: &str, positive: bool| {
        let (p, t) = v.get(k)?;
        match crate::duration::parse(t).ok().and_then(|d| d.to_std()) {
            Some(d) if !(positive && d.is_zero()) => Some(d),
            _ => {
                r.errors.push(error(
                    p,
                    t,
                    format!(
                        "'{t}' is not a {}duration",
                        if positive { "positive " } else { "" }
                    ),
                    "a duration such as 500ms, 5s or PT5S",
                ));
                None
            }
        }
    };
    let fault_kind = match v.get("fault") {
        Some((p, t)) => match t.to_ascii_lowercase().as_str() {
            k @ ("error" | "latency" | "hang") => Some(k.to_owned()),
            _ => {
                r.errors.push(error(
                    p,
                    t,
                    format!("unknown fault '{t}'"),
                    "error, latency, hang",
                ));
                None
            }
        },
        // Inferred when only one kind's settings are written.
        None => match (
            v.contains_key("error"),
            ["latency", "latency-min", "latency-max"]
                .iter()
                .any(|k| v.contains_key(k)),
        ) {
            (true, false) => Some("error".into()),
            (false, true) => Some("latency".into()),
            _ => {
                r.errors.push(ConfigError {
                    origin: v.values().next().map(|(p, _)| p.key_origin.clone()),
                    key: format!("breaker.drill.instances.{name}.fault"),
                    value: None,
                    message: "a drill needs its fault".into(),
                    allowed: "fault: error (with error: ...), latency (with latency: ...), hang"
                        .into(),
                });
                None
            }
        },
    };
    let fault = match fault_kind.as_deref() {
        Some("error") => match v.get("error") {
            Some((_, t)) => Some(Fault::Error(match Rejection::parse(t) {
                Some(rej) => DrillErrorKind::Rejection(rej),
                None => DrillErrorKind::Named(t.clone()),
            })),
            None => {
                r.errors.push(ConfigError {
                    origin: v.get("fault").map(|(p, _)| p.value_origin.clone()),
                    key: format!("breaker.drill.instances.{name}.error"),
                    value: None,
                    message: "fault: error needs the error to inject".into(),
                    allowed: "call-not-permitted, timeout, bulkhead-full, request-not-permitted, or an error name of the ErrorCatalog".into(),
                });
                None
            }
        },
        Some("latency") => {
            let fixed = duration(r, "latency", false);
            let (min, max) = (
                duration(r, "latency-min", false),
                duration(r, "latency-max", false),
            );
            match (fixed, min, max) {
                (Some(d), None, None) => Some(Fault::Latency(Latency::Fixed(d))),
                (None, Some(min), Some(max)) => Some(Fault::Latency(Latency::Uniform { min, max })),
                _ => {
                    if r.errors.len() == before {
                        r.errors.push(ConfigError {
                            origin: v.get("fault").map(|(p, _)| p.value_origin.clone()),
                            key: format!("breaker.drill.instances.{name}.latency"),
                            value: None,
                            message: "fault: latency needs latency, or latency-min and latency-max"
                                .into(),
                            allowed: "latency: 2s, or latency-min: 100ms with latency-max: 2s"
                                .into(),
                        });
                    }
                    None
                }
            }
        }
        Some(_) => Some(Fault::Hang),
        None => None,
    };
    let mut config = DrillConfig::new(fault.clone().unwrap_or(Fault::Hang));
    if let Some((p, t)) = v.get("percentage") {
        match t.trim_end_matches('%').trim().parse::<f64>() {
            Ok(x) if (0.0..=100.0).contains(&x) => config.percentage = x,
            _ => r.errors.push(error(
                p,
                t,
                format!("'{t}' is not a share of calls"),
                "a number from 0 to 100",
            )),
        }
    }
    let time = |r: &mut Reader<'_, '_>, k: &str| {
        let (p, t) = v.get(k)?;
        match humantime::parse_rfc3339_weak(t)
            .ok()
            .and_then(|s| s.duration_since(UNIX_EPOCH).ok())
        {
            Some(d) => Some(d.as_nanos() as u64),
            None => {
                r.errors.push(error(
                    p,
                    t,
                    format!("'{t}' is not a time"),
                    "an RFC 3339 UTC time such as 2026-03-01T14:00:00Z",
                ));
                None
            }
        }
    };
    config.start_nanos = time(r, "start");
    config.end_nanos = time(r, "end");
    config.delay = duration(r, "delay", false);
    config.duration = duration(r, "duration", true);
    let number = |r: &mut Reader<'_, '_>, k: &str, positive: bool| {
        let (p, t) = v.get(k)?;
        match t.parse::<u64>() {
            Ok(n) if !(positive && n == 0) => Some(n),
            _ => {
                r.errors.push(error(
                    p,
                    t,
                    format!(
                        "'{t}' is not a {}whole number",
                        if positive { "positive " } else { "" }
                    ),
                    if positive {
                        "1 or more"
                    } else {
                        "0 to 18446744073709551615"
                    },
                ));
                None
            }
        }
    };
    config.max_calls = number(r, "calls", true);
    config.seed = number(r, "seed", false);
    if r.errors.len() != before || fault.is_none() {
        return None;
    }
    if let Err(e) = config.validate() {
        let key = match e.field {
            "calls" => "calls",
            "latency" => "latency-max",
            "end" => "end",
            other => other,
        };
        let (origin, value) = match v.get(key) {
            Some((p, t)) => (Some(p.value_origin.clone()), Some(t.clone())),
            None => (None, None),
        };
        r.errors.push(ConfigError {
            origin,
            key: format!("breaker.drill.instances.{name}.{key}"),
            value,
            message: e.message,
            allowed: e.allowed.into(),
        });
        return None;
    }
    Some(config)
}

/// The drill registry of a [`LiveConfig`](crate::LiveConfig): the loaded file's drills, on
/// `clock` (else the shared system clock).
pub(crate) fn registry_for(
    configured: &DrillsConfig,
    clock: Option<std::sync::Arc<dyn breaker_core::Clock>>,
) -> breaker_core::drill::DrillRegistry {
    let drills = match clock {
        Some(c) => breaker_core::drill::DrillRegistry::with_clock(c),
        None => breaker_core::drill::DrillRegistry::new(),
    };
    apply(&drills, configured);
    drills
}

/// Makes `config`'s drills those of `drills` (validated when read, so none is refused).
pub(crate) fn apply(drills: &breaker_core::drill::DrillRegistry, config: &DrillsConfig) {
    if let Err((name, e)) = drills.apply(&config.instances) {
        tracing::error!(target: "breaker::drill", name, "drill not applied: {e}");
    }
}
