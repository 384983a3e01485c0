//! breaker's own budget keys (issue #27), beside Resilience4j's sections and ignored by
//! Spring Boot:
//!
//! - `breaker.deadline.instances.<name>.timeout`: the overall budget of a call tree named
//!   `<name>` (for [`BudgetsConfig::deadline`], the `#[deadline]` users and `breaker check`);
//! - `breaker.retry.instances.<name>.attempt-timeout`: what one attempt may take, judged
//!   against the time left (default: the time limiter `<name>`'s `timeoutDuration` when the
//!   retry has breaker keys and such a time limiter is listed);
//! - `breaker.retry.instances.<name>.nested-retries`: `all` (default) or `outermost`;
//! - `breaker.retry.instances.<name>.budget.ratio` (0.0 to 1.0, default 0.2),
//!   `.budget.min-retries-per-second` (default 10), `.budget.window` (1 s to 1 h, default
//!   10 s): a retry budget, on as soon as one of them is set.
//!
//! None set: every call behaves as Resilience4j's. A bad value is an error naming file,
//! line, key and allowed values.

use std::collections::BTreeMap;
use std::time::Duration;

use breaker_core::retry::{NestedRetries, RetryBudgetConfig, RetryBudgets};
use serde_json::{json, Value};

use crate::error::ConfigError;
use crate::management::{error, starts, Reader};
use crate::origin::Origin;
use crate::placeholders::Resolver;
use crate::property::{Document, Property};
use crate::relaxed::map_key;

/// The budget keys of a loaded configuration.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BudgetsConfig {
    /// `breaker.deadline.instances.<name>.timeout`, by name.
    pub deadlines: BTreeMap<String, Duration>,
    /// `breaker.retry.instances.<name>.*`, by retry name (only those with a key set).
    pub retries: BTreeMap<String, RetryBudgets>,
    /// Where each key set here came from, by full key.
    pub origins: BTreeMap<String, Origin>,
}

/// Whether `p` is one of the keys read here (the shared-store reader warns about the rest
/// of `breaker.*`).
pub(crate) fn is_budget_key(p: &Property) -> bool {
    let n = &p.name;
    if starts(p, &["breaker", "deadline", "instances"]) {
        return n.len() == 5 && n[4].is("timeout");
    }
    if starts(p, &["breaker", "retry", "instances"]) {
        return match n.len() {
            5 => n[4].is("attempt-timeout") || n[4].is("nested-retries"),
            6 => {
                n[4].is("budget")
                    && (n[5].is("ratio") || n[5].is("min-retries-per-second") || n[5].is("window"))
            }
            _ => false,
        };
    }
    false
}

const DURATION: &str = "a positive duration such as 500ms, 5s or PT5S";

impl BudgetsConfig {
    /// The deadline `name` (`breaker.deadline.instances.<name>.timeout`), if set.
    pub fn deadline(&self, name: &str) -> Option<Duration> {
        self.deadlines.get(name).copied()
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.deadlines.is_empty() && self.retries.is_empty()
    }

    /// The `breaker check --json` view: every key set, its value (durations in ms) and
    /// origin (`file:line:column`).
    pub fn report(&self) -> Value {
        let ms = |d: Duration| d.as_millis() as u64;
        let origin = |key: &str| {
            self.origins
                .iter()
                .find(|(k, _)| {
                    k.replace('-', "")
                        .eq_ignore_ascii_case(&key.replace('-', ""))
                })
                .map(|(_, o)| o.to_string())
        };
        let deadlines: serde_json::Map<String, Value> = self
            .deadlines
            .iter()
            .map(|(name, d)| {
                let key = format!("breaker.deadline.instances.{name}.timeout");
                (
                    name.clone(),
                    json!({"timeoutMs": ms(*d), "origin": origin(&key)}),
                )
            })
            .collect();
        let retries: serde_json::Map<String, Value> = self
            .retries
            .iter()
            .map(|(name, b)| {
                let key = |k: &str| format!("breaker.retry.instances.{name}.{k}");
                (
                    name.clone(),
                    json!({
                        "attemptTimeoutMs": b.attempt_timeout.map(ms),
                        "nestedRetries": b.nested_retries.map(NestedRetries::name),
                        "budget": b.budget.map(|c| json!({
                            "ratio": c.ratio,
                            "minRetriesPerSecond": c.min_retries_per_second,
                            "windowMs": ms(c.window),
                        })),
                        "origins": self.origins.iter()
                            .filter(|(k, _)| k.starts_with(&key("")))
                            .map(|(k, o)| (k.clone(), json!(o.to_string())))
                            .collect::<serde_json::Map<_, _>>(),
                    }),
                )
            })
            .collect();
        json!({"deadlines": deadlines, "retries": retries})
    }
}

