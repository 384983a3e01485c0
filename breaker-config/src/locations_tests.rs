//! Which files are read: Spring Boot's locations, profiles and imports (issue #22, item 2).

use super::*;

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn threshold(t: u32) -> String {
    format!("resilience4j.circuitbreaker.instances.svc.failureRateThreshold: {t}\n")
}

fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn load_in(dir: &Path, vars: &[(&str, &str)]) -> Result<(ConfigFiles, Loaded), LoadError> {
    ConfigLocations::new()
        .base_dir(dir)
        .load(&Loader::new().env(env(vars)))
}

fn value(loaded: &Loaded) -> f64 {
    loaded.config.instances["svc"].failure_rate_threshold.value as f64
}

fn names(files: &ConfigFiles, dir: &Path) -> Vec<String> {
    files
        .files
        .iter()
        .map(|f| {
            f.path
                .strip_prefix(dir)
                .unwrap_or(&f.path)
                .display()
                .to_string()
        })
        .collect()
}

#[test]
fn default_locations_config_dir_wins_and_properties_win_over_yaml() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "application.yml", &threshold(10));
    write(d.path(), "config/application.yml", &threshold(20));
    write(
        d.path(),
        "config/application.properties",
        "resilience4j.circuitbreaker.instances.svc.failureRateThreshold=30\n",
    );
    write(d.path(), "config/extra/application.yml", &threshold(40));
    let (files, loaded) = load_in(d.path(), &[]).unwrap();
    assert_eq!(
        names(&files, d.path()),
        [
            "./application.yml",
            "./config/application.yml",
            "./config/application.properties",
            "config/extra/application.yml",
        ]
        .map(|s| s.trim_start_matches("./").to_string())
        .to_vec()
    );
    // `./config/*/` comes last of the default locations: it wins.
    assert_eq!(value(&loaded), 40.0);
}

#[test]
fn profile_file_beside_the_location_overrides_it() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "application.yml", &threshold(50));
    write(d.path(), "application-prod.yml", &threshold(66));
    let (files, loaded) = load_in(d.path(), &[("SPRING_PROFILES_ACTIVE", "prod")]).unwrap();
    assert_eq!(
        names(&files, d.path()),
        ["application.yml", "application-prod.yml"]
    );
    assert_eq!(files.files[1].reason, FileReason::Profile("prod".into()));
    assert_eq!(value(&loaded), 66.0);
    // Without the profile, the `default` profile's file is looked for, not prod's.
    let (files, loaded) = load_in(d.path(), &[]).unwrap();
    assert_eq!(names(&files, d.path()), ["application.yml"]);
    assert!(files
        .looked_for
        .contains(&d.path().join("application-default.yml")));
    assert_eq!(value(&loaded), 50.0);
}

#[test]
fn profile_named_in_the_file_reads_its_profile_file() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "application.yml",
        &format!("spring.profiles.active: eu\n{}", threshold(50)),
    );
    write(d.path(), "application-eu.yml", &threshold(25));
    let (files, loaded) = load_in(d.path(), &[]).unwrap();
    assert_eq!(files.profiles, ["eu"]);
    assert_eq!(value(&loaded), 25.0);
}

#[test]
fn explicit_file_reads_its_profile_variant() {
    // `SPRING_PROFILES_ACTIVE=prod breaker check application.yml`.
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "application.yml", &threshold(50));
    write(d.path(), "application-prod.yml", &threshold(66));
    let main = d.path().join("application.yml");
    let (files, loaded) = ConfigLocations::files(&[&main])
        .load(&Loader::new().env(env(&[("SPRING_PROFILES_ACTIVE", "prod")])))
        .unwrap();
    assert_eq!(
        files.paths(),
        [main.clone(), d.path().join("application-prod.yml")]
    );
    assert_eq!(value(&loaded), 66.0);
    // A missing explicit file is an error naming it.
    let err = ConfigLocations::files(&[d.path().join("nope.yml")])
        .resolve(&Loader::new().env(env(&[])))
        .unwrap_err();
    assert!(err.to_string().contains("nope.yml"), "{err}");
}

