//! `breaker check` reads the files the service reads (issue #22, items 2 and 4): the
//! profile-specific file beside the one named, imports, the working directory's locations,
//! SPRING_CONFIG_LOCATION, and it lists the files first.

use std::path::Path;
use std::process::{Command, Output};

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn threshold(t: u32) -> String {
    format!("resilience4j.circuitbreaker.instances.payments.failureRateThreshold: {t}\n")
}

/// `breaker` with exactly `env` as its environment, in `dir`.
fn breaker(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_breaker"))
        .current_dir(dir)
        .env_clear()
        .envs(env.iter().copied())
        .args(args)
        .output()
        .expect("runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn active_profile_reads_the_profile_file_beside_the_named_one_and_lists_the_files_first() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "application.yml", &threshold(50));
    write(d.path(), "application-prod.yml", &threshold(66));
    let out = breaker(
        d.path(),
        &[("SPRING_PROFILES_ACTIVE", "prod")],
        &["check", "application.yml"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "Files read (lowest precedence first):\n  application.yml  (config location \
             application.yml)\n  application-prod.yml  (profile prod)\n"
        ),
        "{text}"
    );
    assert!(text.contains("Active profiles: prod"), "{text}");
    let out = breaker(
        d.path(),
        &[("SPRING_PROFILES_ACTIVE", "prod")],
        &["check", "--json", "application.yml"],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["instances"]["payments"]["failureRateThreshold"], 66.0);
    assert_eq!(v["files"][1]["path"], "application-prod.yml");
}

#[test]
fn without_files_it_reads_the_working_directory_like_the_service() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "application.yml", &threshold(50));
    write(d.path(), "config/application.yml", &threshold(40));
    let out = breaker(d.path(), &[], &["check", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // ./config/ overrides ./ (Spring Boot's default locations).
    assert_eq!(v["instances"]["payments"]["failureRateThreshold"], 40.0);
    assert_eq!(v["files"][0]["path"], "./application.yml");
    assert_eq!(v["files"][1]["path"], "./config/application.yml");

    // SPRING_CONFIG_LOCATION replaces the defaults, as for the service.
    write(d.path(), "etc/app.yml", &threshold(30));
    let out = breaker(
        d.path(),
        &[("SPRING_CONFIG_LOCATION", "file:etc/app.yml")],
        &["check", "--json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["instances"]["payments"]["failureRateThreshold"], 30.0);
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
}

#[test]
fn no_file_found_says_what_was_looked_for_and_that_defaults_apply() {
    let d = tempfile::tempdir().unwrap();
    let out = breaker(d.path(), &[], &["check"]);
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(
            "no config file found (looked for ./application.yaml, ./application.yml, \
                      ./application.properties, ./config/application.yaml"
        ),
        "{err}"
    );
    assert!(err.contains("Resilience4j's defaults apply"), "{err}");
    let out = breaker(d.path(), &[], &["check", "--strict"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn imports_are_read_and_a_missing_one_is_an_error_at_its_line() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "application.yml",
        &format!(
            "{}spring.config.import: optional:ops.yml, file:r4j/extra.yml\n",
            threshold(50)
        ),
    );
    write(d.path(), "r4j/extra.yml", &threshold(20));
    let out = breaker(d.path(), &[], &["check", "application.yml"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("  r4j/extra.yml  (imported at application.yml:2:23)"),
        "{text}"
    );
    assert!(
        text.contains("failureRateThreshold") && text.contains("20"),
        "{text}"
    );
    std::fs::remove_file(d.path().join("r4j/extra.yml")).unwrap();
    let out = breaker(d.path(), &[], &["check", "application.yml"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("error: application.yml:2:23: spring.config.import = 'file:r4j/extra.yml': no file r4j/extra.yml"),
        "{err}"
    );
}
