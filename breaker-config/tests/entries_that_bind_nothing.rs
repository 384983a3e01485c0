//! Entries under `instances` / `configs` under which no setting binds (issue #9, part 4): as
//! in Spring Boot, whose binder creates no map entry for them, they are not instances (or
//! configs); a warning names each one and, when its name is a setting's, the block it probably
//! belongs to. The same rule holds for `breaker check`, a registry and a live reload, since
//! all three load through the same binder. Also: a `baseConfig` cycle names the whole chain.

use std::collections::HashMap;

use breaker_config::json::report;
use breaker_config::{Format, LiveConfig, Loaded, Loader, SpringConfig};
use breaker_core::ErrorCatalog;

fn load(yaml: &str) -> Loaded {
    Loader::new()
        .env(HashMap::new())
        .load_str("application.yml", Format::Yaml, yaml)
        .expect("loads")
}

fn warnings(l: &Loaded) -> Vec<String> {
    l.warnings.iter().map(ToString::to_string).collect()
}

/// The input: a `recordExceptions` list indented one level too little, directly under
/// `instances`, below the block it belongs to.
const MISINDENTED: &str = "\
resilience4j.circuitbreaker:
  instances:
    backendA:
      failureRateThreshold: 40
    recordExceptions:
      - java.io.IOException
      - java.util.concurrent.TimeoutException
";

const MISINDENTED_WARNING: &str = "application.yml:6:9: resilience4j.circuitbreaker.instances.recordExceptions: no circuit-breaker setting binds under 'recordExceptions', so it is not an instance (Spring Boot creates none); recordExceptions is a circuit-breaker setting, not a name: it probably belongs under 'backendA', the block just above, indented one level further";

#[test]
fn a_misindented_setting_is_not_an_instance_and_the_warning_says_where_it_belongs() {
    let l = load(MISINDENTED);
    assert_eq!(
        l.config.instances.keys().collect::<Vec<_>>(),
        ["backendA"],
        "no instance named recordExceptions"
    );
    assert_eq!(warnings(&l), [MISINDENTED_WARNING]);
    // `breaker check --json` prints the same.
    let r = report(&l);
    assert!(r["instances"].get("recordExceptions").is_none());
    assert_eq!(r["warnings"][0], MISINDENTED_WARNING);
    // backendA really runs without the exceptions: that is what the warning is for.
    assert_eq!(
        r["instances"]["backendA"]["recordExceptions"],
        serde_json::Value::Null
    );
}

#[test]
fn the_registry_creates_no_breaker_for_it() {
    let catalog = ErrorCatalog::new()
        .acknowledge("java.io.IOException")
        .acknowledge("java.util.concurrent.TimeoutException");
    let registry = SpringConfig::yaml(MISINDENTED)
        .catalog(catalog)
        .registry()
        .unwrap();
    let names: Vec<String> = registry
        .all()
        .iter()
        .map(|b| b.name().to_string())
        .collect();
    assert_eq!(names, ["backendA"]);
}

#[test]
fn a_live_reload_that_adds_it_creates_no_breaker_and_warns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    std::fs::write(
        &path,
        "resilience4j.circuitbreaker.instances.backendA.failureRateThreshold: 40\n",
    )
    .unwrap();
    let catalog = ErrorCatalog::new()
        .acknowledge("java.io.IOException")
        .acknowledge("java.util.concurrent.TimeoutException");
    let live = LiveConfig::load(&[&path], Loader::new().env(HashMap::new()), catalog).unwrap();
    assert!(live.warnings().is_empty());
    std::fs::write(&path, MISINDENTED).unwrap();
    let changes = live.reload().unwrap();
    assert!(changes.added.is_empty(), "{changes}");
    assert!(live.registry().find("recordExceptions").is_none());
    let w = live.warnings();
    assert_eq!(w.len(), 1);
    assert!(
        w[0].ends_with(
            "it probably belongs under 'backendA', the block just above, indented one level further"
        ),
        "{w:?}"
    );
}

