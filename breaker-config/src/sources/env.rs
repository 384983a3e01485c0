//! OS environment variables as Spring Boot's `SystemEnvironmentPropertySource` presents them
//! to the binder (`SystemEnvironmentPropertyMapper`): `_` separates name elements, each
//! element is lowercased, an all-digit element is a list index (`MY_LIST_0_X` is
//! `my.list[0].x`), empty elements vanish. A variable whose name contains a `.` is read as
//! written (`DefaultPropertyMapper`, which Spring Boot also applies to the environment).
//!
//! Map keys (instance names) written this way are therefore lowercase, as Spring Boot's
//! "Binding Maps From Environment Variables" documents: `..._INSTANCES_PAYMENTSERVICE_...`
//! names the key `paymentservice`. How such a key meets a file's `paymentService` is the
//! binder's business (see `bind.rs`: both entries exist and bind the same values).

use std::collections::HashMap;
use std::sync::Arc;

use crate::origin::Origin;
use crate::property::{parse_name, Document, Property, ValueKind};

/// The property key Spring Boot's binder sees for environment variable `name`, e.g.
/// `RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_FAILURERATETHRESHOLD` ->
/// `resilience4j.circuitbreaker.instances.payments.failureratethreshold`, `MY_LIST_0_X` ->
/// `my.list[0].x`. `None` when nothing is left of the name.
pub(crate) fn property_key(name: &str) -> Option<String> {
    if name.contains('.') {
        return (!parse_name(name).is_empty()).then(|| name.to_string());
    }
    // (text, is_index)
    let mut elements: Vec<(String, bool)> = name
        .split('_')
        .filter(|e| !e.is_empty())
        .map(|e| {
            let lower = e.to_lowercase();
            let index = lower.bytes().all(|b| b.is_ascii_digit());
            (lower, index)
        })
        .collect();
    join_legacy_setting_name(&mut elements);
    let mut key = String::new();
    for (text, index) in elements {
        if index {
            key.push('[');
            key.push_str(&text);
            key.push(']');
        } else {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(&text);
        }
    }
    (!key.is_empty() && !parse_name(&key).is_empty()).then_some(key)
}

/// The maps of instances and configs under `resilience4j.<section>`.
const MAPS: [&str; 4] = ["instances", "configs", "backends", "limiters"];

/// Spring Boot also finds a setting of a Resilience4j section under its "legacy" environment
/// name, with `_` for the dashes of `failure-rate-threshold`
/// (`RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_FAILURE_RATE_THRESHOLD`): the binder looks
/// every bean property up by both names (`SystemEnvironmentPropertyMapper.convertLegacyName`).
/// The settings of an instance (and a section's own keys such as `retryAspectOrder`) are one
/// element each, so the elements after the instance name (before any list index) are that
/// one setting, joined with `-`.
fn join_legacy_setting_name(elements: &mut Vec<(String, bool)>) {
    if elements.len() < 4 || elements[0].0 != "resilience4j" || elements[1].1 {
        return;
    }
    let from = if MAPS.contains(&elements[2].0.as_str()) {
        4
    } else {
        2
    };
    let end = elements
        .iter()
        .skip(from)
        .position(|(_, index)| *index)
        .map_or(elements.len(), |i| from + i);
    if end <= from + 1 || elements[from..end].iter().any(|(_, i)| *i) {
        return;
    }
    let joined: Vec<String> = elements[from..end].iter().map(|(t, _)| t.clone()).collect();
    elements.splice(from..end, [(joined.join("-"), false)]);
}

/// The environment document: every variable whose name maps under `resilience4j.`,
/// `management.`, `breaker.` or `spring.` (the others bind nothing breaker reads; they
/// still resolve placeholders, through the resolver's own look-up), in name order.
pub(crate) fn document(env: &HashMap<String, String>) -> Document {
    let file: Arc<str> = Arc::from(super::names::ENV_DOCUMENT);
    let mut names: Vec<&String> = env.keys().collect();
    names.sort();
    let mut properties = Vec::new();
    for name in names {
        let Some(key) = property_key(name) else {
            continue;
        };
        let p = Property::new(
            key,
            env[name].clone(),
            ValueKind::Str,
            Origin::outside(format!("environment {name}")),
            Origin::outside(format!("environment {name}")),
        );
        if super::names::read_by_breaker(&p.name[0].text) {
            properties.push(p);
        }
    }
    Document {
        file,
        index: 0,
        properties,
    }
}

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;
