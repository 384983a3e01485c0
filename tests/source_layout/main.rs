//! House rules of the workspace's source layout (issue #25 items 2 and 3), checked on every
//! crate's `src/` (every `[workspace] members` entry and the facade):
//!
//! - no import cycle between the files of one crate (`use`, `crate::`/`super::` paths and
//!   re-exports, followed to the file defining the item);
//! - no file over [`MAX_LINES_OF_CODE`] lines of code (blank and comment lines not counted;
//!   sibling test and loom-model files that `#[cfg(test)] mod tests;` declares not counted).
//!
//! Crates being restructured are listed in the `PENDING_*` lists; a listed crate that has
//! become clean fails the check until it is taken off the list.

mod cycles;
mod lex;
mod lines;
mod self_test;
mod tree;

use std::path::Path;

/// The most lines of code one source file may hold (GUIDE.md: "files of at most ~600 lines
/// of code").
const MAX_LINES_OF_CODE: usize = 600;

/// Crates whose import cycles are being broken in other branches, each taken off when its
/// cycles are gone (issue #25 item 3):
/// - breaker-core: `bulkhead/{call, fleet, permit, semaphore_bulkhead, shared}`,
///   `ratelimiter/{call, limiter, shared}`, `retry/context` <-> `retry/instance`,
///   `deadline/mod` <-> `deadline/scope`, and `kernel/error_chain` <-> `kernel/throwable` <->
///   `retry/error` (the kernel naming a module's error);
/// - breaker-redis: `link` <-> `store` <-> `worker` <-> `hook` <-> `fleet` around `StoreInner`.
const PENDING_CYCLES: &[&str] = &["breaker-core", "breaker-redis"];

/// Crates whose long files are still to be split (none: issue #25 item 2 is done).
const PENDING_LONG_FILES: &[&str] = &[];

fn workspace() -> Vec<tree::Crate> {
    tree::workspace_crates(Path::new(env!("CARGO_MANIFEST_DIR")))
}

#[test]
fn no_import_cycle_between_files_of_a_crate() {
    let mut failures = Vec::new();
    let mut pending_seen = Vec::new();
    for c in workspace() {
        let found = cycles::cycles(&c);
        if PENDING_CYCLES.contains(&c.package.as_str()) {
            for cycle in &found {
                eprintln!("pending in {}: {}", c.package, describe(cycle));
            }
            if !found.is_empty() {
                pending_seen.push(c.package.clone());
            }
            continue;
        }
        for cycle in found {
            failures.push(format!("{}: {}", c.package, describe(&cycle)));
        }
    }
    for p in PENDING_CYCLES {
        if !pending_seen.iter().any(|s| s == p) {
            failures.push(format!(
                "{p} has no import cycle any more: take it off PENDING_CYCLES"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `a.rs, b.rs import each other: a.rs -> b.rs (line 3), ...`.
fn describe(cycle: &cycles::Cycle) -> String {
    format!(
        "{} import each other (move what both need to a module below them):\n    {}",
        cycle.files.join(", "),
        cycle.imports.join("\n    ")
    )
}

#[test]
fn no_file_over_the_line_limit() {
    let mut failures = Vec::new();
    let mut pending_seen = Vec::new();
    for c in workspace() {
        for (file, loc) in lines::lines_of_code(&c) {
            if loc <= MAX_LINES_OF_CODE {
                continue;
            }
            if PENDING_LONG_FILES.contains(&c.package.as_str()) {
                eprintln!("pending in {}: {file} has {loc} lines of code", c.package);
                pending_seen.push(c.package.clone());
            } else {
                failures.push(format!(
                    "{file} has {loc} lines of code, over {MAX_LINES_OF_CODE}: split it (tests to a sibling file)"
                ));
            }
        }
    }
    for p in PENDING_LONG_FILES {
        if !pending_seen.iter().any(|s| s == p) {
            failures.push(format!(
                "{p} has no file over the limit any more: take it off PENDING_LONG_FILES"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