#[test]
fn imported_file_wins_over_the_importer_relative_to_it() {
    let d = tempfile::tempdir().unwrap();
    // The import is written before the key: the imported value still wins.
    write(
        d.path(),
        "config/application.yml",
        &format!("spring.config.import: file:more/r4j.yml\n{}", threshold(50)),
    );
    write(d.path(), "config/more/r4j.yml", &threshold(35));
    let (files, loaded) = load_in(d.path(), &[]).unwrap();
    assert_eq!(
        names(&files, d.path()),
        ["./config/application.yml", "./config/more/r4j.yml"].map(|s| s.trim_start_matches("./"))
    );
    match &files.files[1].reason {
        FileReason::Import(o) => assert_eq!((o.line, o.column), (1, 23)),
        other => panic!("{other:?}"),
    }
    assert_eq!(value(&loaded), 35.0);
}

#[test]
fn imports_as_a_yaml_list_later_wins_and_profile_variant_of_an_import() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "application.yml",
        "spring:\n  config:\n    import:\n      - a.yml\n      - optional:b.yml\n",
    );
    write(d.path(), "a.yml", &threshold(11));
    write(d.path(), "b.yml", &threshold(22));
    write(d.path(), "b-prod.yml", &threshold(33));
    let (_, loaded) = load_in(d.path(), &[]).unwrap();
    assert_eq!(value(&loaded), 22.0);
    let (files, loaded) = load_in(d.path(), &[("SPRING_PROFILES_ACTIVE", "prod")]).unwrap();
    assert_eq!(
        names(&files, d.path()),
        ["application.yml", "a.yml", "b.yml", "b-prod.yml"]
    );
    assert_eq!(value(&loaded), 33.0);
}

#[test]
fn optional_missing_import_is_skipped_and_a_required_one_is_an_error_at_its_line() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "application.yml",
        &format!("spring.config.import: optional:gone.yml\n{}", threshold(50)),
    );
    let (files, loaded) = load_in(d.path(), &[]).unwrap();
    assert_eq!(files.files.len(), 1);
    assert_eq!(value(&loaded), 50.0);

    write(
        d.path(),
        "application.yml",
        &format!("{}spring.config.import: gone.yml\n", threshold(50)),
    );
    let err = load_in(d.path(), &[]).unwrap_err();
    let LoadError::Location { at, message } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        at,
        &format!("{}:2:23", d.path().join("application.yml").display())
    );
    assert!(
        message.contains("'gone.yml'") && message.contains("optional:"),
        "{message}"
    );
}

#[test]
fn import_cycle_reads_each_file_once_and_too_deep_chain_is_an_error() {
    // Spring Boot's ConfigDataImporter loads a resource once: a cycle is no error, and the file
    // named again keeps its first place (b.yml imports a.yml, already read: skipped).
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "application.yml", "spring.config.import: a.yml\n");
    write(
        d.path(),
        "a.yml",
        &format!("spring.config.import: b.yml\n{}", threshold(20)),
    );
    write(
        d.path(),
        "b.yml",
        &format!("spring.config.import: a.yml\n{}", threshold(30)),
    );
    let (files, loaded) = load_in(d.path(), &[]).unwrap();
    assert_eq!(
        names(&files, d.path()),
        ["application.yml", "a.yml", "b.yml"]
    );
    // b.yml is imported by a.yml's document, so it wins over a.yml.
    assert_eq!(value(&loaded), 30.0);

    // A chain of 40 distinct files: deeper than MAX_IMPORT_DEPTH, refused (no overflow).
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "application.yml",
        "spring.config.import: f0.yml\n",
    );
    for i in 0..40 {
        write(
            d.path(),
            &format!("f{i}.yml"),
            &format!("spring.config.import: f{}.yml\n", i + 1),
        );
    }
    write(d.path(), "f40.yml", &threshold(1));
    let err = load_in(d.path(), &[]).unwrap_err();
    assert!(err.to_string().contains("deeper than 32"), "{err}");
}

