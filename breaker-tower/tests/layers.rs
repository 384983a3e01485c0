//! The layers in `tower::ServiceBuilder`: HTTP classification, refusals as errors or `503`
//! with `Retry-After`, no permit held by a request that is never sent, retries, bulkheads,
//! and an axum route.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breaker_core::bulkhead::{BulkheadConfig, BulkheadRegistry};
use breaker_core::retry::{RetryConfig, RetryRegistry};
use breaker_core::{CallNotPermitted, CircuitBreakerConfig, ManualClock, Registry, State};
use breaker_tower::{BulkheadLayer, CircuitBreakerLayer, RetryLayer};
use http::{Request, Response, StatusCode};
use tower::{Service, ServiceBuilder, ServiceExt};

fn status_service(
    statuses: Arc<std::sync::Mutex<Vec<u16>>>,
) -> impl Service<Request<()>, Response = Response<String>, Error = Infallible, Future = impl Send>
       + Clone
       + Send
       + 'static {
    tower::service_fn(move |_req: Request<()>| {
        let status = statuses.lock().unwrap().remove(0);
        async move {
            let mut r = Response::new(String::new());
            *r.status_mut() = StatusCode::from_u16(status).unwrap();
            Ok::<_, Infallible>(r)
        }
    })
}

fn registry(clock: &ManualClock, window: i64) -> Registry {
    Registry::with_default_config(
        CircuitBreakerConfig::builder()
            .sliding_window_size(window)
            .minimum_number_of_calls(window)
            .permitted_number_of_calls_in_half_open_state(1)
            .wait_duration_in_open_state(Duration::from_secs(10))
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap(),
    )
}

#[tokio::test]
async fn five_hundreds_fail_four_hundreds_are_ignored_and_rejections_are_errors() {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let registry = registry(&clock, 2);
    let statuses = Arc::new(std::sync::Mutex::new(vec![404, 404, 404, 500, 503]));
    let mut svc = ServiceBuilder::new()
        .layer(CircuitBreakerLayer::new(&registry, "backend"))
        .service(status_service(statuses));
    for _ in 0..3 {
        let r = svc
            .ready()
            .await
            .unwrap()
            .call(Request::new(()))
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
    let cb = registry.circuit_breaker("backend");
    assert_eq!(cb.metrics().number_of_buffered_calls, 0, "4xx are ignored");
    for _ in 0..2 {
        let r = svc
            .ready()
            .await
            .unwrap()
            .call(Request::new(()))
            .await
            .unwrap();
        assert!(r.status().is_server_error());
    }
    assert_eq!(cb.state(), State::Open);
    let err = svc
        .ready()
        .await
        .unwrap()
        .call(Request::new(()))
        .await
        .unwrap_err();
    let rejected = err
        .downcast_ref::<CallNotPermitted>()
        .expect("a CallNotPermitted");
    assert_eq!(rejected.circuit_breaker_name(), "backend");
}

#[tokio::test]
async fn a_rejection_can_answer_503_with_retry_after() {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let registry = registry(&clock, 1);
    let statuses = Arc::new(std::sync::Mutex::new(vec![500]));
    let mut svc = ServiceBuilder::new()
        .layer(CircuitBreakerLayer::new(&registry, "backend").service_unavailable())
        .service(status_service(statuses));
    let r: Response<String> = svc
        .ready()
        .await
        .unwrap()
        .call(Request::new(()))
        .await
        .unwrap();
    assert_eq!(r.status(), 500);
    // OPEN for 10 s; 2.5 s later 7.5 s remain: Retry-After rounds up to 8.
    clock.advance(Duration::from_millis(2_500));
    let r = svc
        .ready()
        .await
        .unwrap()
        .call(Request::new(()))
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "8");
}

