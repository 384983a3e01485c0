//! Plumbing shared by breaker-core's integration tests: polling futures by hand, and the
//! module conformance runners' files (where the vectors are, listing and reading them,
//! checking a rejected config against the vector's expectation, replaying a folder in the
//! mode each vector asks for).
//!
//! Each test crate includes it with `mod common;` and uses what it needs.

#![allow(dead_code)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use breaker_core::ConfigError;
use serde_json::Value;

struct Noop;

impl Wake for Noop {
    fn wake(self: Arc<Self>) {}
}

/// A waker that does nothing (`Waker::noop` is newer than the MSRV).
pub fn noop_waker() -> Waker {
    Waker::from(Arc::new(Noop))
}

/// Polls `f` once with a [`noop_waker`].
pub fn poll<F: Future + ?Sized>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(&noop_waker()))
}

/// The environment variable naming a folder laid out like `tests/data/conformance` (one
/// subfolder per module) whose vectors the module runners replay instead of the shipped
/// ones.
pub const MODULES_DIR_VAR: &str = "BREAKER_CONFORMANCE_MODULES_DIR";

/// Whether [`MODULES_DIR_VAR`] points the runners at another set of vectors (then the
/// counts of shipped vectors are not checked).
pub fn modules_dir_overridden() -> bool {
    std::env::var_os(MODULES_DIR_VAR).is_some()
}

/// The folder holding one subfolder of vectors per module: [`MODULES_DIR_VAR`], else the
/// repository's `tests/data/conformance`.
pub fn modules_dir() -> PathBuf {
    match std::env::var_os(MODULES_DIR_VAR) {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/conformance"),
    }
}

/// The `.json` files of `dir` whose names start with `prefix`, sorted.
///
/// # Panics
/// When `dir` cannot be read.
pub fn json_files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    v.sort();
    v
}

/// The JSON document in `path`.
///
/// # Panics
/// When it cannot be read or parsed, naming the file.
pub fn load(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// How a rejected config differs from an invalid-config vector of
/// `resilience4j-invalid-modules/`: Resilience4j's message (`expect_error`), the invalid
/// property (`invalid_property`), with `exception` also its exception class
/// (`expect_exception`), and Java's `null` (a `NullPointerException` vector) reported with
/// the value `null`. Empty when it matches.
pub fn invalid_config_diffs(case: &Value, e: &ConfigError, exception: bool) -> Vec<String> {
    let mut diffs = Vec::new();
    let mut checks = vec![
        ("message", &case["expect_error"], e.message()),
        ("setting", &case["invalid_property"], e.setting()),
    ];
    if exception {
        checks.push(("exception", &case["expect_exception"], e.exception()));
    }
    for (what, expected, got) in checks {
        if expected.as_str() != Some(got) {
            diffs.push(format!("{what}: expected {expected}, got {got:?}"));
        }
    }
    let null = case["expect_exception"] == "NullPointerException";
    if null != (e.value() == "null") {
        diffs.push(format!(
            "value {:?} for {}",
            e.value(),
            case["expect_exception"]
        ));
    }
    diffs
}

/// Adds `<what>: expected <expected>, got <got>` to `diffs` when a step's expected value
/// and the observed one differ.
pub fn compare(diffs: &mut Vec<String>, what: &str, expected: &Value, got: &Value) {
    if expected != got {
        diffs.push(format!("{what}: expected {expected}, got {got}"));
    }
}

/// The outcome of step `index` of a vector: `Err("step 3 (t_ms=20, op=acquire, call=2):
/// <diffs>")` when anything differed.
pub fn step_outcome(
    index: usize,
    step: &Value,
    op: &str,
    call: Option<u64>,
    diffs: &[String],
) -> Result<(), String> {
    if diffs.is_empty() {
        return Ok(());
    }
    Err(format!(
        "step {index} (t_ms={}, op={op}{}): {}",
        step["t_ms"],
        call.map(|c| format!(", call={c}")).unwrap_or_default(),
        diffs.join("; ")
    ))
}

/// Replays every vector of the module folder `module` (e.g. `resilience4j-bulkhead`) in the
/// mode its own content asks for (`needs_exact_mode`, which never reads the file name), and
/// again in exact Resilience4j mode, which is Resilience4j itself and must reproduce every
/// vector too. `what` names the vectors in messages (`bulkhead`). Returns how many were
/// replayed.
///
/// # Panics
/// When the folder holds no vector, or any replay differs (listing every difference).
pub fn replay_module_vectors(
    module: &str,
    what: &str,
    needs_exact_mode: impl Fn(&Value) -> bool,
    replay: impl Fn(&Value, bool) -> Result<(), String>,
) -> usize {
    let dir = modules_dir().join(module);
    let files = json_files(&dir, "");
    assert!(!files.is_empty(), "no cases in {}", dir.display());
    let mut failures = Vec::new();
    let mut exact = 0;
    for f in &files {
        let case = load(f);
        let mode = needs_exact_mode(&case);
        exact += usize::from(mode);
        let r = replay(&case, mode).and_then(|()| {
            replay(&case, true).map_err(|e| format!("in exact Resilience4j mode: {e}"))
        });
        if let Err(e) = r {
            failures.push(format!("{}: {e}", case["name"].as_str().unwrap_or("?")));
        }
    }
    eprintln!(
        "replayed {} {what} vectors ({exact} in exact Resilience4j mode) from {}",
        files.len(),
        dir.display()
    );
    assert!(
        failures.is_empty(),
        "{} of {} {what} vectors differ from Resilience4j:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    files.len()
}