fn positive_duration(r: &mut Reader<'_, '_>, p: &Property, v: &str) -> Option<Duration> {
    match crate::duration::parse(v).ok().and_then(|d| d.to_std()) {
        Some(d) if !d.is_zero() => Some(d),
        _ => {
            r.errors.push(error(
                p,
                v,
                format!("'{v}' is not a positive duration"),
                DURATION,
            ));
            None
        }
    }
}

/// Reads the budget keys of `docs` (lowest precedence first: the last one wins).
pub(crate) fn read(
    docs: &[&Document],
    resolver: &Resolver<'_>,
) -> (BudgetsConfig, Vec<ConfigError>) {
    let mut c = BudgetsConfig::default();
    let mut errors = Vec::new();
    let mut r = Reader {
        resolver,
        errors: &mut errors,
    };
    // The winning property of each (section, name, key).
    let mut found: BTreeMap<(bool, String, String), &Property> = BTreeMap::new();
    for p in docs.iter().flat_map(|d| d.properties.iter()) {
        if p.name.is_empty() || !p.name[0].is("breaker") || !is_budget_key(p) {
            continue;
        }
        let n = &p.name;
        let deadline = n[1].is("deadline");
        let key = n[4..]
            .iter()
            .map(|e| e.text.to_ascii_lowercase().replace('-', ""))
            .collect::<Vec<_>>()
            .join(".");
        found.insert((deadline, map_key(&n[3].text, n[3].bracketed), key), p);
    }
    for ((deadline, name, key), p) in found {
        let Some(v) = r.resolved(p) else { continue };
        c.origins.insert(p.key.clone(), p.value_origin.clone());
        if deadline {
            if let Some(d) = positive_duration(&mut r, p, &v) {
                c.deadlines.insert(name, d);
            }
            continue;
        }
        let b = c.retries.entry(name).or_default();
        match key.as_str() {
            "attempttimeout" => b.attempt_timeout = positive_duration(&mut r, p, &v),
            "nestedretries" => match v.to_ascii_lowercase().as_str() {
                "all" => b.nested_retries = Some(NestedRetries::All),
                "outermost" => b.nested_retries = Some(NestedRetries::Outermost),
                _ => r.errors.push(error(
                    p,
                    &v,
                    format!("unknown nested-retries '{v}'"),
                    "all, outermost",
                )),
            },
            budget_key => {
                let budget = b.budget.get_or_insert_with(RetryBudgetConfig::default);
                match budget_key {
                    "budget.ratio" => match v.parse::<f64>() {
                        Ok(x) if (0.0..=1.0).contains(&x) => budget.ratio = x,
                        _ => r.errors.push(error(
                            p,
                            &v,
                            format!("'{v}' is not a ratio between 0.0 and 1.0"),
                            "a number from 0.0 to 1.0, e.g. 0.2 for 20 %",
                        )),
                    },
                    "budget.minretriespersecond" => match v.parse::<u32>() {
                        Ok(x) => budget.min_retries_per_second = x,
                        Err(_) => r.errors.push(error(
                            p,
                            &v,
                            format!("'{v}' is not a whole number of retries per second"),
                            "0 to 4294967295",
                        )),
                    },
                    _ => match positive_duration(&mut r, p, &v) {
                        Some(d)
                            if d >= Duration::from_secs(1) && d <= Duration::from_secs(3600) =>
                        {
                            budget.window = d
                        }
                        Some(_) => r.errors.push(error(
                            p,
                            &v,
                            format!("window '{v}' is out of range"),
                            "1s to 1h",
                        )),
                        None => {}
                    },
                }
            }
        }
    }
    (c, errors)
}
