//! Warnings for placeholders left unresolved. Spring Boot's binder leaves a `${NAME}` that
//! resolves nowhere as its literal text (the application starts; `management.metrics.tags.
//! application: ${spring.application.name}` tags metrics with that text) and says nothing;
//! breaker says which placeholder stayed, for every value it reads (`resilience4j.*`,
//! `management.*`, `breaker.*`). A number, duration, enum or boolean left with such text
//! fails its own conversion, with the key and the text, where it is bound.

use std::collections::HashSet;

use crate::error::Warning;
use crate::placeholders::Resolver;
use crate::property::Document;

/// One warning per unresolved placeholder of each value that is in effect (the
/// highest-precedence document's, for every key), in document and file order.
pub(crate) fn warnings(docs: &[&Document], resolver: &Resolver<'_>, out: &mut Vec<Warning>) {
    let mut seen: HashSet<String> = HashSet::new();
    let mut found = Vec::new();
    for (di, d) in docs.iter().enumerate().rev() {
        for (pi, p) in d.properties.iter().enumerate().rev() {
            let Some(first) = p.name.first() else {
                continue;
            };
            if first.is("spring") || !crate::sources::names::read_by_breaker(&first.text) {
                continue;
            }
            let key: Vec<String> = p
                .name
                .iter()
                .map(|e| {
                    if e.bracketed {
                        format!("[{}]", e.text)
                    } else {
                        e.uniform()
                    }
                })
                .collect();
            if !seen.insert(key.join(".")) || !p.value.contains("${") {
                continue;
            }
            let mut names = Vec::new();
            if resolver.resolve_noting(&p.value, &mut names).is_err() {
                continue; // a circular reference: an error where the value is bound
            }
            for name in names {
                let env = name.replace(['.', '-'], "_").to_ascii_uppercase();
                let set = if env == name {
                    format!("set the environment variable {name}")
                } else {
                    format!("set {name}, e.g. as the environment variable {env}")
                };
                let w = Warning::new(
                    Some(p.value_origin.clone()),
                    p.key.clone(),
                    format!(
                        "could not resolve placeholder '${{{name}}}': the value keeps the text \
                         '${{{name}}}', as in Spring Boot ({set}, or give a default: \
                         ${{{name}:value}})"
                    ),
                );
                found.push(((di, pi), w));
            }
        }
    }
    found.sort_by_key(|(at, _)| *at);
    out.extend(found.into_iter().map(|(_, w)| w));
}
