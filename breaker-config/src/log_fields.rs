//! List-valued fields of the reload log lines (`files`, `added`, `removed`).
//!
//! `tracing` records a field as a number, a bool, a string or a `Debug` text; only a
//! [`valuable`](https://docs.rs/valuable) value becomes structured data, and only when the
//! program is built with `RUSTFLAGS="--cfg tracing_unstable"` (tracing's unstable-feature
//! switch). So:
//!
//! - built with `--cfg tracing_unstable` and this crate's feature `valuable`, each list is
//!   recorded as a `valuable` list, which `tracing-subscriber`'s JSON formatter (with its
//!   own `valuable` feature) writes as a JSON array: `"files":["/srv/application.yml"]`;
//! - otherwise each list is recorded as its JSON text (`["/srv/application.yml"]`), which
//!   the JSON formatter writes as a string and a log pipeline can parse as JSON.

use std::fmt;

/// A list of strings, written as a JSON array.
pub(crate) struct JsonList<'a>(pub(crate) &'a [String]);

impl fmt::Display for JsonList<'_> {
    /// The JSON array text, e.g. `["a.yml","b.yml"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_string(self.0).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

/// The field value of `list`: a `valuable` list (a JSON array in the JSON formatter).
#[cfg(all(tracing_unstable, feature = "valuable"))]
#[allow(clippy::ptr_arg)] // `valuable` lists a `Vec`, not a slice.
pub(crate) fn list(list: &Vec<String>) -> valuable::Value<'_> {
    valuable::Valuable::as_value(list)
}

/// The field value of `list`: its JSON array text.
#[cfg(not(all(tracing_unstable, feature = "valuable")))]
pub(crate) fn list(list: &[String]) -> tracing::field::DisplayValue<JsonList<'_>> {
    tracing::field::display(JsonList(list))
}

/// Paths as the strings a log line shows.
pub(crate) fn paths(paths: &[std::path::PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.display().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_text_is_an_array_of_the_strings() {
        let v = vec!["/srv/a \"b\".yml".to_string(), "c.yml".to_string()];
        let parsed: serde_json::Value = serde_json::from_str(&JsonList(&v).to_string()).unwrap();
        assert_eq!(parsed, serde_json::json!(["/srv/a \"b\".yml", "c.yml"]));
        assert_eq!(JsonList(&[]).to_string(), "[]");
    }
}
