//! No input may panic the loader: arbitrary bytes and arbitrary YAML-ish / properties-ish text
//! either load or fail with an error.

use breaker_config::{Format, Limits, Loader};
use proptest::prelude::*;

fn loader() -> Loader {
    Loader::new().env(Default::default()).limits(Limits {
        max_file_bytes: 64 * 1024,
        ..Limits::default()
    })
}

fn load(format: Format, text: &str) {
    if let Ok(l) = loader().load_str("p.yml", format, text) {
        let _ = breaker_config::json::report(&l);
        let _ = l.config.unclaimed_exception_names(&|n| n.len() % 2 == 0);
    }
}

/// YAML-ish text: keys near the real ones, indentation, flow syntax, anchors, placeholders.
fn yamlish() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "resilience4j",
        "circuitbreaker",
        "resilience4j.circuitbreaker",
        "instances",
        "backends",
        "configs",
        "default",
        "a",
        "baseConfig",
        "base-config",
        "slidingWindowSize",
        "waitDurationInOpenState",
        "recordExceptions",
        "enableExponentialBackoff",
        "enableRandomizedWait",
        "spring.config.activate.on-profile",
        "spring.profiles",
        ": ",
        ":",
        "\n",
        "\n  ",
        "\n    ",
        "- ",
        "[",
        "]",
        "{",
        "}",
        ",",
        "---\n",
        "&x ",
        "*x",
        "<<: ",
        "${",
        "}",
        ":-",
        "10s",
        "0.5s",
        "PT1S",
        "-1",
        "150",
        "true",
        "~",
        "\"",
        "'",
        "#",
        "\t",
        "[0]",
        ".",
        "x",
        "\u{e9}",
        "!!str ",
        "? ",
    ]);
    prop::collection::vec(token, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        load(Format::Yaml, &text);
        load(Format::Properties, &text);
    }

    #[test]
    fn yamlish_text_never_panics(text in yamlish()) {
        load(Format::Yaml, &text);
        load(Format::Properties, &text.replace(": ", "="));
    }
}

#[test]
fn huge_input_is_rejected_within_budget() {
    let limits = Limits {
        max_file_bytes: 1024,
        ..Limits::default()
    };
    let text = format!("a: \"{}\"\n", "x".repeat(2000));
    let err = Loader::new()
        .env(Default::default())
        .limits(limits)
        .load_str("big.yml", Format::Yaml, &text)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "big.yml:1:1: rejected, too large or too deeply nested: file is 2006 bytes, more than the limit of 1024 bytes"
    );
}

#[test]
fn placeholder_expansion_storm_is_bounded() {
    // Each level doubles the work: 2^30 expansions without a budget.
    let mut yaml = String::from("l0: ''\n");
    for i in 1..=30 {
        yaml.push_str(&format!("l{i}: ${{l{p}}}${{l{p}}}\n", p = i - 1));
    }
    yaml.push_str("resilience4j.circuitbreaker.instances.a.recordExceptions: ${l30}\n");
    let l = Loader::new()
        .env(Default::default())
        .load_str("storm.yml", Format::Yaml, &yaml)
        .expect("loads");
    assert_eq!(
        l.config.errors["a"].message,
        "more than 10000 placeholder expansions"
    );
}
