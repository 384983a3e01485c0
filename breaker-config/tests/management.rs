//! `management.*` (Spring Boot Actuator) and each module's `tags` / `metrics.enabled`: bound
//! with Spring's relaxed names, placeholders and precedence; a bad value is an error with its
//! file and line; every other `management.*` key is warned about.

use breaker_config::{Format, Loaded, Loader, ShowDetails};

fn yaml(text: &str) -> Loaded {
    Loader::new()
        .env(Default::default())
        .load_str("application.yml", Format::Yaml, text)
        .unwrap()
}

#[test]
fn defaults_are_spring_boots() {
    let m = yaml("resilience4j.circuitbreaker.instances.a.slidingWindowSize: 5\n").management;
    assert!(m.metrics_tags.is_empty());
    assert!(!m.health_circuit_breakers);
    assert!(!m.health_rate_limiters);
    assert!(m.health_ping);
    assert_eq!(m.show_details, ShowDetails::Never);
    assert!(!m.components_shown());
    assert_eq!(m.base_path, "/actuator");
    assert!(m.exposes("health"));
    assert!(!m.exposes("prometheus"));
    assert!(!m.exposes("circuitbreakers"));
    assert_eq!(
        m.status_order,
        vec!["DOWN", "OUT_OF_SERVICE", "UP", "UNKNOWN"]
    );
    assert!(m.metrics_enabled("circuitbreaker"));
    assert!(!m.percentiles_histogram_for("resilience4j.circuitbreaker.calls"));
}

#[test]
fn a_real_file_binds_relaxed_names_and_placeholders() {
    let loaded = yaml(
        "spring.application.name: checkout
management:
  endpoints.web:
    exposure.include: '*'
    exposure.exclude: [env, beans]
    base-path: manage/
  endpoint.health:
    showDetails: always
    status.order: down, out-of-service, up
  health:
    circuitbreakers.enabled: true
    rate_limiters.enabled: 'on'
    ping.enabled: false
  metrics:
    tags:
      application: ${spring.application.name}
      region: eu-1
    distribution.percentiles-histogram.resilience4j.circuitbreaker.calls: true
resilience4j.circuitbreaker:
  tags: { team: payments }
  metrics.enabled: true
resilience4j.retry.metrics.enabled: false
",
    );
    assert!(loaded.errors().is_empty(), "{:?}", loaded.errors());
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let m = loaded.management;
    assert!(m.exposes("prometheus") && m.exposes("circuitbreakers") && m.exposes("health"));
    assert!(!m.exposes("env") && !m.exposes("beans"));
    assert_eq!(m.base_path, "/manage");
    assert_eq!(m.show_details, ShowDetails::Always);
    assert!(m.components_shown());
    assert_eq!(m.status_order, vec!["DOWN", "OUT-OF-SERVICE", "UP"]);
    assert!(m.health_circuit_breakers && m.health_rate_limiters && !m.health_ping);
    assert_eq!(m.metrics_tags["application"], "checkout");
    assert_eq!(m.metrics_tags["region"], "eu-1");
    assert!(m.percentiles_histogram_for("resilience4j.circuitbreaker.calls"));
    assert!(!m.percentiles_histogram_for("resilience4j.circuitbreaker.callsx"));
    let tags: Vec<(String, String)> = m.tags_for("circuitbreaker").into_iter().collect();
    assert_eq!(
        tags,
        vec![
            ("application".to_string(), "checkout".to_string()),
            ("region".into(), "eu-1".into()),
            ("team".into(), "payments".into()),
        ]
    );
    assert!(!m.tags_for("retry").contains_key("team"));
    assert!(!m.metrics_enabled("retry"));
    assert!(m.metrics_enabled("circuitbreaker"));
}

#[test]
fn properties_lists_and_the_higher_document_win() {
    let loaded = Loader::new()
        .env(Default::default())
        .load_sources(&[
            breaker_config::SourceText {
                name: "application.properties".into(),
                format: Format::Properties,
                text: "management.endpoints.web.exposure.include[0]=health\n\
                       management.endpoints.web.exposure.include[1]=prometheus\n\
                       management.metrics.tags.application=a\n"
                    .into(),
            },
            breaker_config::SourceText {
                name: "application-prod.properties".into(),
                format: Format::Properties,
                text: "management.endpoints.web.exposure.include=health,circuitbreakers\n\
                       management.metrics.tags.application=b\n"
                    .into(),
            },
        ])
        .unwrap();
    let m = loaded.management;
    assert_eq!(m.exposure_include, vec!["health", "circuitbreakers"]);
    assert!(!m.exposes("prometheus"));
    assert_eq!(m.metrics_tags["application"], "b");
}

#[test]
fn bad_values_are_errors_with_file_and_line() {
    let loaded = yaml(
        "management:
  health.circuitbreakers.enabled: maybe
  endpoint.health.show-details: sometimes
  metrics.tags.application: ${MISSING}
",
    );
    let errors: Vec<String> = loaded.errors().iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        vec![
            "application.yml:2:35: management.health.circuitbreakers.enabled = 'maybe': Failed to convert 'maybe' to java.lang.Boolean (allowed: true or false (also on/off, yes/no, 1/0))",
            "application.yml:3:33: management.endpoint.health.show-details = 'sometimes': Failed to convert 'sometimes' to org.springframework.boot.actuate.endpoint.Show (allowed: never, when-authorized or always)",
        ]
    );
    // Spring Boot's binder leaves an unresolvable placeholder as text: the tag is that text.
    assert_eq!(loaded.management.metrics_tags["application"], "${MISSING}");
    // Spring Boot refuses to start on them, so no registry is built either.
    assert!(breaker_config::registry_from_loaded(&loaded, &Default::default()).is_err());
}

#[test]
fn other_management_keys_are_warned_about() {
    let loaded = yaml(
        "management.health.diskspace.enabled: false
management.endpoint.health.probes.enabled: true
management.health.circuitbreakers.enabled: true
resilience4j.bulkhead.metrics.legacy.enabled: true
resilience4j.bulkhead.metrics.enabeld: true
",
    );
    let w: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(w.len(), 3, "{w:#?}");
    assert!(w[0].starts_with("application.yml:1:1: management.health.diskspace.enabled: a Spring Boot management setting that breaker does not read"), "{w:#?}");
    assert!(
        w[1].starts_with("application.yml:2:1: management.endpoint.health.probes.enabled: "),
        "{w:#?}"
    );
    assert_eq!(w[2], "application.yml:5:1: resilience4j.bulkhead.metrics.enabeld: unknown key (Spring binds resilience4j.bulkhead.metrics.enabled and .metrics.legacy.enabled); ignored");
}
