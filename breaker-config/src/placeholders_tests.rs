//! Unit tests of `placeholders.rs`.

use super::*;
use crate::origin::Origin;
use crate::property::{Property, ValueKind};
use std::sync::Arc;

fn doc(pairs: &[(&str, &str)]) -> Document {
    named_doc("t", pairs)
}

fn named_doc(file: &str, pairs: &[(&str, &str)]) -> Document {
    let f: Arc<str> = Arc::from(file);
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
        ("app.loose", "${spring.application.name}"),
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
    // Unresolvable: left as written (Spring's binder, ignoreUnresolvablePlaceholders).
    assert_eq!(r.resolve("${nope}").unwrap(), "${nope}");
    let mut names = Vec::new();
    assert_eq!(
        r.resolve_noting("a-${nope}-${app.size}-${x.y}-${nope}", &mut names)
            .unwrap(),
        "a-${nope}-12-${x.y}-${nope}"
    );
    assert_eq!(names, vec!["nope".to_string(), "x.y".to_string()]);
    // A default that is itself unresolvable stays as its own text.
    assert_eq!(r.resolve("${nope:${gone}}").unwrap(), "${gone}");
    // The unresolvable text reached through a key stays too.
    assert_eq!(
        r.resolve("${app.loose}").unwrap(),
        "${spring.application.name}"
    );
    assert_eq!(
        r.resolve("${loop.a}").unwrap_err(),
        "Circular placeholder reference 'loop.a' in property definitions"
    );
}

/// Spring Boot's order: command line > SPRING_APPLICATION_JSON > environment > files.
#[test]
fn placeholders_see_every_source_in_precedence_order() {
    let env: HashMap<String, String> = [
        ("APP_NAME", "from-env"),
        ("APP_ENV_ONLY", "env"),
        ("APP_JSON_ONLY", "env"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let file = named_doc(
        "application.yml",
        &[
            ("app.name", "from-file"),
            ("app.file-only", "file"),
            ("app.env-only", "file"),
        ],
    );
    let env_doc = named_doc(crate::sources::names::ENV_DOCUMENT, &[]);
    let json = named_doc(
        crate::sources::names::JSON_DOCUMENT,
        &[("app.name", "from-json"), ("app.json-only", "json")],
    );
    let args = named_doc(
        crate::sources::names::ARGS_DOCUMENT,
        &[("app.name", "from-args")],
    );
    let limits = Limits::default();
    let resolve = |docs: &[&Document], v: &str| {
        Resolver {
            env: &env,
            docs,
            limits: &limits,
            work: Default::default(),
        }
        .resolve(v)
        .unwrap()
    };
    let all = [&file, &env_doc, &json, &args];
    assert_eq!(resolve(&all, "${app.name}"), "from-args");
    assert_eq!(resolve(&all[..3], "${app.name}"), "from-json");
    assert_eq!(resolve(&all[..2], "${app.name}"), "from-env");
    assert_eq!(resolve(&all[..1], "${app.name}"), "from-env"); // no env document: env first
    assert_eq!(resolve(&all, "${app.json-only}"), "json");
    assert_eq!(resolve(&all, "${app.env-only}"), "env");
    assert_eq!(resolve(&all, "${app.file-only}"), "file");
}
