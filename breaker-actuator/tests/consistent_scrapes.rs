//! A Prometheus scrape is a consistent snapshot (issue 24): with 8 scrapers at once against a
//! breaker that changes state all the time, every one of 10,000 responses shows exactly one
//! of the breaker's six `resilience4j_circuitbreaker_state` series at 1 and five at 0.
//!
//! Served in process (`tower::ServiceExt::oneshot` on the router, no sockets) to keep the
//! test short on a loaded machine; no timing is asserted.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use breaker_actuator::{install_prometheus_recorder, Actuator};
use breaker_config::ManagementConfig;
use breaker_core::{CircuitBreakerConfig, Registry, State};
use tower::ServiceExt;

const SCRAPERS: usize = 8;
const RESPONSES: usize = 10_000;

/// The value of the series of `metric` whose labels contain `label`.
fn values<'a>(text: &'a str, metric: &'a str, label: &'a str) -> impl Iterator<Item = f64> + 'a {
    text.lines()
        .filter(move |l| l.starts_with(metric) && l[metric.len()..].starts_with('{'))
        .filter(move |l| l.contains(label))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_scrapers_never_see_a_torn_breaker() {
    let handle = install_prometheus_recorder(&ManagementConfig::default()).unwrap();
    let registry = Registry::new();
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(4)
        .minimum_number_of_calls(4)
        .build()
        .unwrap();
    let cb = registry.circuit_breaker_with_config("flip", config);
    let router = Actuator::new(registry).prometheus(handle).router();

    // The breaker cycles through every state, as fast as it can, until the scrapers are done.
    let done = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (cb, done) = (cb.clone(), done.clone());
        std::thread::spawn(move || {
            let mut cycles = 0u64;
            while !done.load(Ordering::Relaxed) {
                for s in [
                    State::Closed,
                    State::Open,
                    State::HalfOpen,
                    State::Disabled,
                    State::ForcedOpen,
                    State::MetricsOnly,
                ] {
                    cb.transition_to(s).unwrap();
                    // Leave the scrapers a core on a 2-core machine.
                    std::thread::yield_now();
                }
                cycles += 1;
            }
            cycles
        })
    };

    let served = Arc::new(AtomicUsize::new(0));
    let torn = Arc::new(AtomicUsize::new(0));
    let mut scrapers = Vec::new();
    for _ in 0..SCRAPERS {
        let (router, served, torn) = (router.clone(), served.clone(), torn.clone());
        scrapers.push(tokio::spawn(async move {
            let mut first_torn = None;
            while served.fetch_add(1, Ordering::Relaxed) < RESPONSES {
                let request = Request::get("/actuator/prometheus")
                    .body(Body::empty())
                    .unwrap();
                let response = router.clone().oneshot(request).await.unwrap();
                let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                    .await
                    .unwrap();
                let text = String::from_utf8(body.to_vec()).unwrap();
                let states: Vec<f64> =
                    values(&text, "resilience4j_circuitbreaker_state", "name=\"flip\"").collect();
                assert_eq!(states.len(), 6, "{text}");
                let at_one = states.iter().filter(|v| **v == 1.0).count();
                let zeros = states.iter().filter(|v| **v == 0.0).count();
                if at_one != 1 || zeros != 5 {
                    torn.fetch_add(1, Ordering::Relaxed);
                    first_torn.get_or_insert(text);
                }
            }
            first_torn
        }));
    }
    let mut example = None;
    for s in scrapers {
        if let Some(t) = s.await.unwrap() {
            example.get_or_insert(t);
        }
    }
    done.store(true, Ordering::Relaxed);
    let cycles = flipper.join().unwrap();
    assert!(cycles > 0);
    let torn = torn.load(Ordering::Relaxed);
    assert_eq!(
        torn,
        0,
        "{torn} of {RESPONSES} responses torn ({cycles} state cycles), e.g.\n{}",
        example.unwrap_or_default()
    );
}
