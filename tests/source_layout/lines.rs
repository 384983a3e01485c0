//! Lines of code per source file: lines holding anything but whitespace and comments (doc
//! comments included), counted for every file but the sibling test and model files that a
//! `#[cfg(test)]`/`#[cfg(loom)]` `mod x;` declares.

use crate::tree::Crate;

/// `(file, lines of code)` for each file of `c` that is not a sibling test file.
pub fn lines_of_code(c: &Crate) -> Vec<(String, usize)> {
    c.files
        .iter()
        .filter(|f| !f.test_only)
        .map(|f| {
            (
                f.path.clone(),
                f.lexed.code_lines.iter().filter(|&&code| code).count(),
            )
        })
        .collect()
}
