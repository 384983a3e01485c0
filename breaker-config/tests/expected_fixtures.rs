//! Data-driven: every `NN.expected.json` in the fixture directories loads its "files" with
//! its "profiles" and must resolve to exactly the listed instances, errors and default config;
//! every `NN.modules.expected.json` likewise for the retry, time-limiter, bulkhead,
//! thread-pool-bulkhead and rate-limiter sections and the aspect orders.
//! `BREAKER_CONFIG_FIXTURES_DIR` points the same tests at another directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use breaker_config::{json, Loaded, Loader};
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

/// Compares `report[key]` with `expected[key]` when the expectations have it: the same
/// names, then value by value.
fn compare_named(base: &str, key: &str, expected: &Value, report: &Value, diffs: &mut Vec<String>) {
    let Some(e) = expected.get(key) else {
        return;
    };
    let e = e.as_object().cloned().unwrap_or_default();
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
        diffs,
    );
}

/// Loads the case's files; `Err` holds the differences when loading did not go as expected
/// (including an expected load error, which ends the case with no differences).
fn load_case(dir: &Path, expected: &Value, name: &str) -> Result<Loaded, Vec<String>> {
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
    let loaded = match Loader::new().profiles(profiles).env(env).load_files(&files) {
        Ok(l) => l,
        Err(e) => {
            let got = strip(&e.to_string(), dir);
            if let Some(want) = expected.get("loadError").and_then(Value::as_str) {
                return Err(if got == want {
                    vec![]
                } else {
                    vec![format!("{name}: load error: expected {want}, got {got}")]
                });
            }
            if let Some(parts) = expected.get("loadErrorContains").and_then(Value::as_array) {
                let missing: Vec<&str> = parts
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|p| !got.contains(p))
                    .collect();
                return Err(if missing.is_empty() {
                    vec![]
                } else {
                    vec![format!("{name}: load error {got} lacks {missing:?}")]
                });
            }
            return Err(vec![format!("{name}: load failed: {got}")]);
        }
    };
    if let Some(want) = expected
        .get("loadError")
        .or_else(|| expected.get("loadErrorContains"))
    {
        return Err(vec![format!(
            "{name}: expected load error {want}, but it loaded"
        )]);
    }
    Ok(loaded)
}

fn read_expected(expected_file: &Path) -> Value {
    let text = std::fs::read_to_string(expected_file).expect("readable expected.json");
    serde_json::from_str(&text).expect("valid expected.json")
}

/// The warnings and every error as lines, compared when the expectations list them.
fn compare_messages(
    base: &str,
    expected: &Value,
    loaded: &Loaded,
    dir: &Path,
    diffs: &mut Vec<String>,
) {
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    compare_lines(base, "warnings", expected, &warnings, dir, diffs);
    let errors: Vec<String> = loaded.errors().iter().map(ToString::to_string).collect();
    compare_lines(base, "errorDetails", expected, &errors, dir, diffs);
}

fn run_case(dir: &Path, expected_file: &Path) -> Vec<String> {
    let expected = read_expected(expected_file);
    let name = expected_file.display().to_string();
    let loaded = match load_case(dir, &expected, &name) {
        Ok(l) => l,
        Err(diffs) => return diffs,
    };
    let report = json::report(&loaded);
    let mut diffs = Vec::new();
    let base = name.clone();
    // Instances and errors must match as sets of names, then value by value.
    for key in ["instances", "errors"] {
        let mut e = expected.clone();
        if e.get(key).is_none() {
            e[key] = serde_json::json!({});
        }
        compare_named(&base, key, &e, &report, &mut diffs);
    }
    if let Some(d) = expected.get("defaultConfig") {
        compare(
            &format!("{base}: defaultConfig"),
            d,
            &report["defaultConfig"],
            &mut diffs,
        );
    }
    compare_messages(&base, &expected, &loaded, dir, &mut diffs);
    diffs
}

/// The five module objects of `NN.modules.expected.json`.
const MODULES: [&str; 5] = [
    "retry",
    "timelimiter",
    "bulkhead",
    "threadpoolbulkhead",
    "ratelimiter",
];

fn run_modules_case(dir: &Path, expected_file: &Path) -> Vec<String> {
    let expected = read_expected(expected_file);
    let name = expected_file.display().to_string();
    let loaded = match load_case(dir, &expected, &name) {
        Ok(l) => l,
        Err(diffs) => return diffs,
    };
    let report = json::report(&loaded);
    let mut diffs = Vec::new();
    for module in MODULES {
        let Some(want) = expected.get(module) else {
            continue;
        };
        let base = format!("{name}: {module}");
        let got = &report[module];
        compare_named(&base, "instances", want, got, &mut diffs);
        compare_named(&base, "errors", want, got, &mut diffs);
        if let Some(d) = want.get("defaultConfig") {
            compare(
                &format!("{base}: defaultConfig"),
                d,
                &got["defaultConfig"],
                &mut diffs,
            );
        }
    }
    if let Some(a) = expected.get("aspectOrder") {
        compare(
            &format!("{name}: aspectOrder"),
            a,
            &report["aspectOrder"],
            &mut diffs,
        );
    }
    compare_messages(&name, &expected, &loaded, dir, &mut diffs);
    diffs
}

/// Runs `run` on every file of the fixture directories whose name ends with `suffix` and not
/// with any of `except`; returns the number of cases and the differences.
fn run_all(
    suffix: &str,
    except: &[&str],
    run: fn(&Path, &Path) -> Vec<String>,
) -> (usize, Vec<String>) {
    let mut cases = 0;
    let mut diffs = Vec::new();
    for dir in dirs() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files {
            let name = f.to_string_lossy();
            if name.ends_with(suffix) && !except.iter().any(|x| name.ends_with(x)) {
                cases += 1;
                diffs.extend(run(&dir, &f));
            }
        }
    }
    (cases, diffs)
}

#[test]
fn every_fixture_resolves_to_its_expected_values() {
    let (cases, diffs) = run_all(".expected.json", &[".modules.expected.json"], run_case);
    assert!(cases >= 19 + 25, "only {cases} fixture cases found");
    assert!(
        diffs.is_empty(),
        "{} differences:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

#[test]
fn every_fixture_resolves_its_other_modules_to_the_expected_values() {
    let (cases, diffs) = run_all(".modules.expected.json", &[], run_modules_case);
    assert!(cases >= 19, "only {cases} module fixture cases found");
    assert!(
        diffs.is_empty(),
        "{} differences:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}
