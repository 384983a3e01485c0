//! `${NAME}` and `${NAME:default}` placeholders, resolved as Spring Boot's binder does
//! (`PropertySourcesPlaceholdersResolver`, a `PropertyPlaceholderHelper` with
//! `ignoreUnresolvablePlaceholders = true`): against the whole environment in precedence order
//! (command line, `SPRING_APPLICATION_JSON`, environment variables, then the files, relaxed
//! names); defaults and keys may nest placeholders. A placeholder that resolves nowhere and has
//! no default stays as the literal text `${NAME}` (the value then converts, or fails to, as
//! that text); a circular reference is an error, as in Spring.

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
    /// Replaces every placeholder in `value` that resolves; the others stay as written. The
    /// error is Spring's message for a circular reference
    /// (`Circular placeholder reference 'a' in property definitions`) or a budget exceeded.
    pub fn resolve(&self, value: &str) -> Result<String, String> {
        self.resolve_noting(value, &mut Vec::new())
    }

    /// [`resolve`](Self::resolve), adding to `unresolved` the name of every placeholder left
    /// as written (each once).
    pub fn resolve_noting(
        &self,
        value: &str,
        unresolved: &mut Vec<String>,
    ) -> Result<String, String> {
        if !value.contains("${") {
            return Ok(value.to_string());
        }
        let mut visiting = Vec::new();
        self.expand(value, &mut visiting, 0, unresolved)
    }

    /// The value of `key` in the highest-precedence source that has it. The environment
    /// variables are looked up by Spring's `SystemEnvironmentPropertySource` rules (the name
    /// as is, `.` -> `_`, `-` -> `_`, upper case) where the environment document ranks (or
    /// first, when the documents hold none).
    fn lookup(&self, key: &str) -> Option<String> {
        let name = parse_name(key);
        let has_env_doc = self
            .docs
            .iter()
            .any(|d| &*d.file == crate::sources::names::ENV_DOCUMENT);
        if !has_env_doc {
            if let Some(v) = self.lookup_env(key) {
                return Some(v);
            }
        }
        for d in self.docs.iter().rev() {
            if &*d.file == crate::sources::names::ENV_DOCUMENT {
                if let Some(v) = self.lookup_env(key) {
                    return Some(v);
                }
            } else if !name.is_empty() {
                if let Some(p) = d.get(&name) {
                    return Some(p.value.clone());
                }
            }
        }
        None
    }

    fn lookup_env(&self, key: &str) -> Option<String> {
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
        None
    }

    fn expand(
        &self,
        value: &str,
        visiting: &mut Vec<String>,
        depth: usize,
        unresolved: &mut Vec<String>,
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
            let written = &rest[start..inner_start + end + 1];
            rest = &rest[inner_start + end + 1..];
            self.work.set(self.work.get() + 1);
            if self.work.get() > MAX_EXPANSIONS {
                return Err(format!("more than {MAX_EXPANSIONS} placeholder expansions"));
            }
            let (raw_key, default) = split_default(inner);
            let key = self.expand(raw_key, visiting, depth + 1, unresolved)?;
            if visiting.contains(&key) {
                return Err(format!(
                    "Circular placeholder reference '{key}' in property definitions"
                ));
            }
            let replacement = match self.lookup(&key) {
                Some(found) => {
                    visiting.push(key.clone());
                    let r = self.expand(&found, visiting, depth + 1, unresolved);
                    visiting.pop();
                    r?
                }
                None => match default {
                    Some(d) => self.expand(d, visiting, depth + 1, unresolved)?,
                    None => {
                        // Spring's binder ignores unresolvable placeholders: the text stays.
                        if !unresolved.contains(&key) {
                            unresolved.push(key);
                        }
                        written.to_string()
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
#[path = "placeholders_tests.rs"]
mod tests;
