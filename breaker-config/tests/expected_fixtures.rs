//! Data-driven: every `NN.expected.json` in the fixture directories loads its "files" with
//! its "profiles" and must resolve to exactly the listed instances, errors and default config.
//! `BREAKER_CONFIG_FIXTURES_DIR` points the same test at another directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use breaker_config::{json, Loader};
use serde_json::Value;

fn dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = vec![root.join("shared"), root.join("own")];
    if let Ok(extra) = std::env::var("BREAKER_CONFIG_FIXTURES_DIR") {
        out = vec![PathBuf::from(extra)];
    }
    out
}

fn same_number(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-6 * x.abs().max(1.0),
        _ => false,
    }
}

/// Compares every key of `expected` with `actual`; returns the differences.
fn compare(path: &str, expected: &Value, actual: &Value, diffs: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                match a.get(k) {
                    Some(av) => compare(&format!("{path}.{k}"), ev, av, diffs),
                    None => diffs.push(format!("{path}.{k}: missing, expected {ev}")),
                }
            }
        }
        (Value::Number(_), Value::Number(_)) if same_number(expected, actual) => {}
        _ if expected == actual => {}
        _ => diffs.push(format!("{path}: expected {expected}, got {actual}")),
    }
}

/// Removes the fixture directory from messages, so they name the file as the fixture does.
fn strip(message: &str, dir: &Path) -> String {
    message.replace(&format!("{}/", dir.display()), "")
}

/// When the expectations list `key` (e.g. `warnings`), checks that `got` (file paths made
/// relative to `dir`) are exactly those lines, in order.
fn compare_lines(
    base: &str,
    key: &str,
    expected: &Value,
    got: &[String],
    dir: &Path,
    diffs: &mut Vec<String>,
) {
    let Some(w) = expected.get(key).and_then(Value::as_array) else {
        return;
    };
    let got: Vec<String> = got.iter().map(|g| strip(g, dir)).collect();
    let want: Vec<String> = w
        .iter()
        .filter_map(|x| x.as_str().map(String::from))
        .collect();
    if got != want {
        diffs.push(format!("{base}: {key}: expected {want:#?}, got {got:#?}"));
    }
}

fn run_case(dir: &Path, expected_file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(expected_file).expect("readable expected.json");
    let expected: Value = serde_json::from_str(&text).expect("valid expected.json");
    let files: Vec<PathBuf> = expected["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| dir.join(f.as_str().expect("file name")))
        .collect();
    let profiles: Vec<String> = expected["profiles"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let env: HashMap<String, String> = expected
        .get("env")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let name = expected_file.display().to_string();
    let loaded = match Loader::new().profiles(profiles).env(env).load_files(&files) {
        Ok(l) => l,
        Err(e) => {
            let got = strip(&e.to_string(), dir);
            if let Some(want) = expected.get("loadError").and_then(Value::as_str) {
                return if got == want {
                    vec![]
                } else {
                    vec![format!("{name}: load error: expected {want}, got {got}")]
                };
            }
            if let Some(parts) = expected.get("loadErrorContains").and_then(Value::as_array) {
                let missing: Vec<&str> = parts
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|p| !got.contains(p))
                    .collect();
                return if missing.is_empty() {
                    vec![]
                } else {
                    vec![format!("{name}: load error {got} lacks {missing:?}")]
                };
            }
            return vec![format!("{name}: load failed: {got}")];
        }
    };
    if let Some(want) = expected
        .get("loadError")
        .or_else(|| expected.get("loadErrorContains"))
    {
        return vec![format!("{name}: expected load error {want}, but it loaded")];
    }
    let report = json::report(&loaded);
    let mut diffs = Vec::new();
    let base = name.clone();
    // Instances and errors must match as sets of names, then value by value.
    for key in ["instances", "errors"] {
        let e = expected
            .get(key)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let a = report[key].as_object().cloned().unwrap_or_default();
        let mut en: Vec<&String> = e.keys().collect();
        let mut an: Vec<&String> = a.keys().collect();
        en.sort();
        an.sort();
        if en != an {
            diffs.push(format!("{base}: {key} names: expected {en:?}, got {an:?}"));
        }
        compare(
            &format!("{base}: {key}"),
            &Value::Object(e),
            &report[key],
            &mut diffs,
        );
    }
    if let Some(d) = expected.get("defaultConfig") {
        compare(
            &format!("{base}: defaultConfig"),
            d,
            &report["defaultConfig"],
            &mut diffs,
        );
    }
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    compare_lines(&base, "warnings", &expected, &warnings, dir, &mut diffs);
    let errors: Vec<String> = loaded.errors().iter().map(ToString::to_string).collect();
    compare_lines(&base, "errorDetails", &expected, &errors, dir, &mut diffs);
    diffs
}

#[test]
fn every_fixture_resolves_to_its_expected_values() {
    let mut cases = 0;
    let mut diffs = Vec::new();
    for dir in dirs() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files {
            if f.to_string_lossy().ends_with(".expected.json") {
                cases += 1;
                diffs.extend(run_case(&dir, &f));
            }
        }
    }
    assert!(cases >= 19 + 25, "only {cases} fixture cases found");
    assert!(
        diffs.is_empty(),
        "{} differences:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}
