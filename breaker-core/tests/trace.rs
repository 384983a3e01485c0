//! `breaker_core::trace`: transitions as structured `tracing` events at WARN (into OPEN and
//! FORCED_OPEN) or INFO, rejections summarised (one event for many rejections), module
//! rejections likewise.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::bulkhead::{BulkheadConfig, BulkheadRegistry};
use breaker_core::{trace, CircuitBreakerConfig, ManualClock, Registry};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber};

/// One captured event: level, target, fields.
type CapturedEvent = (Level, String, Vec<(String, String)>);

#[derive(Default, Clone)]
struct Captured(Arc<Mutex<Vec<CapturedEvent>>>);

struct Fields(Vec<(String, String)>);
impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .push((field.name().to_string(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_string(), value.to_string()));
    }
}

impl Subscriber for Captured {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, e: &Event<'_>) {
        let mut f = Fields(Vec::new());
        e.record(&mut f);
        self.0.lock().unwrap().push((
            *e.metadata().level(),
            e.metadata().target().to_string(),
            f.0,
        ));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> &'a str {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no field {name} in {fields:?}"))
}

#[test]
fn transitions_and_summarised_rejections() {
    let captured = Captured::default();
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    tracing::subscriber::with_default(captured.clone(), || {
        let registry = Registry::with_default_config(
            CircuitBreakerConfig::builder()
                .sliding_window_size(2)
                .minimum_number_of_calls(2)
                .wait_duration_in_open_state(Duration::from_secs(60))
                .clock(Arc::new(clock.clone()))
                .build()
                .unwrap(),
        );
        trace::circuit_breakers(&registry);
        let cb = registry.circuit_breaker("payments");
        cb.try_acquire_permission().unwrap().on_error();
        cb.try_acquire_permission().unwrap().on_error();
        // 100 rejections within 2 s: one summary at the first, the rest pending.
        for _ in 0..100 {
            clock.advance(Duration::from_millis(20));
            assert!(cb.try_acquire_permission().is_err());
        }
        // 10 s after the first summary, the next rejection logs the 99 + 1.
        clock.advance(Duration::from_secs(10));
        assert!(cb.try_acquire_permission().is_err());
        cb.transition_to_closed_state().unwrap();
    });
    // The failure-rate event before the transition is DEBUG; an operator sees the rest.
    let events: Vec<_> = captured
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(l, _, _)| *l != Level::DEBUG)
        .cloned()
        .collect();
    type Summary<'a> = (
        Level,
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
    );
    let summary: Vec<Summary<'_>> = events
        .iter()
        .map(|(l, t, f)| {
            let get = |n: &str| f.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
            (*l, t.as_str(), get("from"), get("to"), get("rejected"))
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                Level::WARN,
                "breaker::circuit_breaker",
                Some("CLOSED"),
                Some("OPEN"),
                None
            ),
            (
                Level::WARN,
                "breaker::circuit_breaker",
                None,
                None,
                Some("1")
            ),
            (
                Level::WARN,
                "breaker::circuit_breaker",
                None,
                None,
                Some("100")
            ),
            (
                Level::INFO,
                "breaker::circuit_breaker",
                Some("OPEN"),
                Some("CLOSED"),
                None
            ),
        ],
        "{events:?}"
    );
    assert_eq!(field(&events[0].2, "name"), "payments");
    assert_eq!(
        field(&events[0].2, "message"),
        "CircuitBreaker 'payments' changed state from CLOSED to OPEN"
    );
}

#[test]
fn module_rejections_are_summarised_too() {
    let captured = Captured::default();
    tracing::subscriber::with_default(captured.clone(), || {
        let registry = BulkheadRegistry::with_default_config(
            BulkheadConfig::builder()
                .max_concurrent_calls(1)
                .build()
                .unwrap(),
        );
        trace::instances(&registry);
        let b = registry.bulkhead("inventory");
        let _held = b.try_acquire_permission().unwrap();
        for _ in 0..50 {
            assert!(b.try_acquire_permission().is_err());
        }
    });
    let events = captured.0.lock().unwrap().clone();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].0, Level::WARN);
    assert_eq!(events[0].1, "breaker::bulkhead");
    assert_eq!(field(&events[0].2, "name"), "inventory");
    assert_eq!(field(&events[0].2, "rejected"), "1");
}
