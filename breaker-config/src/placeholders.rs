//! `${NAME}` and `${NAME:default}` placeholders, resolved as Spring's
//! `PropertyPlaceholderHelper` does: from environment variables first, then from the other
//! keys of the loaded files (relaxed names); defaults and keys may nest placeholders.

use std::collections::HashMap;

use crate::limits::Limits;
use crate::property::{parse_name, Document};

/// Resolves placeholders against environment variables and the active documents.
pub(crate) struct Resolver<'a> {
    /// Environment variables.
    pub env: &'a HashMap<String, String>,
    /// Active documents, lowest precedence first.
    pub docs: &'a [&'a Document],
    /// Budgets.
    pub limits: &'a Limits,
    /// Placeholders expanded so far (bounded to stop exponential expansion).
    pub work: std::cell::Cell<usize>,
}

/// Most placeholder expansions for one load.
const MAX_EXPANSIONS: usize = 10_000;

impl Resolver<'_> {
    /// Replaces every placeholder in `value`. The error is Spring's message, e.g.
    /// `Could not resolve placeholder 'HOST' in value "${HOST}"`.
    pub fn resolve(&self, value: &str) -> Result<String, String> {
        if !value.contains("${") {
            return Ok(value.to_string());
        }
        let mut visiting = Vec::new();
        self.expand(value, &mut visiting, 0)
    }

    fn lookup(&self, key: &str) -> Option<String> {
        let dotted = key.replace('.', "_");
        let candidates = [
            key.to_string(),
            dotted.clone(),
            key.replace('-', "_"),
            dotted.replace('-', "_"),
        ];
        for c in candidates.iter() {
            if let Some(v) = self
                .env
                .get(c)
                .or_else(|| self.env.get(&c.to_ascii_uppercase()))
            {
                return Some(v.clone());
            }
        }
        let name = parse_name(key);
        if name.is_empty() {
            return None;
        }
        self.docs
            .iter()
            .rev()
            .find_map(|d| d.get(&name))
            .map(|p| p.value.clone())
    }

    fn expand(
        &self,
        value: &str,
        visiting: &mut Vec<String>,
        depth: usize,
    ) -> Result<String, String> {
        if depth > self.limits.max_placeholder_depth {
            return Err(format!(
                "placeholders nested more than {} levels deep in value \"{value}\"",
                self.limits.max_placeholder_depth
            ));
        }
        let mut out = String::new();
        let mut rest = value;
        while let Some(start) = rest.find("${") {
            if start > 0 && rest[..start].ends_with('\\') {
                out.push_str(&rest[..start - 1]);
                out.push_str("${");
                rest = &rest[start + 2..];
                continue;
            }
            out.push_str(&rest[..start]);
            let inner_start = start + 2;
            let Some(end) = matching_end(&rest[inner_start..]) else {
                out.push_str(&rest[start..]);
                rest = "";
                break;
            };
            let inner = &rest[inner_start..inner_start + end];
            rest = &rest[inner_start + end + 1..];
            self.work.set(self.work.get() + 1);
            if self.work.get() > MAX_EXPANSIONS {
                return Err(format!("more than {MAX_EXPANSIONS} placeholder expansions"));
            }
            let (raw_key, default) = split_default(inner);
            let key = self.expand(raw_key, visiting, depth + 1)?;
            if visiting.contains(&key) {
                return Err(format!(
                    "Circular placeholder reference '{key}' in property definitions"
                ));
            }
            let replacement = match self.lookup(&key) {
                Some(found) => {
                    visiting.push(key.clone());
                    let r = self.expand(&found, visiting, depth + 1);
                    visiting.pop();
                    r?
                }
                None => match default {
                    Some(d) => self.expand(d, visiting, depth + 1)?,
                    None => {
                        return Err(format!(
                            "Could not resolve placeholder '{key}' in value \"{value}\""
                        ))
                    }
                },
            };
            out.push_str(&replacement);
            if out.len() > self.limits.max_placeholder_bytes {
                return Err(format!(
                    "placeholders expand to more than {} bytes",
                    self.limits.max_placeholder_bytes
                ));
            }
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// Index of the `}` closing a placeholder whose content starts at `s[0]`, counting nested braces.
fn matching_end(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Splits `key:default` at the first `:` outside nested placeholders.
fn split_default(inner: &str) -> (&str, Option<&str>) {
    let mut depth = 0usize;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ':' if depth == 0 => return (&inner[..i], Some(&inner[i + 1..])),
            _ => {}
        }
    }
    (inner, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use crate::property::{Property, ValueKind};
    use std::sync::Arc;

    fn doc(pairs: &[(&str, &str)]) -> Document {
        let f: Arc<str> = Arc::from("t");
        Document {
            file: f.clone(),
            index: 0,
            properties: pairs
                .iter()
                .map(|(k, v)| {
                    let o = Origin::new(f.clone(), 1, 1);
                    Property::new(k.to_string(), v.to_string(), ValueKind::Str, o.clone(), o)
                })
                .collect(),
        }
    }

    #[test]
    fn env_file_defaults_nesting_and_errors() {
        let env: HashMap<String, String> = [("WAIT_MS".to_string(), "7s".to_string())]
            .into_iter()
            .collect();
        let d = doc(&[
            ("app.wait", "${WAIT_MS}"),
            ("app.size", "12"),
            ("loop.a", "${loop.b}"),
            ("loop.b", "${loop.a}"),
        ]);
        let docs = [&d];
        let limits = Limits::default();
        let r = Resolver {
            env: &env,
            docs: &docs,
            limits: &limits,
            work: Default::default(),
        };
        assert_eq!(r.resolve("${wait.ms}").unwrap(), "7s");
        assert_eq!(r.resolve("${app.size}").unwrap(), "12");
        assert_eq!(r.resolve("${app.wait}").unwrap(), "7s");
        assert_eq!(r.resolve("${missing:5s}").unwrap(), "5s");
        assert_eq!(r.resolve("${missing:${app.size}}").unwrap(), "12");
        assert_eq!(r.resolve("x${app.size}y").unwrap(), "x12y");
        assert_eq!(
            r.resolve("${nope}").unwrap_err(),
            "Could not resolve placeholder 'nope' in value \"${nope}\""
        );
        assert_eq!(
            r.resolve("${loop.a}").unwrap_err(),
            "Circular placeholder reference 'loop.a' in property definitions"
        );
    }
}
