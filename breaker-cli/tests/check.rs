//! End-to-end tests of `breaker check` (runs the built binary).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../breaker-config/tests/fixtures")
        .join(name)
}

fn breaker(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_breaker"))
        .args(args)
        .env_remove("SPRING_PROFILES_ACTIVE")
        .output()
        .expect("runs")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn json_matches_the_expected_shape_of_a_shared_fixture() {
    let f = fixture("shared/02_r4j_boot3_testsuite_backends_alias.yml");
    let out = breaker(&["check", "--json", f.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    // Values from 02.expected.json.
    let c = &v["instances"]["backendC"];
    assert_eq!(c["waitDurationInOpenState"], 1000);
    assert_eq!(c["slidingWindowSize"], 10);
    assert_eq!(c["failureRateThreshold"], 50.0);
    assert_eq!(c["recordExceptions"], serde_json::Value::Null);
    let b = &v["instances"]["backendSharedB"];
    assert_eq!(b["slidingWindowType"], "TIME_BASED");
    assert_eq!(b["failureRateThreshold"], 60.0);
    assert_eq!(v["defaultConfig"]["waitDurationInOpenState"], 10000);
    assert_eq!(v["errors"], serde_json::json!({}));
    // backendC is exponential (multiplier 2, max 1111ms) per the file.
    assert_eq!(c["waitIntervalFunctionInOpenState"]["multiplier"], 2.0);
    assert_eq!(
        c["waitIntervalFunctionInOpenState"]["maxWaitDuration"],
        1111
    );
    assert_eq!(
        v["sources"]["backendSharedB"]["failureRateThreshold"]["from"],
        "configs.default"
    );
    assert_eq!(
        v["sources"]["backendSharedB"]["slidingWindowType"]["from"],
        "instance"
    );
}

#[test]
fn text_output_explains_sources_default_and_warnings() {
    let f = fixture("shared/04_ringbuffer_empty_ignore_odd_indent.yml");
    let out = breaker(&["check", f.to_str().unwrap()]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("Circuit breaker 'payment'"), "{s}");
    assert!(s.contains("Any other name (default config)"), "{s}");
    assert!(s.contains("waitDurationInOpenState"), "{s}");
    assert!(s.contains("10000 ms  [instance "), "{s}");
    assert!(s.contains("04_ringbuffer_empty_ignore_odd_indent.yml:11:7: resilience4j.circuitbreaker.instances.scheduleDelivery.ringBufferSizeInClosedState"), "{s}");
}

#[test]
fn invalid_file_exits_1_with_position_key_value_and_message() {
    let f = fixture("own/e01_failure_rate_out_of_range.yml");
    let out = breaker(&["check", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("e01_failure_rate_out_of_range.yml:5:31: resilience4j.circuitbreaker.instances.a.failureRateThreshold = '150': failureRateThreshold must be between 1 and 100."),
        "{err}"
    );
}

#[test]
fn syntax_error_exits_1() {
    let f = fixture("own/e10_yaml_syntax.yml");
    let out = breaker(&["check", "--json", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert!(
        v["loadError"].as_str().unwrap().ends_with(
            "e10_yaml_syntax.yml:4:25: syntax error: illegal placement of ':' indicator"
        ),
        "{v}"
    );
}

#[test]
fn profiles_and_layering() {
    let base = fixture("own/f15_profiles_multidoc.yml");
    let out = breaker(&[
        "check",
        "--json",
        "--profile",
        "prod",
        base.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert_eq!(json(&out)["instances"]["a"]["slidingWindowSize"], 50);
    let over = fixture("own/f17_layer_override.properties");
    let out = breaker(&[
        "check",
        "--json",
        base.to_str().unwrap(),
        over.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert_eq!(json(&out)["instances"]["a"]["slidingWindowSize"], 7);
}

#[test]
fn missing_file_and_usage() {
    let out = breaker(&["check", "/nonexistent/application.yml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("/nonexistent/application.yml: cannot read file"));
    let out = breaker(&["check", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn strict_makes_warnings_fail_the_check() {
    let f = fixture("own/f20_warnings_other_sections.yml");
    let typo = "f20_warnings_other_sections.yml:19:7: resilience4j.circuitbreaker.instances.a.minimumNumberOfCals: did you mean minimumNumberOfCalls? (Spring binds nothing for it)";

    let out = breaker(&["check", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains(&format!("  {}/{typo}\n", f.parent().unwrap().display())),
        "{s}"
    );

    let out = breaker(&["check", "--strict", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "warning: {}/{typo}\n",
            f.parent().unwrap().display()
        )),
        "{err}"
    );
    assert!(err.ends_with("error: 8 warnings and --strict\n"), "{err}");

    // --json keeps stdout JSON; the exit status still reflects --strict.
    let out = breaker(&["check", "--strict", "--json", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["warnings"].as_array().unwrap().len(), 8);

    // No warnings: --strict passes.
    let clean = fixture("own/f01_nested_kebab.yml");
    let out = breaker(&["check", "--strict", clean.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn help_explains_strict() {
    let out = breaker(&["check", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("--strict"), "{s}");
    assert!(
        s.contains("Treat warnings as errors: exit 1 if there is any warning"),
        "{s}"
    );
}

#[test]
fn json_error_details_are_objects() {
    let f = fixture("own/e17_scalar_instance_misindented.yml");
    let out = breaker(&["check", "--json", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    let message = "expected a block of circuit-breaker settings under 'slidingWindowSize', found the value '10'; is this key indented one level too little (it probably belongs under 'paymentService', the block just above), or is the instance name missing before it?";
    // `errors` keeps the expected.json shape: one message per instance.
    assert_eq!(v["errors"]["slidingWindowSize"], message);
    assert_eq!(
        v["errors"]["inventory"],
        "expected a block of circuit-breaker settings under 'inventory', found the value 'default'"
    );
    // The entry with nothing under it binds no setting: not an instance, and a warning says so.
    assert!(v["instances"].get("paymentService").is_none());
    assert!(v["warnings"][1].as_str().unwrap().contains(
        "no circuit-breaker setting binds under 'paymentService', so it is not an instance"
    ));
    let details = v["errorDetails"]
        .as_array()
        .expect("errorDetails is a list");
    assert_eq!(details.len(), 3);
    assert_eq!(
        details[1],
        serde_json::json!({
            "file": f.to_str().unwrap(),
            "line": 6,
            "column": 22,
            "key": "resilience4j.circuitbreaker.instances.slidingWindowSize",
            "value": "10",
            "message": message,
            "allowed": "circuit-breaker settings nested under the name (e.g. slidingWindowSize: 10)",
        })
    );
    assert_eq!(
        details[2]["key"],
        "resilience4j.circuitbreaker.configs.minimumNumberOfCalls"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("error: {}:6:22: resilience4j.circuitbreaker.instances.slidingWindowSize = '10': {message} (allowed: ", f.display())), "{err}");
}

#[test]
fn json_error_details_for_a_properties_file_and_a_count_setting() {
    let f = fixture("own/e18_scalar_instance.properties");
    let out = breaker(&["check", "--json", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(
        v["errorDetails"][0]["message"],
        "expected a block of circuit-breaker settings under 'slidingWindowSize', found the value '10'; is this key indented one level too little (it probably belongs under 'paymentService', the block just above), or is the instance name missing before it?"
    );
    assert_eq!(v["errorDetails"][0]["line"], 2);
    assert_eq!(v["errorDetails"][0]["column"], 57);

    let f = fixture("own/e07_conversion_errors.yml");
    let out = breaker(&["check", "--json", f.to_str().unwrap()]);
    let v = json(&out);
    let m = v["errorDetails"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["key"] == "resilience4j.circuitbreaker.instances.m.minimumNumberOfCalls")
        .expect("the minimumNumberOfCalls error");
    assert_eq!(m["value"], "abc");
    assert_eq!(m["message"], "Failed to convert 'abc' to java.lang.Integer");
    assert_eq!(m["allowed"], "a whole number from 1 to 2147483647");
}

/// breaker's own `breaker.*` keys (issue #16) are shown, without the URL's credentials, and
/// raise no warning.
#[test]
fn shared_state_is_shown_without_credentials() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shared_state.yml");
    let file = file.to_str().unwrap();
    let out = breaker(&["check", "--strict", file]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("circuit breaker 'paymentService': store redis"),
        "{text}"
    );
    assert!(text.contains("redis url: redis://cache:6379/0"), "{text}");
    assert!(text.contains("redis refresh-interval: 50 ms"), "{text}");
    // Issue #29: the fleet-wide rate limiter and bulkhead, and the replica lease.
    assert!(
        text.contains("rate limiter 'providerApi': store redis"),
        "{text}"
    );
    assert!(
        text.contains("bulkhead 'providerPool': store redis"),
        "{text}"
    );
    assert!(text.contains("redis replica-lease: 4000 ms"), "{text}");
    assert!(!text.contains("s3cret"));
    let out = breaker(&["check", "--json", file]);
    let j = json(&out);
    assert_eq!(j["sharedState"]["instances"]["paymentService"], "redis");
    assert_eq!(j["sharedState"]["rateLimiters"]["providerApi"], "redis");
    assert_eq!(j["sharedState"]["bulkheads"]["providerPool"], "redis");
    assert_eq!(j["sharedState"]["redis"]["url"], "redis://cache:6379/0");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("s3cret"));
}
