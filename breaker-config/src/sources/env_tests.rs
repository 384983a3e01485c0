//! Unit tests of `env.rs`.

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
    // Spring's legacy form of a setting: `_` for its dashes.
    assert_eq!(
        property_key("RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_FAILURE_RATE_THRESHOLD")
            .as_deref(),
        Some("resilience4j.circuitbreaker.instances.payments.failure-rate-threshold")
    );
    assert_eq!(
        property_key("RESILIENCE4J_RETRY_INSTANCES_A_RETRY_EXCEPTIONS_0").as_deref(),
        Some("resilience4j.retry.instances.a.retry-exceptions[0]")
    );
    assert_eq!(
        property_key("RESILIENCE4J_RETRY_RETRY_ASPECT_ORDER").as_deref(),
        Some("resilience4j.retry.retry-aspect-order")
    );
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
