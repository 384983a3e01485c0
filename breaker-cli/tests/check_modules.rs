//! `breaker check` for the sections beside the circuit breaker: retry, time limiter, bulkhead,
//! thread-pool bulkhead, rate limiter and the aspect orders.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../breaker-config/tests/fixtures")
}

fn breaker(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_breaker"))
        .args(args)
        .env_remove("SPRING_PROFILES_ACTIVE")
        .output()
        .expect("runs")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

const KEYS: [&str; 6] = [
    "retry",
    "timelimiter",
    "bulkhead",
    "threadpoolbulkhead",
    "ratelimiter",
    "aspectOrder",
];

/// Every shared Spring file: `breaker check --json` prints exactly the objects of its
/// `NN.modules.expected.json` (values recorded from Resilience4j's Spring Boot support).
#[test]
fn every_shared_file_prints_its_modules_expected_json() {
    let dir = fixtures().join("shared");
    let mut cases = 0;
    let mut diffs = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".modules.expected.json"))
        .collect();
    names.sort();
    for path in names {
        cases += 1;
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let files: Vec<String> = expected["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| dir.join(f.as_str().unwrap()).display().to_string())
            .collect();
        let mut args = vec!["check", "--json"];
        args.extend(files.iter().map(String::as_str));
        let out = breaker(&args);
        let got = json(&out);
        for key in KEYS {
            if got[key] != expected[key] {
                diffs.push(format!(
                    "{}: {key}:\nexpected {}\ngot      {}",
                    path.display(),
                    expected[key],
                    got[key]
                ));
            }
        }
        // The circuit-breaker keys are still there, beside the modules.
        assert!(got["instances"].is_object() && got["defaultConfig"].is_object());
    }
    assert!(cases >= 19, "only {cases} shared files");
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

#[test]
fn json_sources_name_the_block_and_position_of_module_values() {
    let f = fixtures().join("shared/02_r4j_boot3_testsuite_backends_alias.yml");
    let out = breaker(&["check", "--json", f.to_str().unwrap()]);
    assert!(out.status.success());
    let v = json(&out);
    // retryBackendA: baseConfig sharedConfig, maxAttempts: 4 on line 12, column 20.
    let s = &v["moduleSources"]["retry"]["retryBackendA"]["maxAttempts"];
    assert_eq!(s["from"], "configs.sharedConfig");
    assert_eq!(s["at"], format!("{}:12:20", f.display()));
    // time-limiter-aspect-order: 398 on line 187, column 30.
    let o = &v["moduleSources"]["aspectOrder"]["timelimiter"];
    assert_eq!(o["from"], "file");
    assert_eq!(o["at"], format!("{}:187:30", f.display()));
    assert_eq!(
        v["moduleSources"]["bulkhead"]["<default>"]["maxConcurrentCalls"]["from"],
        "configs.default"
    );
}

#[test]
fn text_prints_every_module_instance_the_default_and_the_nesting() {
    let f = fixtures().join("shared/02_r4j_boot3_testsuite_backends_alias.yml");
    let out = breaker(&["check", f.to_str().unwrap()]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for title in [
        "Retry 'retryBackendC'  (inherits from library defaults)",
        "Retry 'retryBackendA'  (inherits from baseConfig: configs.sharedConfig)",
        "Time limiter 'backendA'  (inherits from configs.default)",
        "Bulkhead 'backendCustomizer'  (inherits from configs.default)",
        "Thread-pool bulkhead 'backendD'  (inherits from configs.default)",
        "Rate limiter 'backendB'  (inherits from configs.default)",
        "Rate limiter: any other name (default config)  (inherits from configs.default)",
        // 02 sets retry 399, circuit breaker 400, rate limiter 401, time limiter 398.
        "Aspect order, outermost layer first: timelimiter (398) > retry (399) > circuitbreaker (400) > ratelimiter (401) > bulkhead (2147483646)",
    ] {
        assert!(s.contains(title), "missing {title:?} in\n{s}");
    }
    assert!(
        s.contains("exponentialMaxWaitDuration       222 ms  [instance "),
        "{s}"
    );
    assert!(
        s.contains("limitRefreshPeriod          500 ms  [instance "),
        "{s}"
    );

    // A file without any module section says so in one line per module.
    let f = fixtures().join("shared/09_min_calls_equals_window_10000.properties");
    let out = breaker(&["check", f.to_str().unwrap()]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("Retry: none configured (any name gets Resilience4j's defaults)"),
        "{s}"
    );
}

#[test]
fn an_error_in_any_module_fails_the_check() {
    let f = fixtures().join("own/m09_limiter_bulkhead_timelimiter_errors.yml");
    let out = breaker(&["check", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "error: {}:10:25: resilience4j.ratelimiter.instances.zeroLimit.limitForPeriod = '0': Illegal argument limitForPeriod: 0 is less than 1",
            f.display()
        )),
        "{err}"
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("Rate limiter 'zeroLimit': INVALID"), "{s}");

    let out = breaker(&["check", "--json", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(
        v["bulkhead"]["errors"]["zeroCalls"],
        "maxConcurrentCalls must be greater than or equal to 1."
    );
    assert!(v["bulkhead"]["instances"].get("zeroCalls").is_none());
    assert_eq!(v["errorDetails"].as_array().unwrap().len(), 7);

    // An aspect order that is not a number fails too.
    let f = fixtures().join("own/m11_other_sections_and_orders.yml");
    let out = breaker(&["check", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(
        "resilience4j.retry.retryAspectOrder = 'first': Failed to convert 'first' to int"
    ));
}

#[test]
fn strict_counts_the_warnings_about_other_sections() {
    // 02 has a resilience4j.scheduled and a resilience4j.micrometer section (one warning each).
    let f = fixtures().join("shared/02_r4j_boot3_testsuite_backends_alias.yml");
    let out = breaker(&["check", "--json", f.to_str().unwrap()]);
    let warnings: Vec<String> = json(&out)["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    let sections: Vec<&String> = warnings
        .iter()
        .filter(|w| {
            w.contains(": resilience4j.scheduled: ") || w.contains(": resilience4j.micrometer: ")
        })
        .collect();
    assert_eq!(sections.len(), 2, "{warnings:#?}");
    let out = breaker(&["check", "--strict", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
}
