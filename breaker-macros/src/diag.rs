//! Diagnostics: how errors leave the macro, and "did you mean" suggestions.

use proc_macro2::TokenStream;

/// Emits the error(s) *and* the item unchanged, so the rest of the crate still type-checks and
/// the IDE keeps its completions while the attribute is wrong.
pub fn with_item(error: syn::Error, item: TokenStream) -> TokenStream {
    let mut out = error.to_compile_error();
    out.extend(item);
    out
}

/// The closest of `candidates` to `word` (case-insensitive edit distance of at most 2, and
/// less than half the word), if any.
pub fn suggest(word: &str, candidates: &[&'static str]) -> Option<&'static str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (edit_distance(&lower, c), *c))
        .filter(|(d, _)| *d <= 2 && *d * 2 < word.len().max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance over chars where swapping two neighbours counts as one edit
/// (optimal string alignment), so `nmae` is one edit from `name`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("name", "name"), 0);
        assert_eq!(edit_distance("nmae", "name"), 1);
        assert_eq!(edit_distance("fallbak", "fallback"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn suggestions() {
        let known = &["name", "fallback", "registry"];
        assert_eq!(suggest("Name", known), Some("name"));
        assert_eq!(suggest("fallbak", known), Some("fallback"));
        assert_eq!(suggest("registy", known), Some("registry"));
        assert_eq!(suggest("timeout", known), None);
        assert_eq!(suggest("x", known), None);
    }
}
