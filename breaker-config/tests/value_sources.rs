//! Issue 22, item 2: the sources Spring Boot's externalized configuration reads besides the
//! files, with its precedence: command line > `SPRING_APPLICATION_JSON` > OS environment >
//! profile files > application files. Every test passes its environment through
//! `Loader::env` and its arguments through `Loader::args`: none touches the process.

use std::collections::HashMap;

use breaker_config::{Format, LiveConfig, Loaded, Loader, SourceText};

const FILE: &str = "resilience4j:
  circuitbreaker:
    instances:
      payments:
        failureRateThreshold: 40
        slidingWindowSize: 20
  retry:
    instances:
      payments:
        maxAttempts: 3
";

fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn load(loader: Loader) -> Loaded {
    let l = loader
        .load_str("application.yml", Format::Yaml, FILE)
        .unwrap();
    assert_eq!(
        l.errors().iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        Vec::<String>::new()
    );
    l
}

fn threshold(l: &Loaded, name: &str) -> (f32, String) {
    let s = &l.config.instances[name].failure_rate_threshold;
    (s.value, s.origin.as_ref().unwrap().to_string())
}

#[test]
fn without_other_sources_the_file_rules() {
    let l = load(Loader::new().env(env(&[])));
    assert_eq!(
        threshold(&l, "payments"),
        (40.0, "application.yml:5:31".into())
    );
    assert_eq!(l.modules.retry.instances["payments"].max_attempts.value, 3);
}

/// The issue's inputs: each overrides the file's 40.
#[test]
fn an_environment_variable_overrides_the_file() {
    let var = "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_FAILURERATETHRESHOLD";
    let l = load(Loader::new().env(env(&[(var, "30")])));
    assert_eq!(
        threshold(&l, "payments"),
        (30.0, format!("environment {var}"))
    );
    // The file's other settings stay.
    assert_eq!(l.config.instances["payments"].sliding_window_size.value, 20);

    let var = "RESILIENCE4J_RETRY_INSTANCES_PAYMENTS_MAXATTEMPTS";
    let l = load(Loader::new().env(env(&[(var, "5")])));
    let m = &l.modules.retry.instances["payments"].max_attempts;
    assert_eq!(m.value, 5);
    assert_eq!(
        m.origin.as_ref().unwrap().to_string(),
        format!("environment {var}")
    );
}

