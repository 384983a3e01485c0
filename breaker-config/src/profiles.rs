//! Spring profiles: which documents are active. A document with
//! `spring.config.activate.on-profile` (or the older `spring.profiles`) applies only when its
//! profile expression (`prod`, `!dev`, `prod & eu`, `(a | b)`, lists) matches an active profile;
//! with no active profile, the `default` profile is active.

use crate::convert::class_list;
use crate::error::Warning;
use crate::property::{names_equal, parse_name, Document};

/// The profiles a load runs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActiveProfiles {
    /// The active profile names (`["default"]` when none was chosen).
    pub names: Vec<String>,
}

impl ActiveProfiles {
    /// Chooses the active profiles: the explicit list if any, else `SPRING_PROFILES_ACTIVE`,
    /// else `spring.profiles.active` from the files' unconditional documents, else
    /// `spring.profiles.default` (itself `default` when unset). As Spring Boot does, the
    /// profiles of `spring.profiles.include` are added, every profile is expanded with its
    /// `spring.profiles.group` members, and placeholders in these values are resolved.
    #[cfg(test)]
    pub fn choose(explicit: &[String], env_value: Option<&str>, docs: &[Document]) -> Self {
        Self::choose_resolved(explicit, env_value, docs, &|v: &str| v.to_string())
    }

    /// [`ActiveProfiles::choose`] with `resolve` applied to the values read from the files.
    pub(crate) fn choose_resolved(
        explicit: &[String],
        env_value: Option<&str>,
        docs: &[Document],
        resolve: &dyn Fn(&str) -> String,
    ) -> Self {
        let unconditional: Vec<&Document> =
            docs.iter().filter(|d| condition(d).is_none()).collect();
        let from_files = |key: &str| -> Option<Vec<String>> {
            let key = parse_name(key);
            unconditional.iter().rev().find_map(|d| {
                d.get_list(&key).map(|items| {
                    items
                        .iter()
                        .flat_map(|p| class_list(&resolve(&p.value)))
                        .collect()
                })
            })
        };
        let mut names: Vec<String> = explicit.iter().flat_map(|p| class_list(p)).collect();
        if names.is_empty() {
            names = env_value.map(class_list).unwrap_or_default();
        }
        if names.is_empty() {
            names = from_files("spring.profiles.active").unwrap_or_default();
        }
        // `spring.profiles.include` adds to the active profiles, however they were chosen.
        for p in from_files("spring.profiles.include").unwrap_or_default() {
            if !names.contains(&p) {
                names.push(p);
            }
        }
        if names.is_empty() {
            names = from_files("spring.profiles.default").unwrap_or_default();
        }
        if names.is_empty() {
            names.push("default".into());
        }
        let names = expand_groups(names, &unconditional, resolve);
        ActiveProfiles { names }
    }

