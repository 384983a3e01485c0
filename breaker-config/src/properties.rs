//! The `.properties` reader (through the `java-properties` crate). A line `#---` (or `!---`)
//! separates documents, as in Spring Boot 2.4+.

use std::sync::Arc;

use java_properties::{LineContent, PropertiesIter};

use crate::error::LoadError;
use crate::limits::Limits;
use crate::origin::Origin;
use crate::property::{Document, Property, ValueKind};

/// Column (1-based) of the value on a raw `key=value` line: after the key and its separator.
fn value_column(line: &str) -> u64 {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() && matches!(chars[i], ' ' | '\t' | '\u{c}') {
        i += 1;
    }
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '=' | ':' | ' ' | '\t' | '\u{c}' => break,
            _ => i += 1,
        }
    }
    while i < chars.len() && matches!(chars[i], ' ' | '\t' | '\u{c}') {
        i += 1;
    }
    if i < chars.len() && matches!(chars[i], '=' | ':') {
        i += 1;
        while i < chars.len() && matches!(chars[i], ' ' | '\t' | '\u{c}') {
            i += 1;
        }
    }
    (i.min(chars.len()) + 1) as u64
}

fn key_column(line: &str) -> u64 {
    (line
        .chars()
        .take_while(|c| matches!(c, ' ' | '\t' | '\u{c}'))
        .count()
        + 1) as u64
}

/// Parses a `.properties` file into documents of flattened properties. As in Spring Boot's
/// `OriginTrackedPropertiesLoader`, whitespace before a value is skipped but trailing
/// whitespace is kept (the converters decide: numbers and booleans trim, durations do not). Errors: [`LoadError::Syntax`] for a malformed escape.
pub(crate) fn parse(
    file: &Arc<str>,
    text: &str,
    limits: &Limits,
) -> Result<Vec<Document>, LoadError> {
    let raw_lines: Vec<&str> = text.lines().collect();
    let mut docs = vec![Document {
        file: file.clone(),
        index: 0,
        properties: Vec::new(),
    }];
    let mut count = 0usize;
    for line in PropertiesIter::new_with_encoding(text.as_bytes(), encoding_rs::UTF_8) {
        let line = line.map_err(|e| LoadError::Syntax {
            origin: Origin::new(file.clone(), e.line_number().unwrap_or(1) as u64, 1),
            message: e.to_string(),
        })?;
        let n = line.line_number();
        let raw = raw_lines.get(n.saturating_sub(1)).copied().unwrap_or("");
        match line.consume_content() {
            LineContent::Comment(_) => {
                let t = raw.trim_end();
                if t == "#---" || t == "!---" {
                    let index = docs.len();
                    docs.push(Document {
                        file: file.clone(),
                        index,
                        properties: Vec::new(),
                    });
                }
            }
            LineContent::KVPair(k, v) => {
                count += 1;
                if count > limits.max_properties {
                    return Err(LoadError::Budget {
                        origin: Origin::new(file.clone(), n as u64, 1),
                        message: format!("more than {} properties", limits.max_properties),
                    });
                }
                let ko = Origin::new(file.clone(), n as u64, key_column(raw));
                let vo = Origin::new(file.clone(), n as u64, value_column(raw));
                let value = v.trim_start_matches([' ', '\t', '\u{c}']).to_string();
                let kind = if value.is_empty() {
                    ValueKind::Empty
                } else {
                    ValueKind::Str
                };
                if let Some(doc) = docs.last_mut() {
                    doc.properties
                        .push(Property::new(k.trim().to_string(), value, kind, ko, vo));
                }
            }
        }
    }
    Ok(docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_keys_values_and_positions() {
        let file: Arc<str> = Arc::from("a.properties");
        let text = "# c\na.b = 10s \n  x.y[0]=p\n#---\nz:1\n";
        let docs = parse(&file, text, &Limits::default()).expect("parses");
        assert_eq!(docs.len(), 2);
        let p = &docs[0].properties;
        assert_eq!(p[0].key, "a.b");
        assert_eq!(p[0].value, "10s ");
        assert_eq!((p[0].value_origin.line, p[0].value_origin.column), (2, 7));
        assert_eq!(p[1].key, "x.y[0]");
        assert_eq!((p[1].key_origin.line, p[1].key_origin.column), (3, 3));
        assert_eq!((p[1].value_origin.line, p[1].value_origin.column), (3, 10));
        assert_eq!(docs[1].properties[0].value, "1");
    }
}