#[test]
fn spring_application_json_overrides_the_file_and_the_environment() {
    let json = r#"{"resilience4j":{"circuitbreaker":{"instances":{"payments":{"failureRateThreshold":20}}}}}"#;
    let l = load(Loader::new().env(env(&[("SPRING_APPLICATION_JSON", json)])));
    assert_eq!(
        threshold(&l, "payments"),
        (20.0, "SPRING_APPLICATION_JSON".into())
    );
    let l = load(Loader::new().env(env(&[
        ("SPRING_APPLICATION_JSON", json),
        (
            "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_FAILURERATETHRESHOLD",
            "30",
        ),
    ])));
    assert_eq!(threshold(&l, "payments").0, 20.0);
    // Also read as the property `spring.application.json` (here a dotted variable name).
    let l = load(Loader::new().env(env(&[("spring.application.json", json)])));
    assert_eq!(threshold(&l, "payments").0, 20.0);
    // ... and from the command line, which Spring Boot checks first.
    let l = load(
        Loader::new()
            .env(env(&[("SPRING_APPLICATION_JSON", json)]))
            .args([r#"--spring.application.json={"resilience4j.circuitbreaker.instances.payments.failureRateThreshold":25}"#]),
    );
    assert_eq!(threshold(&l, "payments").0, 25.0);
}

#[test]
fn an_invalid_spring_application_json_stops_the_load() {
    let e = Loader::new()
        .env(env(&[("SPRING_APPLICATION_JSON", "[1, 2]")]))
        .load_str("application.yml", Format::Yaml, FILE)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "SPRING_APPLICATION_JSON: syntax error: not a JSON object"
    );
}

#[test]
fn a_command_line_argument_overrides_everything() {
    let arg = "--resilience4j.retry.instances.payments.max-attempts=5";
    let l = load(Loader::new().env(env(&[])).args([arg]));
    let m = &l.modules.retry.instances["payments"].max_attempts;
    assert_eq!(m.value, 5);
    assert_eq!(
        m.origin.as_ref().unwrap().to_string(),
        format!("argument {arg}")
    );

    let l = load(
        Loader::new()
            .env(env(&[
                ("RESILIENCE4J_RETRY_INSTANCES_PAYMENTS_MAXATTEMPTS", "4"),
                (
                    "SPRING_APPLICATION_JSON",
                    r#"{"resilience4j.retry.instances.payments.maxAttempts":6}"#,
                ),
            ]))
            .args(["serve".to_string(), arg.to_string()]),
    );
    assert_eq!(l.modules.retry.instances["payments"].max_attempts.value, 5);
}

/// The whole ladder: application file 40 < profile file 45 < environment 30 < JSON 20 <
/// command line 10, each step adding one source.
#[test]
fn precedence_is_spring_boots() {
    let files = [
        SourceText {
            name: "application.yml".into(),
            format: Format::Yaml,
            text: FILE.into(),
        },
        SourceText {
            name: "application-prod.yml".into(),
            format: Format::Yaml,
            text: "resilience4j.circuitbreaker.instances.payments.failureRateThreshold: 45\n"
                .into(),
        },
    ];
    let var = (
        "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_FAILURERATETHRESHOLD",
        "30",
    );
    let json = (
        "SPRING_APPLICATION_JSON",
        r#"{"resilience4j":{"circuitbreaker":{"instances":{"payments":{"failureRateThreshold":20}}}}}"#,
    );
    let arg = "--resilience4j.circuitbreaker.instances.payments.failure-rate-threshold=10";
    let run = |vars: &[(&str, &str)], args: &[&str]| {
        let l = Loader::new()
            .profiles(["prod"])
            .env(env(vars))
            .args(args.iter().copied())
            .load_sources(&files)
            .unwrap();
        threshold(&l, "payments")
    };
    assert_eq!(run(&[], &[]), (45.0, "application-prod.yml:1:70".into()));
    assert_eq!(run(&[var], &[]).0, 30.0);
    assert_eq!(run(&[var, json], &[]).0, 20.0);
    assert_eq!(run(&[var, json], &[arg]), (10.0, format!("argument {arg}")));
}

/// SPRING_PROFILES_ACTIVE comes from the environment; `--spring.profiles.active` on the
/// command line outranks it, as any property.
#[test]
fn the_active_profile_follows_the_same_precedence() {
    let files = [SourceText {
        name: "application.yml".into(),
        format: Format::Yaml,
        text: "resilience4j.circuitbreaker.instances.a.slidingWindowSize: 50
---
spring.config.activate.on-profile: prod
resilience4j.circuitbreaker.instances.a.slidingWindowSize: 66
---
spring.config.activate.on-profile: qa
resilience4j.circuitbreaker.instances.a.slidingWindowSize: 77
"
        .into(),
    }];
    let size = |vars: &[(&str, &str)], args: &[&str]| {
        let l = Loader::new()
            .env(env(vars))
            .args(args.iter().copied())
            .load_sources(&files)
            .unwrap();
        l.config.instances["a"].sliding_window_size.value
    };
    assert_eq!(size(&[], &[]), 50);
    assert_eq!(size(&[("SPRING_PROFILES_ACTIVE", "prod")], &[]), 66);
    assert_eq!(
        size(
            &[("SPRING_PROFILES_ACTIVE", "prod")],
            &["--spring.profiles.active=qa"]
        ),
        77
    );
}

/// Spring Boot docs, "Binding Maps From Environment Variables": map keys from environment
/// variables are lowercase. The binder's `MapBinder` then holds both `paymentService` (the
/// file) and `paymentservice` (the variable), and binds each by `ConfigurationPropertyName`,
/// whose equality ignores case: both entries get the variable's 30 and the file's window 20.
#[test]
fn an_instance_name_from_the_environment_is_lowercase_and_matches_case_insensitively() {
    let l = Loader::new()
        .env(env(&[(
            "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTSERVICE_FAILURERATETHRESHOLD",
            "30",
        )]))
        .load_str(
            "application.yml",
            Format::Yaml,
            "resilience4j.circuitbreaker.instances.paymentService:
  failureRateThreshold: 40
  slidingWindowSize: 20
",
        )
        .unwrap();
    let names: Vec<&String> = l.config.instances.keys().collect();
    assert_eq!(names, ["paymentService", "paymentservice"]);
    for name in ["paymentService", "paymentservice"] {
        let i = &l.config.instances[name];
        assert_eq!(i.failure_rate_threshold.value, 30.0, "{name}");
        assert_eq!(i.sliding_window_size.value, 20, "{name}");
    }
    // The documents returned are the files and sources as written.
    assert!(l
        .documents
        .iter()
        .flat_map(|d| d.properties.iter())
        .all(|p| !p.key.contains("paymentservice.slidingWindowSize")));
}

/// A numeric element is a list index: `..._RECORDEXCEPTIONS_0` is `recordExceptions[0]`.
#[test]
fn numeric_elements_are_list_indexes() {
    let l = load(Loader::new().env(env(&[
        (
            "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_RECORDEXCEPTIONS_0",
            "java.io.IOException",
        ),
        (
            "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_RECORDEXCEPTIONS_1",
            "java.util.concurrent.TimeoutException",
        ),
    ])));
    assert_eq!(
        l.config.instances["payments"].record_exceptions.value,
        Some(vec![
            "java.io.IOException".to_string(),
            "java.util.concurrent.TimeoutException".to_string()
        ])
    );
}

/// Placeholders see every source: `${spring.application.name}` from an argument, the JSON
/// or the environment, the highest first.
#[test]
fn placeholders_resolve_against_every_source() {
    let tag = |vars: &[(&str, &str)], args: &[&str]| {
        Loader::new()
            .env(env(vars))
            .args(args.iter().copied())
            .load_str(
                "application.yml",
                Format::Yaml,
                "spring.application.name: from-file\n\
                 management.metrics.tags.application: ${spring.application.name}\n",
            )
            .unwrap()
            .management
            .metrics_tags["application"]
            .clone()
    };
    let var = ("SPRING_APPLICATION_NAME", "from-env");
    let json = (
        "SPRING_APPLICATION_JSON",
        r#"{"spring":{"application":{"name":"from-json"}}}"#,
    );
    let arg = "--spring.application.name=from-args";
    assert_eq!(tag(&[], &[]), "from-file");
    assert_eq!(tag(&[var], &[]), "from-env");
    assert_eq!(tag(&[var, json], &[]), "from-json");
    assert_eq!(tag(&[var, json], &[arg]), "from-args");
}

/// A reload re-reads the files; the environment and the arguments stay as at start.
#[test]
fn a_reload_keeps_the_environment_and_arguments_of_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    std::fs::write(&path, FILE).unwrap();
    let live = LiveConfig::load(
        &[&path],
        Loader::new()
            .env(env(&[(
                "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_FAILURERATETHRESHOLD",
                "30",
            )]))
            .args(["--resilience4j.circuitbreaker.instances.payments.slidingWindowSize=7"]),
        Default::default(),
    )
    .unwrap();
    let cb = || live.registry().circuit_breaker("payments").config();
    assert_eq!(cb().failure_rate_threshold(), 30.0);
    assert_eq!(cb().sliding_window_size(), 7);
    std::fs::write(
        &path,
        FILE.replace(
            "failureRateThreshold: 40",
            "failureRateThreshold: 45\n        minimumNumberOfCalls: 4",
        ),
    )
    .unwrap();
    live.reload().unwrap();
    assert_eq!(cb().minimum_number_of_calls(), 4); // the file was re-read
    assert_eq!(cb().failure_rate_threshold(), 30.0);
    assert_eq!(cb().sliding_window_size(), 7);
}