    /// Whether profile `name` is active.
    pub fn is_active(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
}

/// Expands each profile with the members of its `spring.profiles.group` (depth first, each
/// profile once), as Spring Boot's `Profiles.expandProfiles` does.
fn expand_groups(
    names: Vec<String>,
    docs: &[&Document],
    resolve: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let group_key = parse_name("spring.profiles.group");
    let members = |profile: &str| -> Vec<String> {
        for d in docs.iter().rev() {
            let mut items: Vec<(usize, &str)> = Vec::new();
            for p in &d.properties {
                let n = &p.name;
                if n.len() < 4 || !names_equal(&n[..3], &group_key) || n[3].text != profile {
                    continue;
                }
                match n.len() {
                    4 => items.push((0, &p.value)),
                    5 => {
                        if let Some(i) = n[4].index() {
                            items.push((i, &p.value));
                        }
                    }
                    _ => {}
                }
            }
            if !items.is_empty() {
                items.sort_by_key(|(i, _)| *i);
                return items
                    .iter()
                    .flat_map(|(_, v)| class_list(&resolve(v)))
                    .collect();
            }
        }
        Vec::new()
    };
    let mut stack: Vec<String> = names.into_iter().rev().collect();
    let mut out: Vec<String> = Vec::new();
    while let Some(cur) = stack.pop() {
        if out.contains(&cur) || out.len() >= 1000 {
            continue;
        }
        let m = members(&cur);
        out.push(cur);
        stack.extend(m.into_iter().rev());
    }
    out
}

/// Whether document `d` has no profile condition (applies whatever the profiles).
pub(crate) fn unconditional(d: &Document) -> bool {
    condition(d).is_none()
}

/// The profile expressions a document is restricted to, if any.
fn condition(d: &Document) -> Option<(Vec<String>, String, Option<crate::Origin>)> {
    for key in ["spring.config.activate.on-profile", "spring.profiles"] {
        if let Some(items) = d.get_list(&parse_name(key)) {
            let origin = items.first().map(|p| p.value_origin.clone());
            let exprs = items.iter().flat_map(|p| class_list(&p.value)).collect();
            return Some((exprs, key.to_string(), origin));
        }
    }
    None
}

/// Whether document `d` applies under `active`; warns about unparsable expressions and
/// about cloud-platform conditions (never true outside that platform).
pub fn document_active(d: &Document, active: &ActiveProfiles, warnings: &mut Vec<Warning>) -> bool {
    if d.get(&parse_name("spring.config.activate.on-cloud-platform"))
        .is_some()
    {
        return false;
    }
    let Some((exprs, key, origin)) = condition(d) else {
        return true;
    };
    let mut any = false;
    for e in &exprs {
        match matches(e, active) {
            Ok(true) => any = true,
            Ok(false) => {}
            Err(msg) => warnings.push(Warning::new(
                origin.clone(),
                key.clone(),
                format!("invalid profile expression '{e}': {msg}; document ignored"),
            )),
        }
    }
    any
}

/// Evaluates a Spring profile expression against the active profiles.
pub fn matches(expr: &str, active: &ActiveProfiles) -> Result<bool, String> {
    let tokens = tokenize(expr);
    if tokens.is_empty() {
        return Err("empty expression".into());
    }
    let mut p = Parser {
        tokens,
        pos: 0,
        active,
        depth: 0,
    };
    let v = p.expr()?;
    if p.pos != p.tokens.len() {
        return Err("unexpected text after the expression".into());
    }
    Ok(v)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Not,
    And,
    Or,
    Open,
    Close,
}

fn tokenize(s: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in s.chars() {
        let t = match c {
            '!' => Some(Tok::Not),
            '&' => Some(Tok::And),
            '|' => Some(Tok::Or),
            '(' => Some(Tok::Open),
            ')' => Some(Tok::Close),
            c if c.is_whitespace() => None,
            c => {
                cur.push(c);
                continue;
            }
        };
        if !cur.is_empty() {
            out.push(Tok::Name(std::mem::take(&mut cur)));
        }
        out.extend(t);
    }
    if !cur.is_empty() {
        out.push(Tok::Name(cur));
    }
    out
}

struct Parser<'a> {
    tokens: Vec<Tok>,
    pos: usize,
    active: &'a ActiveProfiles,
    depth: usize,
}

impl Parser<'_> {
    fn expr(&mut self) -> Result<bool, String> {
        let mut v = self.term()?;
        let mut op: Option<Tok> = None;
        while let Some(t @ (Tok::And | Tok::Or)) = self.tokens.get(self.pos).cloned() {
            if op.as_ref().is_some_and(|o| *o != t) {
                return Err("mixing '&' and '|' needs parentheses".into());
            }
            self.pos += 1;
            let r = self.term()?;
            v = if t == Tok::And { v && r } else { v || r };
            op = Some(t);
        }
        Ok(v)
    }

    fn term(&mut self) -> Result<bool, String> {
        self.depth += 1;
        if self.depth > 64 {
            return Err("nested too deeply".into());
        }
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        let r = match t {
            Some(Tok::Not) => self.term().map(|v| !v),
            Some(Tok::Open) => {
                let v = self.expr()?;
                if self.tokens.get(self.pos) != Some(&Tok::Close) {
                    return Err("missing ')'".into());
                }
                self.pos += 1;
                Ok(v)
            }
            Some(Tok::Name(n)) => Ok(self.active.is_active(&n)),
            _ => Err("expected a profile name".into()),
        };
        self.depth -= 1;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(n: &[&str]) -> ActiveProfiles {
        ActiveProfiles {
            names: n.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn expressions() {
        let a = act(&["prod", "eu"]);
        assert_eq!(matches("prod", &a), Ok(true));
        assert_eq!(matches("dev", &a), Ok(false));
        assert_eq!(matches("!dev", &a), Ok(true));
        assert_eq!(matches("prod & eu", &a), Ok(true));
        assert_eq!(matches("prod & us", &a), Ok(false));
        assert_eq!(matches("dev | eu", &a), Ok(true));
        assert_eq!(matches("(dev | prod) & !us", &a), Ok(true));
        assert!(matches("a & b | c", &a).is_err());
        assert!(matches("(a", &a).is_err());
    }

    #[test]
    fn default_profile_when_none_chosen() {
        let p = ActiveProfiles::choose(&[], None, &[]);
        assert_eq!(p.names, vec!["default".to_string()]);
        let p = ActiveProfiles::choose(&[], Some("a, b"), &[]);
        assert_eq!(p.names, vec!["a".to_string(), "b".to_string()]);
    }
}
