//! `cargo run --example tower_layer`: an axum service whose handler calls a flaky downstream
//! through a `CircuitBreakerLayer` (breaker-tower) in a `tower::ServiceBuilder`.
//!
//! The downstream answers `500` to its first 4 requests and `200` after that. The layer
//! counts the 5xx answers as failures (a 4xx would be ignored), opens the breaker after 4 of
//! them (window of 4 calls), and answers `503` with `Retry-After` while it is open, without
//! calling the downstream; the handler turns that into a fallback. After the 1 s open wait a
//! trial call finds the downstream healthy and the breaker closes.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::routing::get;
use axum::Router;
use breaker_tower::CircuitBreakerLayer;
use resilience4rs::{CircuitBreakerConfig, Registry};
use tower::util::BoxCloneSyncService;
use tower::{Service, ServiceBuilder, ServiceExt};

/// The downstream behind its breaker, as the handlers' state.
type Rates = BoxCloneSyncService<http::Request<()>, http::Response<String>, reqwest::Error>;

/// The downstream: `500` for its first 4 requests, then `200`.
async fn downstream() -> String {
    let served = Arc::new(AtomicU32::new(0));
    let app = Router::new().route(
        "/rate",
        get(move || {
            let n = served.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 4 {
                    (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "down")
                } else {
                    (axum::http::StatusCode::OK, "1.0842")
                }
            }
        }),
    );
    serve(app).await
}

async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// The client of the downstream as a tower service: an `http::Request` in, an
/// `http::Response` out (reqwest underneath).
fn client(
    base: String,
) -> impl Service<
    http::Request<()>,
    Response = http::Response<String>,
    Error = reqwest::Error,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    let http = reqwest::Client::new();
    tower::service_fn(move |req: http::Request<()>| {
        let url = format!("{base}{}", req.uri());
        let http = http.clone();
        async move {
            let r = http.get(url).send().await?;
            let mut out = http::Response::new(String::new());
            *out.status_mut() = r.status();
            *out.body_mut() = r.text().await?;
            Ok(out)
        }
    })
}

#[tokio::main]
async fn main() {
    let registry = Registry::with_default_config(
        CircuitBreakerConfig::builder()
            .sliding_window_size(4)
            .minimum_number_of_calls(4)
            .permitted_number_of_calls_in_half_open_state(1)
            .wait_duration_in_open_state(Duration::from_secs(1))
            .build()
            .expect("a valid config"),
    );
    let downstream_url = downstream().await;
    // The breaker in front of the handler's downstream; a rejection answers 503.
    let rates: Rates = BoxCloneSyncService::new(
        ServiceBuilder::new()
            .layer(CircuitBreakerLayer::new(&registry, "rates").service_unavailable())
            .service(client(downstream_url)),
    );

    let app = Router::new()
        .route(
            "/quote",
            get(|State(rates): State<Rates>| async move { quote(rates).await }),
        )
        .with_state(rates);
    let base = serve(app).await;
    println!("service: {base}/quote, downstream behind the `rates` circuit breaker\n");

    let breaker = registry.circuit_breaker("rates");
    for i in 1..=10 {
        if i == 9 {
            println!("        (waiting 1.1 s: the breaker's waitDurationInOpenState)");
            tokio::time::sleep(Duration::from_millis(1_100)).await;
        }
        let answer = reqwest::get(format!("{base}/quote"))
            .await
            .expect("the service answers")
            .text()
            .await
            .expect("a body");
        println!("call {i:>2}: {answer:<44} breaker {}", breaker.state());
    }
}

/// The handler's work: ask the downstream through the breaker; fall back when it refuses.
async fn quote(rates: Rates) -> String {
    let req = http::Request::get("/rate").body(()).expect("a request");
    match rates.oneshot(req).await {
        Ok(r) if r.status() == 503 => format!(
            "fallback quote (retry after {}s)",
            r.headers()["retry-after"].to_str().unwrap_or("?")
        ),
        Ok(r) => format!("{} {}", r.status().as_u16(), r.body()),
        Err(e) => format!("error: {e}"),
    }
}
