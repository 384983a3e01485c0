//! `resilience4rs::init_from_file_with_args`: the program's arguments override the file, as
//! Spring Boot's command line does (issue 22). Its own test binary: the global registry is
//! per process.

use resilience4rs::ErrorCatalog;

#[test]
fn arguments_override_the_file_for_the_global_registries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    std::fs::write(
        &path,
        "resilience4j:
  circuitbreaker.instances.payments: { failureRateThreshold: 40, slidingWindowSize: 20 }
  retry.instances.payments.maxAttempts: 3
",
    )
    .unwrap();
    let live = resilience4rs::init_from_file_with_args(
        &path,
        ErrorCatalog::new(),
        [
            "serve", // not an option: ignored, as by Spring
            "--resilience4j.retry.instances.payments.max-attempts=5",
            "--resilience4j.circuitbreaker.instances.payments.failure-rate-threshold=10",
        ],
    )
    .unwrap();
    let cb = resilience4rs::global().circuit_breaker("payments");
    assert_eq!(cb.config().failure_rate_threshold(), 10.0);
    assert_eq!(cb.config().sliding_window_size(), 20); // from the file
    let retry = &live.modules().retry.instances["payments"];
    assert_eq!(retry.max_attempts.value, 5);
    assert_eq!(
        retry.max_attempts.origin.as_ref().unwrap().to_string(),
        "argument --resilience4j.retry.instances.payments.max-attempts=5"
    );
    // Once set, a second call is refused.
    assert!(matches!(
        resilience4rs::init_from_file_with_args(&path, ErrorCatalog::new(), Vec::<String>::new()),
        Err(resilience4rs::InitError::AlreadyInitialized(_))
    ));
}
