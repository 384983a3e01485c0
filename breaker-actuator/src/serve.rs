//! [`serve`]: the actuator's router (or any axum router) over HTTP/1 with the two timeouts a
//! management port needs, so that a client that stops sending partway through its headers
//! or its body loses its connection instead of holding it.
//!
//! `axum::serve` has no timeouts. Here hyper's `header_read_timeout` bounds the headers and
//! tower-http's `TimeoutLayer` bounds the whole request (reading the body included): when
//! it fires the client gets `408 Request Timeout` and, its body unread, the connection is
//! closed.
//!
//! Authentication is a layer on the router, before it is served; e.g. a bearer token with
//! axum's `middleware::from_fn`:
//!
//! ```no_run
//! use axum::extract::Request;
//! use axum::http::{header, StatusCode};
//! use axum::middleware::{self, Next};
//! use axum::response::Response;
//! use breaker_actuator::{serve, Actuator, ServeTimeouts};
//!
//! async fn bearer(request: Request, next: Next) -> Result<Response, StatusCode> {
//!     let expected = std::env::var("ACTUATOR_TOKEN").map_err(|_| StatusCode::UNAUTHORIZED)?;
//!     let given = request
//!         .headers()
//!         .get(header::AUTHORIZATION)
//!         .and_then(|v| v.to_str().ok())
//!         .and_then(|v| v.strip_prefix("Bearer "));
//!     // (compare in constant time in production, e.g. with the `subtle` crate)
//!     if given == Some(expected.as_str()) {
//!         Ok(next.run(request).await)
//!     } else {
//!         Err(StatusCode::UNAUTHORIZED)
//!     }
//! }
//!
//! # async fn run(registry: breaker_core::Registry) -> std::io::Result<()> {
//! let app = Actuator::new(registry)
//!     .allow_state_changes(true)
//!     .router()
//!     .layer(middleware::from_fn(bearer));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8081").await?;
//! serve(listener, app, ServeTimeouts::default()).await
//! # }
//! ```

use std::io;
use std::time::Duration;

use axum::http::StatusCode;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower_http::timeout::TimeoutLayer;

/// How long [`serve`] waits for a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServeTimeouts {
    /// From the start of a request until its last header line has arrived (hyper's
    /// `header_read_timeout`); then the connection is closed without a response.
    /// Default 10 s.
    pub header_read: Duration,
    /// From the headers until the response is ready, reading the body included
    /// (tower-http's `TimeoutLayer`); then the answer is `408 Request Timeout` and a
    /// connection whose body was not read is closed. Default 30 s.
    pub request: Duration,
}

impl Default for ServeTimeouts {
    fn default() -> Self {
        ServeTimeouts {
            header_read: Duration::from_secs(10),
            request: Duration::from_secs(30),
        }
    }
}

/// Serves `app` on `listener` over HTTP/1.1 with `timeouts` until the listener fails, each
/// connection on its own tokio task. A client that stalls in its headers is dropped after
/// `timeouts.header_read`; one that stalls in its body gets a 408 after `timeouts.request`
/// and is dropped. Needs a tokio runtime with timers (`tokio::time`).
///
/// # Errors
/// Never returns `Ok`; returns the listener's error when `accept` fails for a reason other
/// than one connection's (e.g. too many open files are retried after 100 ms, not returned).
pub async fn serve(listener: TcpListener, app: Router, timeouts: ServeTimeouts) -> io::Result<()> {
    let app = app.layer(TimeoutLayer::with_status_code(
        StatusCode::REQUEST_TIMEOUT,
        timeouts.request,
    ));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) if per_connection(&e) => continue,
            Err(e) if is_exhaustion(&e) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(timeouts.header_read);
            // A connection's error (a reset, a timeout) is that client's business.
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// An `accept` error about one connection only (the next `accept` may succeed).
fn per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Out of file descriptors or memory: wait and try again, as `axum::serve` does.
fn is_exhaustion(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(23 | 24)) || e.kind() == io::ErrorKind::OutOfMemory
}
