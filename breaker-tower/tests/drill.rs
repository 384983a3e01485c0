//! `DrillLayer` innermost under a `CircuitBreakerLayer` (issue #28): an injected error opens
//! the breaker as the dependency's own would, a rejection is downcastable as a real one, and
//! latency waits on the drill's clock.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breaker_core::bulkhead::BulkheadFullException;
use breaker_core::drill::{DrillConfig, DrillErrorKind, DrillRegistry, Fault, Latency, Rejection};
use breaker_core::{CallNotPermitted, CircuitBreakerConfig, ManualClock, Registry, State};
use breaker_tower::{ByConfig, CircuitBreakerLayer, DrillLayer};
use tower::{Service, ServiceBuilder, ServiceExt};

fn dependency(
    calls: Arc<AtomicU32>,
) -> impl Service<(), Response = u32, Error = std::io::Error, Future = impl Send> + Clone + Send + 'static
{
    tower::service_fn(move |()| {
        calls.fetch_add(1, Ordering::SeqCst);
        async { Ok::<u32, std::io::Error>(200) }
    })
}

#[tokio::test]
async fn an_injected_error_opens_the_breaker_outside() {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let drills = DrillRegistry::with_clock(Arc::new(clock.clone()));
    let breakers = Registry::with_default_config(
        CircuitBreakerConfig::builder()
            .sliding_window_size(3)
            .minimum_number_of_calls(3)
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap(),
    );
    let calls = Arc::new(AtomicU32::new(0));
    let mut svc = ServiceBuilder::new()
        .layer(CircuitBreakerLayer::new(&breakers, "inventory").classifier(ByConfig))
        .layer(DrillLayer::new(&drills, "inventory"))
        .service(dependency(calls.clone()));
    assert_eq!(svc.ready().await.unwrap().call(()).await.unwrap(), 200);
    let io = DrillErrorKind::Named("java.io.IOException".into());
    drills
        .start("inventory", DrillConfig::new(Fault::Error(io)))
        .unwrap();
    for _ in 0..2 {
        let e = svc.ready().await.unwrap().call(()).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "drill of 'inventory' injected java.io.IOException"
        );
    }
    // 1 success and 2 failures of 3: 66.7% >= 50%.
    assert_eq!(breakers.circuit_breaker("inventory").state(), State::Open);
    let e = svc.ready().await.unwrap().call(()).await.unwrap_err();
    assert!(e.downcast_ref::<CallNotPermitted>().is_some(), "{e}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        drills.drill("inventory").unwrap().metrics().injected_errors,
        2
    );
}

#[tokio::test]
async fn rejections_downcast_and_latency_waits_on_the_clock() {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let drills = DrillRegistry::with_clock(Arc::new(clock.clone()));
    let calls = Arc::new(AtomicU32::new(0));
    let mut svc = ServiceBuilder::new()
        .layer(DrillLayer::new(&drills, "inventory"))
        .service(dependency(calls.clone()));
    let full = Fault::Error(DrillErrorKind::Rejection(Rejection::BulkheadFull));
    drills.start("inventory", DrillConfig::new(full)).unwrap();
    let e = svc.ready().await.unwrap().call(()).await.unwrap_err();
    let full = e
        .downcast_ref::<BulkheadFullException>()
        .expect("a BulkheadFullException");
    assert_eq!(full.bulkhead_name(), "inventory");

    let slow = Fault::Latency(Latency::Fixed(Duration::from_secs(3)));
    drills.start("inventory", DrillConfig::new(slow)).unwrap();
    let mut call = pin!(svc.ready().await.unwrap().call(()));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(call.as_mut().poll(&mut cx).is_pending());
    clock.advance(Duration::from_secs(3));
    match call.as_mut().poll(&mut cx) {
        Poll::Ready(r) => assert_eq!(r.unwrap(), 200),
        Poll::Pending => panic!("the latency is over"),
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