#[tokio::test]
async fn a_request_never_sent_holds_no_permit() {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let registry = registry(&clock, 1);
    let cb = registry.circuit_breaker("backend");
    cb.transition_to_open_state().unwrap();
    clock.advance(Duration::from_secs(11));
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    let mut svc = ServiceBuilder::new()
        .layer(CircuitBreakerLayer::new(&registry, "backend"))
        .service(tower::service_fn(move |_r: Request<()>| {
            c.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, Infallible>(Response::new(String::new())) }
        }));
    // Ready, called, and dropped unpolled, many times: HALF_OPEN's single trial permit
    // (permittedNumberOfCallsInHalfOpenState: 1) is never taken.
    for _ in 0..5 {
        let fut = svc.ready().await.unwrap().call(Request::new(()));
        drop(fut);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let r = svc.ready().await.unwrap().call(Request::new(())).await;
    assert!(r.is_ok(), "the trial call gets the permit");
    assert_eq!(cb.state(), State::Closed);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_dropped_call_gives_its_half_open_permit_back() {
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let registry = registry(&clock, 1);
    let cb = registry.circuit_breaker("backend");
    cb.transition_to_open_state().unwrap();
    clock.advance(Duration::from_secs(11));
    let hang = Arc::new(AtomicU32::new(1));
    let h = hang.clone();
    let mut svc = ServiceBuilder::new()
        .layer(CircuitBreakerLayer::new(&registry, "backend"))
        .service(tower::service_fn(move |_r: Request<()>| {
            let hangs = h.fetch_sub(1, Ordering::SeqCst) == 1;
            async move {
                if hangs {
                    std::future::pending::<()>().await;
                }
                Ok::<_, Infallible>(Response::new(String::new()))
            }
        }));
    let stuck = svc.ready().await.unwrap().call(Request::new(()));
    // Polled once (the permit taken, the call pending), then abandoned by a timeout.
    assert!(tokio::time::timeout(Duration::from_millis(10), stuck)
        .await
        .is_err());
    assert_eq!(cb.state(), State::HalfOpen);
    let r = svc.ready().await.unwrap().call(Request::new(())).await;
    assert!(r.is_ok(), "the permit came back: {r:?}");
    assert_eq!(cb.state(), State::Closed);
}

#[tokio::test]
async fn bulkhead_full_answers_503_and_retry_retries() {
    let bulkheads = BulkheadRegistry::with_default_config(
        BulkheadConfig::builder()
            .max_concurrent_calls(1)
            .build()
            .unwrap(),
    );
    let gate = Arc::new(tokio::sync::Notify::new());
    let g = gate.clone();
    let mut svc = ServiceBuilder::new()
        .layer(BulkheadLayer::new(&bulkheads, "inventory").service_unavailable())
        .service(tower::service_fn(move |_r: Request<()>| {
            let g = g.clone();
            async move {
                g.notified().await;
                Ok::<_, Infallible>(Response::new(String::new()))
            }
        }));
    let first = tokio::spawn(svc.ready().await.unwrap().call(Request::new(())));
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let r = svc
        .ready()
        .await
        .unwrap()
        .call(Request::new(()))
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    assert!(r.headers().get("retry-after").is_none());
    gate.notify_one();
    assert_eq!(first.await.unwrap().unwrap().status(), 200);

    let retries = RetryRegistry::with_default_config(
        RetryConfig::builder()
            .max_attempts(3)
            .wait_duration(Duration::ZERO)
            .build()
            .unwrap(),
    );
    let attempts = Arc::new(AtomicU32::new(0));
    let a = attempts.clone();
    let svc = ServiceBuilder::new()
        .layer(RetryLayer::new(&retries, "inventory"))
        .service(tower::service_fn(move |_r: Request<()>| {
            let n = a.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 2 {
                    Err(std::io::Error::other("reset"))
                } else {
                    Ok(Response::new(String::new()))
                }
            }
        }));
    let r = svc.oneshot(Request::new(())).await;
    assert!(r.is_ok());
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    assert_eq!(
        retries
            .retry("inventory")
            .metrics()
            .number_of_successful_calls_with_retry_attempt,
        1
    );
}

#[tokio::test]
async fn an_axum_route_keeps_its_infallible_error() {
    let registry = Registry::new();
    let app: axum::Router = axum::Router::new()
        .route("/quote", axum::routing::get(|| async { "ok" }))
        .route_layer(CircuitBreakerLayer::new(&registry, "quotes").service_unavailable());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    registry
        .circuit_breaker("quotes")
        .transition_to_forced_open_state()
        .unwrap();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream
        .write_all(b"GET /quote HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
}