/// The product's choice for an entry with no value (`svc:`, `svc: ~`, `svc: ""`) or an empty
/// block (`svc: {}`): like any entry under which nothing binds, not an instance, with a
/// warning; a breaker made for that name at run time gets the default config. (Spring Boot
/// refuses an empty value there, failing to convert "" to InstanceProperties, and treats an
/// empty block differently from version to version.)
#[test]
fn an_entry_without_a_value_or_with_an_empty_block_is_not_an_instance() {
    let l = load(
        "\
resilience4j.circuitbreaker:
  configs:
    default: { slidingWindowSize: 12 }
  instances:
    bare:
    tilde: ~
    quoted: \"\"
    svc: {}
    emptySetting:
      failureRateThreshold:
    onlyUnknownKeys:
      ringBufferSizeInClosedState: 5
    real: { baseConfig: default }
",
    );
    assert_eq!(l.config.instances.keys().collect::<Vec<_>>(), ["real"]);
    let w = warnings(&l);
    let mut expected: Vec<String> = [
        ("bare", 5, 5),
        ("tilde", 6, 5),
        ("quoted", 7, 5),
        ("svc", 8, 5),
        ("emptySetting", 10, 7),
        ("onlyUnknownKeys", 12, 7),
    ]
    .iter()
    .map(|(n, line, col)| {
        format!(
            "application.yml:{line}:{col}: resilience4j.circuitbreaker.instances.{n}: no circuit-breaker setting binds under '{n}', so it is not an instance (Spring Boot creates none); made at run time, '{n}' gets the default config (give it a setting, e.g. baseConfig: default, to create it at start-up)"
        )
    })
    .collect();
    expected.insert(
        0,
        "application.yml:12:7: resilience4j.circuitbreaker.instances.onlyUnknownKeys.ringBufferSizeInClosedState: a Resilience4j 1.x key that binds nothing in 2.x; use slidingWindowSize (with minimumNumberOfCalls)".into(),
    );
    assert_eq!(w, expected);
    // What such a name gets at run time: the default config.
    let registry = SpringConfig::yaml("resilience4j.circuitbreaker.instances.svc: {}\nresilience4j.circuitbreaker.configs.default.slidingWindowSize: 12\n")
        .registry()
        .unwrap();
    assert!(registry.find("svc").is_none());
    assert_eq!(
        registry
            .circuit_breaker("svc")
            .config()
            .sliding_window_size(),
        12
    );
}

#[test]
fn a_config_under_which_nothing_binds_is_not_a_config() {
    let l = load(
        "\
resilience4j.circuitbreaker:
  configs:
    shared:
    minimumNumberOfCalls:
      - 5
  instances:
    a: { baseConfig: shared }
",
    );
    assert_eq!(
        l.config.errors["a"].message,
        "Configuration with name 'shared' does not exist"
    );
    assert_eq!(
        warnings(&l),
        [
            "application.yml:3:5: resilience4j.circuitbreaker.configs.shared: no circuit-breaker setting binds under 'shared', so it is not a config (Spring Boot creates none)",
            "application.yml:5:9: resilience4j.circuitbreaker.configs.minimumNumberOfCalls: no circuit-breaker setting binds under 'minimumNumberOfCalls', so it is not a config (Spring Boot creates none); minimumNumberOfCalls is a circuit-breaker setting, not a name: it probably belongs under 'shared', the block just above, indented one level further",
        ]
    );
}

#[test]
fn a_base_config_cycle_names_the_whole_chain() {
    let l = load(
        "\
resilience4j.circuitbreaker:
  configs:
    default: { baseConfig: x, slidingWindowSize: 5 }
    x: { baseConfig: y }
    y: { baseConfig: default }
    own: { baseConfig: own }
  instances:
    a: { baseConfig: x }
    svc: { failureRateThreshold: 20 }
    b: { baseConfig: own }
",
    );
    let message = |n: &str| l.config.errors[n].message.clone();
    assert_eq!(
        message("a"),
        "Circular reference detected in instance config: x (a -> x -> y -> default -> x)"
    );
    assert_eq!(
        message("svc"),
        "Circular reference detected in instance config: default (svc -> default -> x -> y -> default)"
    );
    assert_eq!(
        message("b"),
        "Circular reference detected in instance config: own (b -> own -> own)"
    );
    let default = l.config.default_config.as_ref().unwrap_err();
    assert_eq!(
        default.message,
        "Circular reference detected in instance config: default (default -> x -> y -> default)"
    );
}
