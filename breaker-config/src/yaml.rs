//! The YAML reader: the only module that knows the YAML crate (serde-saphyr). It parses
//! every document of a file into a positioned tree, within the [`Limits`] budget, and
//! flattens it into Spring-style properties (`a.b[0].c`).

use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use crate::error::{LoadError, Warning};
use crate::limits::Limits;
use crate::origin::Origin;
use crate::property::{Document, Property, ValueKind};

/// A YAML node with its children; positions are kept by the `Spanned` wrappers.
#[derive(Debug)]
enum Node {
    Null,
    Scalar(String, ValueKind),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<Node>, Spanned<Node>)>),
}

pub(crate) use breaker_core::java_double;

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML node")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
                Ok(Node::Scalar(v.to_string(), ValueKind::Bool))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
                Ok(Node::Scalar(v.to_string(), ValueKind::Int))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
                Ok(Node::Scalar(v.to_string(), ValueKind::Int))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
                Ok(Node::Scalar(v.to_string(), ValueKind::Int))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
                Ok(Node::Scalar(v.to_string(), ValueKind::Int))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
                Ok(Node::Scalar(java_double(v), ValueKind::Float))
            }
            fn visit_char<E: de::Error>(self, v: char) -> Result<Node, E> {
                Ok(Node::Scalar(v.to_string(), ValueKind::Str))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
                Ok(Node::Scalar(v.to_string(), ValueKind::Str))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Node, E> {
                Ok(Node::Scalar(
                    String::from_utf8_lossy(v).into_owned(),
                    ValueKind::Str,
                ))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Node::Seq(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_entry()? {
                    v.push(x);
                }
                Ok(Node::Map(v))
            }
        }
        d.deserialize_any(V)
    }
}

fn options(limits: &Limits) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = limits.max_depth;
    budget.max_nodes = limits.max_nodes;
    budget.max_documents = limits.max_documents;
    budget.max_aliases = limits.max_aliases;
    budget.max_anchors = limits.max_aliases;
    budget.max_events = limits.max_nodes.saturating_mul(4);
    budget.max_total_scalar_bytes = limits.max_file_bytes.saturating_mul(4);
    budget.max_reader_input_bytes = Some(limits.max_file_bytes);
    serde_saphyr::options! {
        budget: Some(budget),
        // Spring Boot's `OriginTrackedYamlLoader` sets `allowDuplicateKeys(false)`: SnakeYAML
        // fails the whole file with "found duplicate key" when a mapping repeats a key (merge
        // keys `<<` excepted; an explicit key may override a merged one).
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
        // SnakeYAML resolves YAML 1.1: `010` is octal; booleans are handled by our own
        // converter (true/false/yes/no/on/off), so keys like `y` or `on` stay strings.
        legacy_octal_numbers: true,
        strict_booleans: true,
        with_snippet: false,
        // `.nan` / `.inf` reach the binder as text, which reports them like any other value
        // it cannot convert (key, value as written, allowed values), not as a syntax error.
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::AsString,
    }
}

/// Parses every document of a YAML file into flattened properties.
///
/// Errors: [`LoadError::Syntax`] for malformed YAML, [`LoadError::Budget`] when the file
/// breaks a limit (nesting, node count, alias expansion). Never panics.
pub(crate) fn parse(
    file: &Arc<str>,
    text: &str,
    limits: &Limits,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Document>, LoadError> {
    let docs: Vec<Spanned<Node>> = serde_saphyr::from_multiple_with_options(text, options(limits))
        .map_err(|e| {
            let origin = e
                .location()
                .map(|l| Origin::new(file.clone(), l.line(), l.column()))
                .unwrap_or_else(|| Origin::new(file.clone(), 1, 1));
            let mut message = e.without_snippet().to_string();
            if let Some(l) = e.location() {
                let suffix = format!(" at line {}, column {}", l.line(), l.column());
                if let Some(stripped) = message.strip_suffix(&suffix) {
                    message = stripped.to_string();
                }
            }
            if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
                let key = rest
                    .split(", set DuplicateKeyPolicy")
                    .next()
                    .unwrap_or(rest);
                message = format!(
                    "found duplicate key {key} (Spring Boot refuses a YAML file that repeats a key in one mapping)"
                );
            }
            if message.contains("budget") {
                LoadError::Budget { origin, message }
            } else {
                LoadError::Syntax { origin, message }
            }
        })?;
    let mut out = Vec::with_capacity(docs.len());
    for (index, doc) in docs.iter().enumerate() {
        let mut f = Flattener {
            file,
            text,
            props: Vec::new(),
            warnings,
            max: limits.max_properties,
        };
        f.node(doc, String::new(), None)?;
        out.push(Document {
            file: file.clone(),
            index,
            properties: f.props,
        });
    }
    Ok(out)
}

struct Flattener<'a> {
    file: &'a Arc<str>,
    text: &'a str,
    props: Vec<Property>,
    warnings: &'a mut Vec<Warning>,
    max: usize,
}

