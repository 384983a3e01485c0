//! Issue 22, item 1: an unresolvable `${...}` is left as its literal text, as Spring Boot's
//! binder does (`PropertySourcesPlaceholdersResolver`, `ignoreUnresolvablePlaceholders =
//! true`): the application starts, a text value (a metric tag) keeps the text, a number,
//! duration, enum or boolean fails its own conversion with the key and the text; a warning
//! names each unresolved placeholder. A circular reference stays an error, as in Spring.

use std::collections::HashMap;

use breaker_config::{Format, Loaded, Loader};

fn load_with(env: &[(&str, &str)], yaml: &str) -> Loaded {
    let env: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Loader::new()
        .env(env)
        .load_str("application.yml", Format::Yaml, yaml)
        .unwrap()
}

fn errors(l: &Loaded) -> Vec<String> {
    l.errors().iter().map(|e| e.to_string()).collect()
}

fn warnings(l: &Loaded) -> Vec<String> {
    l.warnings.iter().map(|w| w.to_string()).collect()
}

/// The issue's file, verbatim: it loads, the tag is the placeholder's text, one warning.
#[test]
fn the_issues_file_loads_and_the_tag_is_the_literal_text() {
    let l = load_with(
        &[],
        "management.metrics.tags.application: ${spring.application.name}\n\
         resilience4j.circuitbreaker.instances.svc.failureRateThreshold: 40\n",
    );
    assert_eq!(errors(&l), Vec::<String>::new());
    assert_eq!(
        l.management.metrics_tags["application"],
        "${spring.application.name}"
    );
    assert_eq!(l.config.instances["svc"].failure_rate_threshold.value, 40.0);
    let w = warnings(&l);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with(
            "application.yml:1:38: management.metrics.tags.application: could not resolve \
             placeholder '${spring.application.name}'"
        ),
        "{w:?}"
    );
    // The registry builds: the application starts.
    assert!(breaker_config::registry_from_loaded(&l, &Default::default()).is_ok());
}

/// Set elsewhere (here the environment, as a deployment would), it resolves and nobody warns.
#[test]
fn set_in_the_environment_it_resolves() {
    let l = load_with(
        &[("SPRING_APPLICATION_NAME", "shop")],
        "management.metrics.tags.application: ${spring.application.name}\n",
    );
    assert_eq!(l.management.metrics_tags["application"], "shop");
    assert_eq!(warnings(&l), Vec::<String>::new());
}

/// The text left in a number, a duration, an enum or a boolean fails that conversion.
#[test]
fn left_in_a_typed_value_it_fails_that_values_conversion() {
    let l = load_with(
        &[],
        "resilience4j.circuitbreaker.instances:
  num: { failureRateThreshold: '${FRT}' }
  dur: { waitDurationInOpenState: '${WAIT}' }
  enm: { slidingWindowType: '${TYPE}' }
  flag: { automaticTransitionFromOpenToHalfOpenEnabled: '${AUTO}' }
resilience4j.retry.instances.r.maxAttempts: '${ATTEMPTS}'
management.health.circuitbreakers.enabled: '${HEALTH}'
breaker.redis.timeout: '${REDIS_TIMEOUT}'
",
    );
    let e = errors(&l);
    let expect = [
        "resilience4j.circuitbreaker.instances.num.failureRateThreshold = '${FRT}': Failed to convert '${FRT}' to java.lang.Float",
        "resilience4j.circuitbreaker.instances.enm.slidingWindowType = '${TYPE}': Failed to convert '${TYPE}' to io.github.resilience4j.circuitbreaker.CircuitBreakerConfig$SlidingWindowType",
        "resilience4j.circuitbreaker.instances.flag.automaticTransitionFromOpenToHalfOpenEnabled = '${AUTO}': Failed to convert '${AUTO}' to java.lang.Boolean",
        "resilience4j.retry.instances.r.maxAttempts = '${ATTEMPTS}': Failed to convert '${ATTEMPTS}' to java.lang.Integer",
        "management.health.circuitbreakers.enabled = '${HEALTH}': Failed to convert '${HEALTH}' to java.lang.Boolean",
        "resilience4j.circuitbreaker.instances.dur.waitDurationInOpenState = '${WAIT}': ",
        "breaker.redis.timeout = '${REDIS_TIMEOUT}': ",
    ];
    for x in expect {
        assert!(
            e.iter().any(|m| m.contains(x)),
            "no error with {x:?} in {e:#?}"
        );
    }
    assert_eq!(e.len(), expect.len(), "{e:#?}");
    // Every placeholder is named once in a warning.
    let w = warnings(&l);
    for name in [
        "FRT",
        "WAIT",
        "TYPE",
        "AUTO",
        "ATTEMPTS",
        "HEALTH",
        "REDIS_TIMEOUT",
    ] {
        let needle = format!("could not resolve placeholder '${{{name}}}'");
        assert_eq!(
            w.iter().filter(|m| m.contains(&needle)).count(),
            1,
            "{name}: {w:#?}"
        );
    }
}

/// Parts that resolve are replaced, the rest stays; a default applies as ever.
#[test]
fn partly_resolved_values_and_defaults() {
    let l = load_with(
        &[("REGION", "eu")],
        "management.metrics.tags:
  zone: ${REGION}-${ZONE}
  team: ${TEAM:payments}
resilience4j.circuitbreaker.instances.a.slidingWindowSize: ${SIZE:${OTHER_SIZE:12}}
",
    );
    assert_eq!(l.management.metrics_tags["zone"], "eu-${ZONE}");
    assert_eq!(l.management.metrics_tags["team"], "payments");
    assert_eq!(l.config.instances["a"].sliding_window_size.value, 12);
    let w = warnings(&l);
    assert_eq!(w.len(), 1, "{w:#?}");
    assert!(w[0].contains("'${ZONE}'"), "{w:#?}");
}

/// A circular reference is an error in Spring too (`Circular placeholder reference`).
#[test]
fn a_circular_reference_is_still_an_error() {
    let l = load_with(
        &[],
        "resilience4j.circuitbreaker.instances.b.slidingWindowSize: ${loop.x}
loop:
  x: ${loop.y}
  y: ${loop.x}
",
    );
    let e = errors(&l);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(
        e[0].contains("Circular placeholder reference 'loop.x' in property definitions"),
        "{e:#?}"
    );
}
