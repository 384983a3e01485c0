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
    let mut key = String::new();
    for element in name.split('_').filter(|e| !e.is_empty()) {
        let lower = element.to_lowercase();
        if lower.bytes().all(|b| b.is_ascii_digit()) {
            key.push('[');
            key.push_str(&lower);
            key.push(']');
        } else {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(&lower);
        }
    }
    (!key.is_empty() && !parse_name(&key).is_empty()).then_some(key)
}

/// The environment document: every variable whose name maps under `resilience4j.`,
/// `management.`, `breaker.` or `spring.` (the others bind nothing breaker reads; they
/// still resolve placeholders, through the resolver's own look-up), in name order.
pub(crate) fn document(env: &HashMap<String, String>) -> Document {
    let file: Arc<str> = Arc::from(super::ENV_DOCUMENT);
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
        if super::read_by_breaker(&p.name[0].text) {
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
mod tests {
    use super::*;

    #[test]
    fn names_map_as_spring_boots_system_environment_mapper() {
        assert_eq!(
            property_key("RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_FAILURERATETHRESHOLD")
                .as_deref(),
            Some("resilience4j.circuitbreaker.instances.payments.failureratethreshold")
        );
        assert_eq!(property_key("MY_LIST_0_X").as_deref(), Some("my.list[0].x"));
        assert_eq!(property_key("A__B_").as_deref(), Some("a.b"));
        assert_eq!(
            property_key("resilience4j.retry.instances.a.max-attempts").as_deref(),
            Some("resilience4j.retry.instances.a.max-attempts")
        );
        assert_eq!(property_key("___"), None);
    }

    #[test]
    fn only_variables_under_the_sections_breaker_reads() {
        let env: HashMap<String, String> = [
            ("PATH", "/bin"),
            ("RESILIENCE4J_RETRY_INSTANCES_PAYMENTS_MAXATTEMPTS", "5"),
            ("MANAGEMENT_METRICS_TAGS_REGION", "eu"),
            ("SPRING_APPLICATION_NAME", "shop"),
            ("BREAKER_REDIS_URL", "redis://r:6379"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let d = document(&env);
        let keys: Vec<&str> = d.properties.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            vec![
                "breaker.redis.url",
                "management.metrics.tags.region",
                "resilience4j.retry.instances.payments.maxattempts",
                "spring.application.name"
            ]
        );
        assert_eq!(
            d.properties[2].value_origin.to_string(),
            "environment RESILIENCE4J_RETRY_INSTANCES_PAYMENTS_MAXATTEMPTS"
        );
    }
}
