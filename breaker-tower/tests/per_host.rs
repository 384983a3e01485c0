//! One breaker per downstream host (issue #29): a failing host opens its own circuit, the
//! other host's requests still go through.

use breaker_core::{CircuitBreakerConfig, Registry, State};
use breaker_tower::{request_authority, PerHostCircuitBreakerLayer};
use tower::{Layer, Service, ServiceExt};

fn get(uri: &str) -> http::Request<()> {
    http::Request::get(uri).body(()).unwrap()
}

#[tokio::test]
async fn a_failing_host_opens_only_its_own_circuit() {
    let registry = Registry::new();
    registry.configure_instance(
        "upstreams",
        CircuitBreakerConfig::builder()
            .sliding_window_size(2)
            .minimum_number_of_calls(2)
            .build()
            .unwrap(),
    );
    let layer = PerHostCircuitBreakerLayer::new(&registry, "upstreams", Default::default());
    let breakers = layer.breakers().clone();
    // a.example answers 503, b.example 200.
    let mut svc = layer.layer(tower::service_fn(|req: http::Request<()>| async move {
        let status = if req.uri().host() == Some("a.example") {
            503
        } else {
            200
        };
        Ok::<_, std::convert::Infallible>(
            http::Response::builder().status(status).body(()).unwrap(),
        )
    }));
    for _ in 0..2 {
        let r = svc
            .ready()
            .await
            .unwrap()
            .call(get("http://a.example/x"))
            .await;
        assert_eq!(r.unwrap().status(), 503);
    }
    assert_eq!(breakers.get("a.example").state(), State::Open);
    let refused = svc
        .ready()
        .await
        .unwrap()
        .call(get("http://a.example/x"))
        .await;
    assert!(refused.is_err(), "a.example's circuit is open");
    for _ in 0..3 {
        let r = svc
            .ready()
            .await
            .unwrap()
            .call(get("http://b.example:8080/y"))
            .await;
        assert_eq!(r.unwrap().status(), 200);
    }
    assert_eq!(breakers.get("b.example:8080").state(), State::Closed);
    assert_eq!(breakers.keys(), ["a.example", "b.example:8080"]);
    assert_eq!(breakers.get("a.example").name(), "upstreams/a.example");
}

#[test]
fn the_key_is_the_authority_else_the_host_header() {
    assert_eq!(
        request_authority(&get("http://API.example:443/p")),
        "api.example:443"
    );
    let req = http::Request::get("/p")
        .header(http::header::HOST, "svc.internal")
        .body(())
        .unwrap();
    assert_eq!(request_authority(&req), "svc.internal");
    assert_eq!(request_authority(&get("/p")), "unknown");
}
