use super::*;

#[test]
fn defaults_are_resilience4j_defaults() {
    let c = CircuitBreakerConfig::default();
    assert_eq!(c.failure_rate_threshold(), 50.0);
    assert_eq!(c.slow_call_rate_threshold(), 100.0);
    assert_eq!(c.slow_call_duration_threshold(), Duration::from_secs(60));
    assert_eq!(c.permitted_number_of_calls_in_half_open_state(), 10);
    assert_eq!(c.max_wait_duration_in_half_open_state(), Duration::ZERO);
    assert_eq!(c.transition_to_state_after_wait_duration(), State::Open);
    assert_eq!(c.sliding_window_type(), SlidingWindowType::CountBased);
    assert_eq!(c.sliding_window_size(), 100);
    assert_eq!(c.minimum_number_of_calls(), 100);
    assert_eq!(c.wait_duration_in_open_state(), Duration::from_secs(60));
    assert!(!c.automatic_transition_from_open_to_half_open_enabled());
    assert_eq!(c.initial_state(), State::Closed);
}

#[test]
fn wait_configured_twice_is_rejected() {
    let err = CircuitBreakerConfig::builder()
        .wait_duration_in_open_state(Duration::from_secs(1))
        .wait_duration_in_open_state(Duration::from_secs(2))
        .build()
        .unwrap_err();
    assert!(err
        .to_string()
        .starts_with("The waitIntervalFunction was configured multiple times"));
}

#[test]
fn sliding_window_clamps_minimum_for_count_based_only() {
    let c = CircuitBreakerConfig::builder()
        .sliding_window(5, 10, SlidingWindowType::CountBased)
        .build()
        .unwrap();
    assert_eq!(c.minimum_number_of_calls(), 5);
    let t = CircuitBreakerConfig::builder()
        .sliding_window(5, 10, SlidingWindowType::TimeBased)
        .build()
        .unwrap();
    assert_eq!(t.minimum_number_of_calls(), 10);
}

#[test]
fn record_exceptions_limit_failures_and_ignore_wins() {
    #[derive(Debug)]
    enum E {
        Io,
        Parse,
        Ignored,
    }
    let catalog = ErrorCatalog::new()
        .register("java.io.IOException", |e: &E| {
            matches!(e, E::Io | E::Ignored)
        })
        .register("IgnoredException", |e: &E| matches!(e, E::Ignored));
    let c = CircuitBreakerConfig::builder()
        .error_catalog(catalog)
        .record_exceptions(["java.io.IOException"])
        .ignore_exceptions(["IgnoredException"])
        .build()
        .unwrap();
    assert_eq!(c.classify_error(&E::Io), Outcome::Failure);
    assert_eq!(c.classify_error(&E::Parse), Outcome::Success);
    assert_eq!(c.classify_error(&E::Ignored), Outcome::Ignored);
    assert_eq!(
        CircuitBreakerConfig::default().classify_error(&E::Parse),
        Outcome::Failure
    );
}
