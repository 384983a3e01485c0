//! The flattened property model shared by the YAML and `.properties` readers: every value is
//! a `(key, value)` pair with Spring's key syntax (`a.b[0].c`, `a.[x.y]`), as Spring Boot's
//! loaders flatten files before binding.

use crate::origin::Origin;
use crate::relaxed::uniform;

/// One element of a property name: `instances`, `backendA`, or an index/bracketed key `[0]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Element {
    /// The text as written (without brackets).
    pub text: String,
    /// Whether the element was written in brackets (`[0]`, `[my.name]`).
    pub bracketed: bool,
}

impl Element {
    /// The uniform (relaxed) form of the element, for matching property names.
    pub fn uniform(&self) -> String {
        uniform(&self.text)
    }

    /// Whether this element matches the property name `name` (relaxed comparison).
    pub fn is(&self, name: &str) -> bool {
        !self.bracketed && uniform(&self.text) == uniform(name)
    }

    /// The list index, when the element is `[n]`.
    pub fn index(&self) -> Option<usize> {
        if self.bracketed && !self.text.is_empty() && self.text.bytes().all(|b| b.is_ascii_digit())
        {
            self.text.parse().ok()
        } else {
            None
        }
    }
}

/// Splits a Spring property key into elements: dots separate elements outside brackets,
/// `[...]` is one (bracketed) element. Empty elements are dropped, and so are unbracketed
/// elements without a single character Spring keeps (`a.断路器.b` is `a.b` for Spring).
pub fn parse_name(key: &str) -> Vec<Element> {
    let mut out = split_name(key);
    out.retain(|e| e.bracketed || !crate::relaxed::element_vanishes(&e.text));
    out
}

fn split_name(key: &str) -> Vec<Element> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = key.chars();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                if !cur.is_empty() {
                    out.push(Element {
                        text: std::mem::take(&mut cur),
                        bracketed: false,
                    });
                }
            }
            '[' => {
                if !cur.is_empty() {
                    out.push(Element {
                        text: std::mem::take(&mut cur),
                        bracketed: false,
                    });
                }
                let mut inner = String::new();
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == ']' {
                        closed = true;
                        break;
                    }
                    inner.push(d);
                }
                if closed {
                    out.push(Element {
                        text: inner,
                        bracketed: true,
                    });
                } else {
                    cur.push('[');
                    cur.push_str(&inner);
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(Element {
            text: cur,
            bracketed: false,
        });
    }
    out
}

/// What kind of scalar a value was in the file (YAML typing; `.properties` values are strings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// A string.
    Str,
    /// A YAML integer.
    Int,
    /// A YAML float.
    Float,
    /// A YAML boolean.
    Bool,
    /// A YAML null / empty value or an empty collection (Spring flattens these to `""`).
    Empty,
}

/// One flattened property: `resilience4j.circuitbreaker.instances.a.slidingWindowSize = 10`.
#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    /// The full key as Spring flattens it, e.g. `resilience4j.circuitbreaker.instances.a.recordExceptions[0]`.
    pub key: String,
    /// The key split into elements.
    pub name: Vec<Element>,
    /// The value's text (`""` for null or empty collections).
    pub value: String,
    /// The value's YAML type.
    pub kind: ValueKind,
    /// Where the key is written.
    pub key_origin: Origin,
    /// Where the value is written.
    pub value_origin: Origin,
}

impl Property {
    /// Creates a property, parsing `key` into elements.
    pub fn new(
        key: String,
        value: String,
        kind: ValueKind,
        key_origin: Origin,
        value_origin: Origin,
    ) -> Self {
        let name = parse_name(&key);
        Property {
            key,
            name,
            value,
            kind,
            key_origin,
            value_origin,
        }
    }

    /// Whether this property's name equals `other` under relaxed matching.
    pub fn name_is(&self, other: &[Element]) -> bool {
        names_equal(&self.name, other)
    }
}

/// Relaxed equality of two property names (bracketed elements compare exactly).
pub fn names_equal(a: &[Element], b: &[Element]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            if x.bracketed || y.bracketed {
                x.text == y.text
            } else {
                x.uniform() == y.uniform()
            }
        })
}

/// One document of a file: a YAML document between `---` separators, or a `.properties` file
/// (or part of one between `#---` lines). Properties are in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The file the document comes from.
    pub file: std::sync::Arc<str>,
    /// 0-based index of the document in its file.
    pub index: usize,
    /// The flattened properties.
    pub properties: Vec<Property>,
}

impl Document {
    /// The last property whose name matches `name` (relaxed), if any.
    pub fn get(&self, name: &[Element]) -> Option<&Property> {
        self.properties.iter().rev().find(|p| p.name_is(name))
    }

    /// Values of a property that may be a scalar (comma-separated) or an indexed list.
    pub fn get_list(&self, name: &[Element]) -> Option<Vec<&Property>> {
        if let Some(p) = self.get(name) {
            return Some(vec![p]);
        }
        let mut items: Vec<(usize, &Property)> = self
            .properties
            .iter()
            .filter(|p| {
                p.name.len() == name.len() + 1
                    && names_equal(&p.name[..name.len()], name)
                    && p.name[name.len()].index().is_some()
            })
            .map(|p| (p.name[name.len()].index().unwrap_or(0), p))
            .collect();
        if items.is_empty() {
            return None;
        }
        items.sort_by_key(|(i, _)| *i);
        Some(items.into_iter().map(|(_, p)| p).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(key: &str) -> Vec<(String, bool)> {
        parse_name(key)
            .into_iter()
            .map(|e| (e.text, e.bracketed))
            .collect()
    }

    #[test]
    fn splits_dots_and_brackets() {
        assert_eq!(
            texts("a.b[0].c"),
            vec![
                ("a".into(), false),
                ("b".into(), false),
                ("0".into(), true),
                ("c".into(), false)
            ]
        );
        assert_eq!(
            texts("instances.[my.name].x"),
            vec![
                ("instances".into(), false),
                ("my.name".into(), true),
                ("x".into(), false)
            ]
        );
        assert_eq!(
            texts("a..b"),
            vec![("a".into(), false), ("b".into(), false)]
        );
        assert_eq!(
            texts("a[unclosed"),
            vec![("a".into(), false), ("[unclosed".into(), false)]
        );
    }
}
