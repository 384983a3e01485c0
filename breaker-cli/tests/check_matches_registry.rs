//! What `breaker check --json` says a name gets is what a breaker made at run time gets
//! (issue #9, part 3): for every shared Spring fixture, the breakers a registry built from the
//! same files makes for each listed name and for a name the files do not list report exactly
//! the settings `check` prints for them (the settings beside the state machine included:
//! `eventConsumerBufferSize`, `registerHealthIndicator`, ...), and their event buffers have
//! that size; also after a reload.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use breaker_config::json::core_config_json;
use breaker_config::{Loader, SpringConfig};
use breaker_core::{ErrorCatalog, Registry};
use serde_json::Value;

const UNLISTED: &str = "a-name-no-file-lists";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../breaker-config/tests/fixtures/shared")
}

/// `breaker check --json` on `files`, with exactly `env` as the environment.
fn check(files: &[PathBuf], profiles: &[String], env: &HashMap<String, String>) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_breaker"));
    cmd.arg("check").arg("--json").env_clear().envs(env);
    for p in profiles {
        cmd.arg("--profile").arg(p);
    }
    let out = cmd.args(files).output().expect("breaker runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{files:?}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A catalog that claims every exception name the files use (this test is about settings,
/// not classification).
fn catalog_for(loader: &Loader, files: &[PathBuf]) -> ErrorCatalog {
    let loaded = loader.load_files(files).expect("loads");
    let mut names = loaded.config.unclaimed_in_catalog(&ErrorCatalog::new());
    names.extend(loaded.modules.retry.unclaimed_exception_names(&|_| false));
    names
        .into_iter()
        .fold(ErrorCatalog::new(), |c, n| c.acknowledge(n.name))
}

/// Every difference between what `check` printed for `name` and what its breaker reports.
fn differences(registry: &Registry, name: &str, printed: &Value, label: &str) -> Vec<String> {
    let breaker = registry.circuit_breaker(name);
    let reported = core_config_json(&breaker.config());
    let mut out = Vec::new();
    let (Value::Object(p), Value::Object(r)) = (printed, &reported) else {
        return vec![format!("{label}: {name}: check printed {printed}")];
    };
    for key in p.keys().chain(r.keys().filter(|k| !p.contains_key(*k))) {
        if p.get(key) != r.get(key) {
            out.push(format!(
                "{label}: {name}.{key}: check says {:?}, the breaker has {:?}",
                p.get(key),
                r.get(key)
            ));
        }
    }
    let size = printed["eventConsumerBufferSize"]
        .as_u64()
        .map(|s| s as usize);
    if registry.event_buffer_capacity(name) != size {
        out.push(format!(
            "{label}: {name}: event buffer of {:?}, check says {size:?}",
            registry.event_buffer_capacity(name)
        ));
    }
    out
}

fn compare(registry: &Registry, report: &Value, label: &str) -> Vec<String> {
    registry.enable_event_buffers();
    let mut diffs = Vec::new();
    for (name, printed) in report["instances"].as_object().expect("instances") {
        diffs.extend(differences(registry, name, printed, label));
    }
    assert!(report["instances"].get(UNLISTED).is_none());
    diffs.extend(differences(
        registry,
        UNLISTED,
        &report["defaultConfig"],
        label,
    ));
    diffs
}

#[test]
fn every_shared_fixture_gives_run_time_breakers_what_check_prints() {
    let mut cases = 0;
    let mut diffs = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("fixtures")
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".expected.json"))
        .collect();
    entries.sort();
    for expected in entries {
        let spec: Value = serde_json::from_str(&std::fs::read_to_string(&expected).unwrap())
            .expect("expected.json");
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        let files: Vec<PathBuf> = strings(&spec["files"])
            .iter()
            .map(|f| fixtures().join(f))
            .collect();
        let profiles = strings(&spec["profiles"]);
        let env: HashMap<String, String> = spec
            .get("env")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let report = check(&files, &profiles, &env);
        if report.get("loadError").is_some() {
            continue;
        }
        let loader = Loader::new().profiles(profiles.clone()).env(env.clone());
        let source = SpringConfig::files(&files)
            .loader(loader.clone())
            .catalog(catalog_for(&loader, &files));
        let label = expected.file_name().unwrap().to_string_lossy().to_string();
        let invalid = !report["errorDetails"].as_array().unwrap().is_empty();
        match source.registry() {
            Ok(registry) if !invalid => {
                cases += 1;
                diffs.extend(compare(&registry, &report, &label));
                // A reload of the same files changes nothing of that.
                let live = source.live().expect("live");
                live.reload().expect("reloads");
                diffs.extend(compare(
                    live.registry(),
                    &report,
                    &format!("{label} reloaded"),
                ));
            }
            Ok(_) => diffs.push(format!(
                "{label}: check reports errors, the registry loaded"
            )),
            Err(e) if !invalid => diffs.push(format!("{label}: check is clean, the registry: {e}")),
            Err(_) => {}
        }
    }
    assert!(cases >= 19, "only {cases} fixtures compared");
    assert!(
        diffs.is_empty(),
        "{} differences:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

/// The input: `configs.default` with `eventConsumerBufferSize: 10` gives a breaker
/// made at run time for an unlisted name a buffer of 10 events, not 100; a reload to 20
/// resizes it.
#[test]
fn an_unlisted_name_keeps_the_default_configs_event_buffer_size_across_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    let yaml = |size: u32| {
        format!(
            "resilience4j.circuitbreaker:\n  configs:\n    default:\n      eventConsumerBufferSize: {size}\n      registerHealthIndicator: true\n  instances:\n    listed:\n      eventConsumerBufferSize: 3\n"
        )
    };
    std::fs::write(&path, yaml(10)).unwrap();
    let report = check(std::slice::from_ref(&path), &[], &HashMap::new());
    assert_eq!(report["defaultConfig"]["eventConsumerBufferSize"], 10);
    let live = SpringConfig::file(&path).live().unwrap();
    let registry = live.registry();
    registry.enable_event_buffers();
    let any = registry.circuit_breaker("anyOtherName");
    for _ in 0..15 {
        any.try_acquire_permission().unwrap().on_success();
    }
    assert_eq!(registry.recent_events("anyOtherName").unwrap().len(), 10);
    let settings = any.config().instance_settings().clone();
    assert_eq!(settings.event_consumer_buffer_size, 10);
    assert!(settings.register_health_indicator);
    assert_eq!(registry.event_buffer_capacity("listed"), Some(3));

    std::fs::write(&path, yaml(20)).unwrap();
    let changes = live.reload().unwrap();
    assert!(
        changes
            .to_string()
            .contains("default.eventConsumerBufferSize: 10 -> 20"),
        "{changes}"
    );
    assert_eq!(
        any.config().instance_settings().event_consumer_buffer_size,
        20
    );
    assert_eq!(registry.event_buffer_capacity("anyOtherName"), Some(20));
    for _ in 0..30 {
        any.try_acquire_permission().unwrap().on_success();
    }
    assert_eq!(registry.recent_events("anyOtherName").unwrap().len(), 20);
}
