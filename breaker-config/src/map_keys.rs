//! Instance and config names that differ only in case or punctuation, as Spring Boot's binder
//! treats them. Its `MapBinder` creates one map entry per spelling it meets (the key keeps its
//! spelling: `paymentService` from the file, `paymentservice` from the environment variable
//! `RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTSERVICE_FAILURERATETHRESHOLD`, whose map keys
//! are lowercase), then binds each entry's settings by `ConfigurationPropertyName`, whose
//! equality ignores case and characters other than letters and digits. So every spelling
//! binds the settings written under all of them: both `paymentService` and `paymentservice`
//! exist, and both get the environment's value over the file's (precedence decides, as for
//! any key). Bracketed names (`[payment.service]`) compare exactly and are left alone.

use std::collections::{BTreeMap, BTreeSet};

use crate::property::{Document, Property};
use crate::relaxed::{map_key, uniform};

/// `(section, is_config, uniform name)` -> every spelling of the name.
type Spellings = BTreeMap<(String, bool, String), BTreeSet<String>>;

/// The map entry a property is written under: `(section, is_config, spelling)`.
fn entry_of(p: &Property) -> Option<(String, bool, String)> {
    let n = &p.name;
    if n.len() < 5 || !n[0].is("resilience4j") || n[1].bracketed || n[3].bracketed {
        return None;
    }
    let is_config = if n[2].is("configs") {
        true
    } else if n[2].is("instances") || n[2].is("backends") {
        false
    } else {
        return None;
    };
    let name = map_key(&n[3].text, false);
    (!name.is_empty()).then(|| (n[1].uniform(), is_config, name))
}

/// `docs` with, beside every setting written under one spelling of a name, the same setting
/// under each other spelling of that name; `None` when no name has two spellings (nearly
/// always), so the caller binds `docs` as they are.
pub(crate) fn share_relaxed_entries(docs: &[Document]) -> Option<Vec<Document>> {
    let mut spellings = Spellings::new();
    for p in docs.iter().flat_map(|d| d.properties.iter()) {
        if let Some((section, is_config, name)) = entry_of(p) {
            spellings
                .entry((section, is_config, uniform(&name)))
                .or_default()
                .insert(name);
        }
    }
    if spellings.values().all(|s| s.len() < 2) {
        return None;
    }
    let mut out = docs.to_vec();
    for d in &mut out {
        let mut properties = Vec::with_capacity(d.properties.len());
        for p in d.properties.drain(..) {
            let others: Vec<String> = entry_of(&p)
                .and_then(|(section, is_config, name)| {
                    let all = spellings.get(&(section, is_config, uniform(&name)))?;
                    Some(all.iter().filter(|s| **s != name).cloned().collect())
                })
                .unwrap_or_default();
            let copies: Vec<Property> = others.iter().map(|other| respelled(&p, other)).collect();
            properties.push(p);
            properties.extend(copies);
        }
        d.properties = properties;
    }
    Some(out)
}

/// `p` written under the entry name `name` instead.
fn respelled(p: &Property, name: &str) -> Property {
    let mut key = String::new();
    for (i, e) in p.name.iter().enumerate() {
        let text = if i == 3 { name } else { e.text.as_str() };
        if e.bracketed {
            key.push('[');
            key.push_str(text);
            key.push(']');
        } else {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(text);
        }
    }
    Property::new(
        key,
        p.value.clone(),
        p.kind,
        p.key_origin.clone(),
        p.value_origin.clone(),
    )
}
