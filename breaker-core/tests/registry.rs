//! Registry behaviour: creation from configs, events, live config replacement, buffers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::{
    CircuitBreakerConfig, EventType, InstanceSettings, ManualClock, Registry, RegistryError,
    RegistryEvent, State,
};

fn window(size: i64) -> CircuitBreakerConfig {
    CircuitBreakerConfig::builder()
        .sliding_window_size(size)
        .minimum_number_of_calls(size)
        .build()
        .unwrap()
}

#[test]
fn registry_events_added_replaced_removed() {
    let registry = Registry::new();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let s = seen.clone();
    registry.subscribe(move |e| {
        s.lock().unwrap().push(match e {
            RegistryEvent::Added(b) => format!("added {}", b.name()),
            RegistryEvent::Replaced { breaker, old, new } => format!(
                "replaced {} {}->{}",
                breaker.name(),
                old.sliding_window_size(),
                new.sliding_window_size()
            ),
            RegistryEvent::Removed(b) => format!("removed {}", b.name()),
        })
    });
    registry.circuit_breaker("a");
    registry.circuit_breaker("a");
    registry.configure_instance("a", window(5));
    registry.remove("a");
    assert_eq!(
        *seen.lock().unwrap(),
        ["added a", "replaced a 100->5", "removed a"]
    );
}

#[test]
fn named_configs_and_the_reserved_default() {
    let registry = Registry::new();
    assert_eq!(
        registry.add_configuration("default", window(3)),
        Err(RegistryError::DefaultIsReserved)
    );
    registry.add_configuration("shared", window(3)).unwrap();
    let b = registry
        .circuit_breaker_with_config_name("b", "shared")
        .unwrap();
    assert_eq!(b.config().sliding_window_size(), 3);
    let err = registry
        .circuit_breaker_with_config_name("c", "nope")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Configuration with name 'nope' does not exist"
    );
    // An existing breaker is returned whatever config is asked for, as in Resilience4j.
    assert!(registry
        .circuit_breaker_with_config_name("b", "nope")
        .unwrap()
        .ptr_eq(&b));
}

#[test]
fn a_new_default_reaches_breakers_that_follow_it_but_not_configured_ones() {
    let registry = Registry::new();
    let follower = registry.circuit_breaker("follower");
    let own = registry.configure_instance("own", window(7));
    registry.set_default_config(window(4));
    assert_eq!(follower.config().sliding_window_size(), 4);
    assert_eq!(own.config().sliding_window_size(), 7);
    assert_eq!(
        registry
            .circuit_breaker("later")
            .config()
            .sliding_window_size(),
        4
    );
}

#[test]
fn replacing_a_config_keeps_an_open_breaker_open_and_applies_new_thresholds() {
    let registry = Registry::new();
    let cb = registry.configure_instance("p", window(4));
    for _ in 0..2 {
        cb.try_acquire_permission().unwrap().on_success();
    }
    // Same window type and size: the two recorded calls stay.
    registry.configure_instance(
        "p",
        window(4)
            .to_builder()
            .failure_rate_threshold(25.0)
            .build()
            .unwrap(),
    );
    assert_eq!(cb.metrics().number_of_buffered_calls, 2);
    cb.try_acquire_permission().unwrap().on_success();
    cb.try_acquire_permission().unwrap().on_error();
    // 1 of 4 = 25 % >= the new 25 % threshold.
    assert_eq!(cb.state(), State::Open);
    // A different window size starts a fresh window but keeps the OPEN state.
    registry.configure_instance(
        "p",
        window(10)
            .to_builder()
            .wait_duration_in_open_state(Duration::from_secs(1))
            .build()
            .unwrap(),
    );
    assert_eq!(cb.state(), State::Open);
}

fn buffer_of(size: u32) -> CircuitBreakerConfig {
    CircuitBreakerConfig::builder()
        .instance_settings(InstanceSettings {
            event_consumer_buffer_size: size,
            ..InstanceSettings::default()
        })
        .build()
        .unwrap()
}

#[test]
fn event_buffers_keep_the_last_events_when_enabled() {
    let registry = Registry::new();
    registry.configure_instance("p", buffer_of(2));
    let cb = registry.circuit_breaker("p");
    assert_eq!(registry.recent_events("p"), None);
    registry.enable_event_buffers();
    for _ in 0..3 {
        cb.try_acquire_permission().unwrap().on_success();
    }
    cb.try_acquire_permission().unwrap().on_error();
    let kinds: Vec<EventType> = registry
        .recent_events("p")
        .unwrap()
        .iter()
        .map(|e| e.event_type())
        .collect();
    assert_eq!(kinds, [EventType::Success, EventType::Error]);
    // Breakers created later for other names get the default config's size: 100.
    let q = registry.circuit_breaker("q");
    for _ in 0..150 {
        q.try_acquire_permission().unwrap().on_success();
    }
    assert_eq!(registry.recent_events("q").unwrap().len(), 100);
}

#[test]
fn event_buffer_sizes_follow_the_config_for_unlisted_names_and_replacements() {
    let registry = Registry::with_default_config(buffer_of(10));
    registry.enable_event_buffers();
    let any = registry.circuit_breaker("not-configured");
    for _ in 0..15 {
        any.try_acquire_permission().unwrap().on_success();
    }
    assert_eq!(registry.event_buffer_capacity("not-configured"), Some(10));
    assert_eq!(registry.recent_events("not-configured").unwrap().len(), 10);
    // A new default (a reload) resizes the buffers of the breakers that follow it.
    registry.set_default_config(buffer_of(3));
    assert_eq!(registry.event_buffer_capacity("not-configured"), Some(3));
    assert_eq!(registry.recent_events("not-configured").unwrap().len(), 3);
    registry.apply(
        buffer_of(5),
        Vec::new(),
        vec![("listed".into(), buffer_of(7))],
    );
    assert_eq!(registry.event_buffer_capacity("not-configured"), Some(5));
    assert_eq!(registry.event_buffer_capacity("listed"), Some(7));
    let zero = CircuitBreakerConfig::builder()
        .instance_settings(InstanceSettings {
            event_consumer_buffer_size: 0,
            ..InstanceSettings::default()
        })
        .build()
        .unwrap_err();
    assert_eq!(
        zero.to_string(),
        "eventConsumerBufferSize must be greater than or equal to 1."
    );
}

#[test]
fn a_registry_clock_runs_every_breaker_it_creates() {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let registry = Registry::with_default_config(window(2));
    registry.set_clock(Arc::new(clock.clone()));
    registry.configure_instance("listed", window(2));
    for name in ["listed", "made-later"] {
        let cb = registry.circuit_breaker(name);
        cb.try_acquire_permission().unwrap().on_error();
        cb.try_acquire_permission().unwrap().on_error();
        assert_eq!(cb.state(), State::Open, "{name}");
        clock.advance(Duration::from_secs(60));
        assert!(
            cb.try_acquire_permission().is_err(),
            "{name}: wait not over"
        );
        clock.advance(Duration::from_millis(1));
        assert!(cb.try_acquire_permission().is_ok(), "{name}: wait over");
        assert_eq!(cb.state(), State::HalfOpen);
    }
}