#[test]
fn config_location_replaces_the_defaults() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "application.yml", &threshold(50));
    write(d.path(), "etc/svc.yml", &threshold(70));
    write(d.path(), "etc/svc-prod.yml", &threshold(80));
    let (files, loaded) = load_in(
        d.path(),
        &[("SPRING_CONFIG_LOCATION", "optional:file:etc/svc.yml")],
    )
    .unwrap();
    assert_eq!(names(&files, d.path()), ["etc/svc.yml"]);
    assert_eq!(value(&loaded), 70.0);
    let (_, loaded) = load_in(
        d.path(),
        &[
            ("SPRING_CONFIG_LOCATION", "etc/svc.yml"),
            ("SPRING_PROFILES_ACTIVE", "prod"),
        ],
    )
    .unwrap();
    assert_eq!(value(&loaded), 80.0);
    // A directory location reads `application.yml` in it.
    let (files, _) = load_in(d.path(), &[("SPRING_CONFIG_LOCATION", "etc/")]).unwrap();
    assert!(files.files.is_empty());
    // A missing required location is an error; an optional one is skipped.
    let err = load_in(d.path(), &[("SPRING_CONFIG_LOCATION", "file:nope/")]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("environment SPRING_CONFIG_LOCATION: "),
        "{err}"
    );
    let (files, _) = load_in(d.path(), &[("SPRING_CONFIG_LOCATION", "optional:nope/")]).unwrap();
    assert!(files.files.is_empty());
}

#[test]
fn additional_location_adds_and_wins() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "application.yml", &threshold(50));
    write(d.path(), "ops/application.yml", &threshold(45));
    let (files, loaded) = load_in(
        d.path(),
        &[("SPRING_CONFIG_ADDITIONAL_LOCATION", "file:ops/")],
    )
    .unwrap();
    assert_eq!(
        names(&files, d.path()),
        ["./application.yml", "ops/application.yml"].map(|s| s.trim_start_matches("./"))
    );
    assert_eq!(value(&loaded), 45.0);
}

#[test]
fn classpath_and_config_server_imports_are_warnings() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "application.yml",
        &format!(
            "spring.config.import: classpath:extra.yml, optional:configserver:http://c\n{}",
            threshold(50)
        ),
    );
    let (_, loaded) = load_in(d.path(), &[]).unwrap();
    let w: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].contains("'classpath:extra.yml' is not read"), "{w:?}");
    assert!(
        w[1].contains("'optional:configserver:http://c' is not read"),
        "{w:?}"
    );
}

#[test]
fn import_in_a_profile_document_follows_the_profile() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "application.yml",
        &format!(
            "{}---\nspring.config.activate.on-profile: prod\nspring.config.import: prod-extra.yml\n",
            threshold(50)
        ),
    );
    write(d.path(), "prod-extra.yml", &threshold(90));
    let (_, loaded) = load_in(d.path(), &[]).unwrap();
    assert_eq!(value(&loaded), 50.0);
    let (_, loaded) = load_in(d.path(), &[("SPRING_PROFILES_ACTIVE", "prod")]).unwrap();
    assert_eq!(value(&loaded), 90.0);
}

#[test]
fn config_name_changes_the_file_name() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "application.yml", &threshold(50));
    write(d.path(), "payments.yml", &threshold(60));
    let (files, loaded) = load_in(d.path(), &[("SPRING_CONFIG_NAME", "payments")]).unwrap();
    assert_eq!(files.files.len(), 1);
    assert_eq!(value(&loaded), 60.0);
}

#[test]
fn a_loader_given_files_warns_that_it_does_not_follow_imports() {
    let text = format!("spring.config.import: extra.yml\n{}", threshold(50));
    let loaded = Loader::new()
        .env(env(&[]))
        .load_str("application.yml", Format::Yaml, &text)
        .unwrap();
    let w: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("application.yml:1:1: spring.config.import: not followed here"),
        "{w:?}"
    );
    // Through the locations the import is read, and there is no such warning.
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "application.yml", &text);
    write(d.path(), "extra.yml", &threshold(60));
    let (_, loaded) = load_in(d.path(), &[]).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(value(&loaded), 60.0);
}

#[test]
fn a_documents_imports_lose_to_the_later_documents_of_its_file() {
    // Spring Boot makes each document a contributor whose imports sit right above it: the
    // import beats its own document, and a later document of the file beats both.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "application.yml",
        &format!(
            "spring.config.import: extra.yml\n{}---\n{}",
            threshold(10),
            "resilience4j.circuitbreaker.instances.svc.slidingWindowSize: 30\n"
        ),
    );
    write(
        d.path(),
        "extra.yml",
        &format!(
            "{}resilience4j.circuitbreaker.instances.svc.slidingWindowSize: 20\n",
            threshold(15)
        ),
    );
    let (_, loaded) = load_in(d.path(), &[]).unwrap();
    let svc = &loaded.config.instances["svc"];
    assert_eq!(svc.failure_rate_threshold.value, 15.0); // the import over its document
    assert_eq!(svc.sliding_window_size.value, 30); // the later document over the import
}