/// Variables under `BREAKER_` that are no setting (`BREAKER_CONFIG` names the file the
/// global registry loads) are not warned about; a `breaker.*` setting in the environment
/// still applies.
#[test]
fn other_breaker_variables_are_not_settings() {
    let l = load(Loader::new().env(env(&[
        ("BREAKER_CONFIG", "/etc/app/application.yml"),
        ("BREAKER_REDIS_KEY_PREFIX", "shop:"),
        ("PATH", "/usr/bin"),
    ])));
    assert_eq!(
        l.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        Vec::<String>::new()
    );
    // `_` separates elements: BREAKER_REDIS_KEY_PREFIX is breaker.redis.key.prefix, no
    // setting (breaker's own keys have only the canonical environment form, unlike the
    // legacy form of Resilience4j settings below); BREAKER_REDIS_KEYPREFIX is key-prefix.
    assert_eq!(l.shared_store.redis.key_prefix, None);
    let l = load(Loader::new().env(env(&[("BREAKER_REDIS_KEYPREFIX", "shop:")])));
    assert_eq!(l.shared_store.redis.key_prefix.as_deref(), Some("shop:"));
}

/// Spring Boot's binder also looks a setting up by its legacy environment name, `_` for the
/// dashes of `failure-rate-threshold`.
#[test]
fn a_setting_under_its_legacy_environment_name() {
    let l = load(Loader::new().env(env(&[
        (
            "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_FAILURE_RATE_THRESHOLD",
            "35",
        ),
        ("RESILIENCE4J_RETRY_INSTANCES_PAYMENTS_MAX_ATTEMPTS", "6"),
    ])));
    assert_eq!(threshold(&l, "payments").0, 35.0);
    assert_eq!(l.modules.retry.instances["payments"].max_attempts.value, 6);
}

