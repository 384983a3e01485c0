//! The circuit breaker layer's `ERROR` event carries the service error's message, as
//! Resilience4j's `errorMessage` does (`class: message`), issue #24 item 3.

use std::error::Error;

use breaker_core::{CircuitBreaker, EventKind};
use breaker_tower::{ByConfig, CircuitBreakerLayer};
use tower::{Service, ServiceBuilder, ServiceExt};

type BoxError = Box<dyn Error + Send + Sync>;

#[tokio::test]
async fn a_failed_request_event_has_the_errors_message() {
    let breaker = CircuitBreaker::with_defaults("backendA");
    let buffer = breaker.attach_event_buffer(4);
    let mut svc = ServiceBuilder::new()
        .layer(CircuitBreakerLayer::from_breaker(breaker.clone()).classifier(ByConfig))
        .service(tower::service_fn(|_: ()| async {
            Err::<(), BoxError>("connection reset by peer".into())
        }));
    let r = svc.ready().await.unwrap().call(()).await;
    assert!(r.is_err());
    let events = buffer.events();
    match &events[0].kind {
        EventKind::Error { error: Some(t), .. } => {
            assert_eq!(t.message(), "connection reset by peer");
            assert_eq!(t.class(), std::any::type_name::<BoxError>());
        }
        other => panic!("expected an ERROR event with its error, got {other:?}"),
    }
}
