//! `breaker check` with the issue-22 inputs: an unresolvable placeholder (the check passes,
//! the value is its text, a warning names it), the count line it ends with, and values from
//! the environment and `SPRING_APPLICATION_JSON` shown with their origin.

use std::path::Path;
use std::process::{Command, Output};

const FILE: &str = "management.metrics.tags.application: ${spring.application.name}
resilience4j.circuitbreaker.instances.svc.failureRateThreshold: 40
";

fn check(dir: &Path, text: &str, env: &[(&str, &str)]) -> Output {
    let path = dir.join("application.yml");
    std::fs::write(&path, text).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_breaker"));
    cmd.arg("check").arg(&path);
    // The test's own environment must not leak in: only the variables given here.
    for (k, _) in std::env::vars() {
        let u = k.to_ascii_uppercase();
        if ["RESILIENCE4J", "MANAGEMENT", "BREAKER", "SPRING"]
            .iter()
            .any(|p| u.starts_with(p))
        {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().copied()).output().expect("runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn an_unresolvable_placeholder_passes_with_a_warning_and_a_count() {
    let dir = tempfile::tempdir().unwrap();
    let out = check(dir.path(), FILE, &[]);
    let s = stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{s}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        s.contains("management.metrics.tags.application: could not resolve placeholder '${spring.application.name}'"),
        "{s}"
    );
    assert!(s.contains("failureRateThreshold"), "{s}");
    assert!(!s.contains("No warnings."), "{s}");
    assert!(s.ends_with("0 errors, 1 warning\n"), "{s}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn an_error_is_counted_last_and_nothing_says_no_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let out = check(
        dir.path(),
        "resilience4j.circuitbreaker.instances.svc.failureRateThreshold: ${RATE}\n",
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let s = stdout(&out);
    assert!(!s.contains("No warnings."), "{s}");
    assert!(s.ends_with("1 error, 1 warning\n"), "{s}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("application.yml:1:65: resilience4j.circuitbreaker.instances.svc.failureRateThreshold = '${RATE}': Failed to convert '${RATE}' to java.lang.Float"),
        "{err}"
    );
}

#[test]
fn values_from_the_environment_and_json_show_their_origin() {
    let dir = tempfile::tempdir().unwrap();
    let var = "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_SVC_FAILURERATETHRESHOLD";
    let out = check(
        dir.path(),
        FILE,
        &[(var, "30"), ("SPRING_APPLICATION_NAME", "shop")],
    );
    let s = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{s}");
    assert!(
        s.contains(&format!("30.0 %  [instance environment {var}]")),
        "{s}"
    );
    assert!(s.ends_with("0 errors, 0 warnings\n"), "{s}");

    let json =
        r#"{"resilience4j":{"circuitbreaker":{"instances":{"svc":{"failureRateThreshold":20}}}}}"#;
    let out = check(
        dir.path(),
        FILE,
        &[(var, "30"), ("SPRING_APPLICATION_JSON", json)],
    );
    let s = stdout(&out);
    assert!(
        s.contains("20.0 %  [instance SPRING_APPLICATION_JSON]"),
        "{s}"
    );
}