/// A bad value from the environment is an error that names the variable.
#[test]
fn a_bad_environment_value_names_the_variable() {
    let var = "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTS_FAILURERATETHRESHOLD";
    let l = Loader::new()
        .env(env(&[(var, "high")]))
        .load_str("application.yml", Format::Yaml, FILE)
        .unwrap();
    let errors: Vec<String> = l.errors().iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        [format!(
            "environment {var}: resilience4j.circuitbreaker.instances.payments.failureratethreshold = 'high': \
             Failed to convert 'high' to java.lang.Float (allowed: a number)"
        )]
    );
    let j = breaker_config::json::error_json(l.errors()[0]);
    assert_eq!(j["file"], format!("environment {var}"));
    assert_eq!(j["line"], serde_json::Value::Null);
}

/// A misspelt key under a name that also comes from the environment in another case is
/// warned about once, not once per spelling.
#[test]
fn a_warning_under_a_name_with_two_spellings_is_given_once() {
    let l = Loader::new()
        .env(env(&[(
            "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTSERVICE_FAILURERATETHRESHOLD",
            "30",
        )]))
        .load_str(
            "application.yml",
            Format::Yaml,
            "resilience4j.circuitbreaker.instances.paymentService:
  failureRateThreshold: 40
  slidingWindowSise: 20
",
        )
        .unwrap();
    let w: Vec<String> = l.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(w.len(), 1, "{w:#?}");
    assert!(w[0].starts_with("application.yml:3:3: "), "{w:#?}");
    assert!(w[0].contains("did you mean slidingWindowSize?"), "{w:#?}");
}