impl Flattener<'_> {
    fn origin(&self, n: &Spanned<Node>) -> Origin {
        Origin::new(
            self.file.clone(),
            n.referenced.line(),
            n.referenced.column(),
        )
    }

    /// An integer too long for any integer type as written in the file (all 229 digits, not
    /// the `1.0E229` the parser's float fallback gives), as SnakeYAML keeps it (a
    /// `BigInteger`): the binder then reports it as written. Every other number keeps its
    /// parsed form (`2_000` is 2000, `010` is 8, as YAML 1.1 reads them).
    fn as_written(&self, n: &Spanned<Node>, parsed: &str) -> String {
        let span = n.defined.span();
        let written = span.byte_offset().zip(span.byte_len()).and_then(|(o, l)| {
            let (o, l) = (usize::try_from(o).ok()?, usize::try_from(l).ok()?);
            self.text.get(o..o.checked_add(l)?)
        });
        match written.map(str::trim) {
            Some(w)
                if w.trim_start_matches(['+', '-']).len() > 18
                    && w.trim_start_matches(['+', '-'])
                        .bytes()
                        .all(|b| b.is_ascii_digit()) =>
            {
                w.to_string()
            }
            _ => parsed.to_string(),
        }
    }

    fn push(
        &mut self,
        key: String,
        value: String,
        kind: ValueKind,
        key_origin: Origin,
        value_origin: Origin,
    ) -> Result<(), LoadError> {
        if self.props.len() >= self.max {
            return Err(LoadError::Budget {
                origin: value_origin,
                message: format!("more than {} properties in one document", self.max),
            });
        }
        self.props
            .push(Property::new(key, value, kind, key_origin, value_origin));
        Ok(())
    }

    /// Flattens `n` under `path`. `key_origin` is the position of the YAML key that holds it.
    fn node(
        &mut self,
        n: &Spanned<Node>,
        path: String,
        key_origin: Option<Origin>,
    ) -> Result<(), LoadError> {
        let vo = self.origin(n);
        let ko = key_origin.unwrap_or_else(|| vo.clone());
        match &n.value {
            Node::Null => {
                if !path.is_empty() {
                    self.push(path, String::new(), ValueKind::Empty, ko, vo)?;
                }
            }
            Node::Scalar(s, kind) => {
                if path.is_empty() {
                    self.warnings.push(Warning::new(
                        Some(vo),
                        String::new(),
                        format!("document is a plain value ('{s}'), not a mapping; ignored"),
                    ));
                } else {
                    let text = match kind {
                        ValueKind::Float => self.as_written(n, s),
                        _ => s.clone(),
                    };
                    self.push(path, text, *kind, ko, vo)?;
                }
            }
            Node::Seq(items) => {
                if path.is_empty() {
                    self.warnings.push(Warning::new(
                        Some(vo),
                        String::new(),
                        "document is a list, not a mapping; ignored".into(),
                    ));
                } else if items.is_empty() {
                    self.push(path, String::new(), ValueKind::Empty, ko, vo)?;
                } else {
                    for (i, item) in items.iter().enumerate() {
                        let io = self.origin(item);
                        self.node(item, format!("{path}[{i}]"), Some(io))?;
                    }
                }
            }
            Node::Map(entries) => {
                if entries.is_empty() && !path.is_empty() {
                    // `svc: {}`: like an empty list, a value Spring sees as empty, so the binder
                    // can tell the user that nothing binds under it.
                    self.push(
                        path.clone(),
                        String::new(),
                        ValueKind::Empty,
                        ko.clone(),
                        vo.clone(),
                    )?;
                }
                for (k, v) in entries {
                    let kt = match &k.value {
                        Node::Scalar(s, _) => s.clone(),
                        Node::Null => "null".to_string(),
                        _ => {
                            self.warnings.push(Warning::new(
                                Some(self.origin(k)),
                                path.clone(),
                                "a list or mapping used as a key is not supported; entry ignored"
                                    .into(),
                            ));
                            continue;
                        }
                    };
                    let child = if path.is_empty() {
                        kt
                    } else if kt.starts_with('[') {
                        format!("{path}{kt}")
                    } else {
                        format!("{path}.{kt}")
                    };
                    let ko = self.origin(k);
                    self.node(v, child, Some(ko))?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(text: &str) -> Vec<Vec<(String, String, u64, u64)>> {
        let file: Arc<str> = Arc::from("t.yml");
        let mut w = Vec::new();
        parse(&file, text, &Limits::default(), &mut w)
            .expect("parses")
            .into_iter()
            .map(|d| {
                d.properties
                    .into_iter()
                    .map(|p| (p.key, p.value, p.value_origin.line, p.value_origin.column))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn flattens_nested_dotted_and_lists() {
        let docs = flat("a.b:\n  c: 10s\n  d: [x, 'y']\n  e:\n  f: []\n---\ng: 2_000\n");
        assert_eq!(
            docs[0],
            vec![
                ("a.b.c".into(), "10s".into(), 2, 6),
                ("a.b.d[0]".into(), "x".into(), 3, 7),
                ("a.b.d[1]".into(), "y".into(), 3, 10),
                ("a.b.e".into(), "".into(), 4, 4),
                ("a.b.f".into(), "".into(), 5, 6),
            ]
        );
        assert_eq!(docs[1], vec![("g".into(), "2000".into(), 7, 4)]);
    }

    #[test]
    fn deep_nesting_is_a_budget_error() {
        let file: Arc<str> = Arc::from("deep.yml");
        let text = format!("x: {}{}\n", "[".repeat(200), "]".repeat(200));
        let mut w = Vec::new();
        let err = parse(&file, &text, &Limits::default(), &mut w).unwrap_err();
        assert!(matches!(err, LoadError::Budget { .. }), "{err}");
    }
}
