//! The checks themselves, on a small made-up workspace: they must find what they look for
//! and nothing else.

use std::fs;
use std::path::Path;

use crate::{cycles, lines, tree};

fn write(root: &Path, file: &str, text: &str) {
    let path = root.join(file);
    fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    fs::write(path, text).expect("write");
}

/// `a`: `x` <-> `y` through a `use` and a `super::` path (the cycle); `lib.rs` re-exports
/// `z` and `z` uses `lib.rs`'s item `Root` (a re-export of one's own file is not an import,
/// so no cycle); `w` names `y` only in a comment, a string and `quote!` (no import).
fn fixture(root: &Path) {
    write(
        root,
        "Cargo.toml",
        "[workspace]\nmembers = [\"a\"]\n\n[package]\nname = \"f\"\n",
    );
    write(root, "src/lib.rs", "//! empty\n");
    write(
        root,
        "a/src/lib.rs",
        "mod w;\nmod x;\nmod y;\nmod z;\npub use z::Z;\npub struct Root;\n",
    );
    write(root, "a/src/x.rs", "use crate::y::Y;\npub struct X(Y);\n");
    write(
        root,
        "a/src/y.rs",
        "pub struct Y;\nfn f() -> usize {\n    std::mem::size_of::<super::x::X>()\n}\n",
    );
    write(root, "a/src/z.rs", "pub struct Z(crate::Root);\n");
    write(
        root,
        "a/src/w.rs",
        "// crate::x::X\n/// crate::y::Y\nconst S: &str = \"crate::y::Y\";\nfn g() { quote!(crate::y::Y); }\n",
    );
}

#[test]
fn finds_a_cycle_between_two_files_and_nothing_else() {
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let crates = tree::workspace_crates(dir.path());
    assert_eq!(crates.len(), 2, "the root package and `a`");
    let a = crates.iter().find(|c| c.package == "a").expect("crate a");
    let found = cycles::cycles(a);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].files, ["a/src/x.rs", "a/src/y.rs"]);
    assert_eq!(
        found[0].imports,
        [
            "a/src/x.rs -> a/src/y.rs (line 1)",
            "a/src/y.rs -> a/src/x.rs (line 3)"
        ]
    );
}

#[test]
fn counts_lines_of_code_without_comments_blanks_or_sibling_tests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "Cargo.toml", "[workspace]\nmembers = [\"b\"]\n");
    // 5 lines of code (the two-line string counts twice, the attribute once), 4 comment
    // lines, 2 blank lines; `tests.rs` is a sibling test file.
    let code = "//! doc\n\n/* block\n   comment */\nconst S: &str = \"two\nlines\";\n\n// note\nfn f() {}\n#[cfg(test)]\nmod tests;\n";
    write(root, "b/src/lib.rs", code);
    write(root, "b/src/tests.rs", "fn t() {}\nfn u() {}\n");
    let crates = tree::workspace_crates(root);
    let b = crates.iter().find(|c| c.package == "b").expect("crate b");
    assert_eq!(lines::lines_of_code(b), [("b/src/lib.rs".to_string(), 5)]);
}
