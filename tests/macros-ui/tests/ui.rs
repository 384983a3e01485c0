//! Compile-time behaviour of the resilience attributes: the forms they accept
//! (`tests/ui/pass`, each built and run) and the misuse they reject with a committed message
//! (`tests/ui/fail`).
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p
//! resilience4rs-macros-ui` on the toolchain pinned in `rust-toolchain.toml`, then read every
//! one.
//!
//! trybuild renders diagnostics its own way (it files them by test, normalises them and drops
//! repeats), so a committed `.stderr` could show fewer errors than `cargo build` prints. After
//! trybuild has run, [`every_error_is_committed`] builds the compile-fail cases again, as
//! trybuild does, and compares every distinct error `cargo build` prints (headline and
//! primary location; cargo prints a diagnostic repeated word for word once) with the
//! committed files, and checks that each case gets exactly one error.
//!
//! Build time: this package's dependencies are only what the cases use, and every cargo
//! command here (trybuild's and ours) gets the same flags through `CARGO_ENCODED_RUSTFLAGS`
//! (which overrides the `--config` flags trybuild passes), so the dependencies are built once
//! and the second build only compiles the failing cases again. No debug info is generated for
//! the cases (`CARGO_PROFILE_DEV_DEBUG=0`): nothing reads it, and it is most of the build's
//! size on disk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// trybuild's flags for its build of every case (`--cfg trybuild`, `--verbose`, `-A dead_code`,
/// `--diagnostic-width=140`), for every command, so nothing is built twice.
const RUSTFLAGS: &[&str] = &[
    "--cfg",
    "trybuild",
    "--verbose",
    "-A",
    "dead_code",
    "--diagnostic-width=140",
];

#[test]
fn ui() {
    // Read by every cargo that trybuild starts (it removes only `RUSTFLAGS`). Set before any
    // thread is started; this test binary runs this one test.
    std::env::set_var("CARGO_ENCODED_RUSTFLAGS", RUSTFLAGS.join("\x1f"));
    std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "0");
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
    drop(cases); // runs the cases
    every_error_is_committed();
}

/// One error: its headline (`error[E0277]: ...`) and primary location (`file:line:col`).
type Error = (String, String);

fn every_error_is_committed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .to_path_buf();
    let project = target
        .join("tests")
        .join("trybuild")
        .join(env!("CARGO_PKG_NAME"));
    let fail_dir = root.join("tests").join("ui").join("fail");

    let built = build_fail_cases(&project, &target.join("tests").join("trybuild"));
    let mut mismatches = Vec::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(&fail_dir).expect("tests/ui/fail") {
        let path = entry.expect("a directory entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let committed = committed_errors(&path.with_extension("stderr"));
        let printed = built
            .get(&std::fs::canonicalize(&path).expect("the case's path"))
            .cloned()
            .unwrap_or_default();
        let printed: Vec<Error> = printed
            .into_iter()
            .map(|(headline, location)| (headline, relative(&location, root)))
            .collect();
        checked += 1;
        if committed.len() != 1 {
            mismatches.push(format!(
                "{}: every misuse must get exactly one error, the committed file shows {}",
                path.display(),
                committed.len()
            ));
        }
        if sorted(&committed) != sorted(&printed) {
            mismatches.push(format!(
                "{}:\n  committed: {committed:#?}\n  cargo build: {printed:#?}",
                path.display()
            ));
        }
    }
    assert!(
        checked >= 30,
        "expected at least 30 compile-fail cases, found {checked}"
    );
    assert!(
        mismatches.is_empty(),
        "the committed .stderr files do not show every error `cargo build` prints:\n{}",
        mismatches.join("\n")
    );
}

/// Builds the bins of trybuild's project as trybuild does (its target, its flags, so nothing
/// else is rebuilt) and returns every error per source file, duplicates included.
fn build_fail_cases(project: &Path, target_dir: &Path) -> BTreeMap<PathBuf, Vec<Error>> {
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(project)
        .env("CARGO_TARGET_DIR", target_dir)
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("RUSTFLAGS")
        .arg("--offline")
        .args(["build", "--target", env!("UI_TARGET"), "--bins"])
        .args(["--quiet", "--color=never", "--keep-going"])
        .arg("--message-format=json")
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut errors: BTreeMap<PathBuf, Vec<Error>> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for line in stdout.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-message" || message["message"]["level"] != "error" {
            continue;
        }
        let Some(src) = message["target"]["src_path"].as_str() else {
            continue;
        };
        let rendered = message["message"]["rendered"].as_str().unwrap_or_default();
        if !seen.insert((
            message["target"]["src_path"].to_string(),
            rendered.to_string(),
        )) {
            continue; // cargo prints it once
        }
        let headline = rendered.lines().next().unwrap_or_default().to_string();
        if headline.starts_with("error: aborting") {
            continue;
        }
        let location = message["message"]["spans"]
            .as_array()
            .and_then(|spans| spans.iter().find(|s| s["is_primary"] == true))
            .map(|s| {
                format!(
                    "{}:{}:{}",
                    s["file_name"].as_str().unwrap_or_default(),
                    s["line_start"],
                    s["column_start"]
                )
            })
            .unwrap_or_default();
        let src = std::fs::canonicalize(src).unwrap_or_else(|_| PathBuf::from(src));
        errors.entry(src).or_default().push((headline, location));
    }
    errors
}

/// The errors a committed `.stderr` shows: each `error` line with the `-->` line after it.
fn committed_errors(stderr: &Path) -> Vec<Error> {
    let text = std::fs::read_to_string(stderr)
        .unwrap_or_else(|_| panic!("{} is committed", stderr.display()));
    let lines: Vec<&str> = text.lines().collect();
    let mut errors = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with("error") {
            continue;
        }
        let location = lines[i + 1..]
            .iter()
            .take_while(|l| !l.starts_with("error"))
            .find_map(|l| l.trim_start().strip_prefix("--> "))
            .unwrap_or_default()
            .to_string();
        errors.push((line.to_string(), location));
    }
    errors
}

/// `location` relative to the workspace root, as trybuild writes it.
fn relative(location: &str, root: &Path) -> String {
    let root = format!("{}/", root.display());
    location.strip_prefix(&root).unwrap_or(location).to_string()
}

fn sorted(errors: &[Error]) -> Vec<Error> {
    let mut errors = errors.to_vec();
    errors.sort();
    errors
}
