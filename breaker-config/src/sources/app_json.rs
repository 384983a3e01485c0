//! `SPRING_APPLICATION_JSON` as Spring Boot's `SpringApplicationJsonEnvironmentPostProcessor`
//! reads it: a JSON object, from the `spring.application.json` or `SPRING_APPLICATION_JSON`
//! property of the command line, else of the environment, flattened into properties (nested
//! objects join their keys with `.`, array items get `[i]`, an empty object or array and
//! `null` are the empty value), ranked just above the environment and below the command line.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::error::LoadError;
use crate::origin::Origin;
use crate::property::{parse_name, Document, Property, ValueKind};

/// Where the JSON text is: `(label, text)`, the label naming the variable or argument.
pub(crate) fn find(args: &Document, env: &HashMap<String, String>) -> Option<(String, String)> {
    for key in ["spring.application.json", "SPRING_APPLICATION_JSON"] {
        if let Some(p) = args.properties.iter().rev().find(|p| p.key == key) {
            return Some((p.value_origin.file.to_string(), p.value.clone()));
        }
    }
    // `SystemEnvironmentPropertySource` finds `spring.application.json` under either spelling.
    for key in [
        "spring.application.json",
        "spring_application_json",
        "SPRING.APPLICATION.JSON",
        "SPRING_APPLICATION_JSON",
    ] {
        if let Some(v) = env.get(key) {
            return Some((key.to_string(), v.clone()));
        }
    }
    None
}

/// The document of JSON `text` found under `label`.
///
/// Errors: [`LoadError::Syntax`] when `text` is not a JSON object (Spring Boot does not
/// start then either).
pub(crate) fn document(label: &str, text: &str) -> Result<Document, LoadError> {
    let origin = Origin::outside(label.to_string());
    let syntax = |message: String| LoadError::Syntax {
        origin: origin.clone(),
        message,
    };
    let value: Value =
        serde_json::from_str(text).map_err(|e| syntax(format!("not valid JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(syntax("not a JSON object".into()));
    };
    let mut properties = Vec::new();
    for (k, v) in &map {
        extract(k.clone(), v, &origin, &mut properties);
    }
    Ok(Document {
        file: Arc::from(super::names::JSON_DOCUMENT),
        index: 0,
        properties,
    })
}

fn extract(name: String, v: &Value, origin: &Origin, out: &mut Vec<Property>) {
    let (value, kind) = match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, item) in m {
                extract(format!("{name}.{k}"), item, origin, out);
            }
            return;
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, item) in a.iter().enumerate() {
                extract(format!("{name}[{i}]"), item, origin, out);
            }
            return;
        }
        Value::Object(_) | Value::Array(_) | Value::Null => (String::new(), ValueKind::Empty),
        Value::Bool(b) => (b.to_string(), ValueKind::Bool),
        Value::Number(n) if n.is_f64() => (n.to_string(), ValueKind::Float),
        Value::Number(n) => (n.to_string(), ValueKind::Int),
        Value::String(s) => (s.clone(), ValueKind::Str),
    };
    if parse_name(&name).is_empty() {
        return;
    }
    out.push(Property::new(
        name,
        value,
        kind,
        origin.clone(),
        origin.clone(),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattens_as_spring_boot() {
        let d = document(
            "SPRING_APPLICATION_JSON",
            r#"{"resilience4j":{"circuitbreaker":{"instances":{"payments":{"failureRateThreshold":20,
                "recordExceptions":["a.B","c.D"],"slowCallRateThreshold":50.5}}}},
                "x.y":true,"e":{},"n":null}"#,
        )
        .unwrap();
        // serde_json's map order (sorted, or as written with `preserve_order`) does not
        // matter: every key is distinct.
        let mut pairs: Vec<(&str, &str)> = d
            .properties
            .iter()
            .map(|p| (p.key.as_str(), p.value.as_str()))
            .collect();
        pairs.sort();
        assert_eq!(
            pairs,
            vec![
                ("e", ""),
                ("n", ""),
                (
                    "resilience4j.circuitbreaker.instances.payments.failureRateThreshold",
                    "20"
                ),
                (
                    "resilience4j.circuitbreaker.instances.payments.recordExceptions[0]",
                    "a.B"
                ),
                (
                    "resilience4j.circuitbreaker.instances.payments.recordExceptions[1]",
                    "c.D"
                ),
                (
                    "resilience4j.circuitbreaker.instances.payments.slowCallRateThreshold",
                    "50.5"
                ),
                ("x.y", "true"),
            ]
        );
        assert!(d
            .properties
            .iter()
            .all(|p| p.value_origin.to_string() == "SPRING_APPLICATION_JSON"));
    }

    #[test]
    fn not_an_object_is_a_syntax_error() {
        let e = document("SPRING_APPLICATION_JSON", "[1]").unwrap_err();
        assert_eq!(
            e.to_string(),
            "SPRING_APPLICATION_JSON: syntax error: not a JSON object"
        );
        assert!(document("SPRING_APPLICATION_JSON", "{").is_err());
    }
}
