//! The payment provider: a real HTTP server on 127.0.0.1 (ephemeral port) that quotes
//! exchange rates, answers 404 for currencies it does not know, goes down during its outage
//! window, and is slow (up, but [`SLOW_ANSWER`] per answer) during its slow window.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::Router;

use super::flags::OutageMode;
use super::stats::{Epoch, SeenCalls};

/// The currencies the provider quotes, with a base rate against USD.
pub const CURRENCIES: [(&str, f64); 4] = [
    ("EUR", 1.0842),
    ("GBP", 1.2671),
    ("CHF", 1.1307),
    ("JPY", 0.0066),
];

/// How long the provider takes per answer while it is slow (well inside the time limiter's
/// 250 ms, so slow calls succeed, but they pile up).
pub const SLOW_ANSWER: Duration = Duration::from_millis(120);

/// A running provider.
pub struct Downstream {
    /// `http://127.0.0.1:PORT`
    pub url: String,
    /// Requests that arrived, whatever was answered.
    pub received: Arc<AtomicU64>,
    /// Requests that arrived during the outage.
    pub received_in_outage: Arc<AtomicU64>,
}

/// The header that carries a request's client call id (see [`SeenCalls`]).
pub const CALL_ID_HEADER: &str = "x-call-id";

#[derive(Clone)]
struct Shared {
    epoch: Epoch,
    outage: Range<Duration>,
    slow: Option<Range<Duration>>,
    mode: OutageMode,
    received: Arc<AtomicU64>,
    received_in_outage: Arc<AtomicU64>,
    seen: Arc<SeenCalls>,
}

/// Starts a provider that is down during `outage` and slow during `slow` (measured from
/// `epoch`), noting in `seen` the client call of every request.
pub async fn start(
    epoch: Epoch,
    outage: Range<Duration>,
    slow: Option<Range<Duration>>,
    mode: OutageMode,
    seen: Arc<SeenCalls>,
) -> std::io::Result<Downstream> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let received = Arc::new(AtomicU64::new(0));
    let received_in_outage = Arc::new(AtomicU64::new(0));
    let shared = Shared {
        epoch,
        outage,
        slow,
        mode,
        received: received.clone(),
        received_in_outage: received_in_outage.clone(),
        seen,
    };
    let app = Router::new()
        .route("/quote/{currency}", get(quote))
        .with_state(shared);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            eprintln!("payment provider stopped: {e}");
        }
    });
    Ok(Downstream {
        url,
        received,
        received_in_outage,
    })
}

async fn quote(
    State(s): State<Shared>,
    Path(currency): Path<String>,
    headers: HeaderMap,
) -> (StatusCode, String) {
    s.received.fetch_add(1, Ordering::Relaxed);
    let call = headers
        .get(CALL_ID_HEADER)
        .and_then(|v| v.to_str().ok()?.parse().ok());
    if let Some(id) = call {
        s.seen.note(id);
    }
    let now = s.epoch.elapsed();
    if s.outage.contains(&now) {
        s.received_in_outage.fetch_add(1, Ordering::Relaxed);
        match s.mode {
            // Hang until well past any sensible client timeout; the client gives up first and
            // hyper drops this future when the connection closes.
            OutageMode::Hang => tokio::time::sleep(Duration::from_secs(60)).await,
            OutageMode::Error => {}
        }
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "payment provider unavailable".into(),
        );
    }
    // A little work, as a real service would do; much more while it is slow.
    let work = match &s.slow {
        Some(w) if w.contains(&now) => SLOW_ANSWER,
        _ => Duration::from_millis(2),
    };
    tokio::time::sleep(work).await;
    match CURRENCIES.iter().find(|(c, _)| *c == currency) {
        Some((c, base)) => {
            // The rate drifts slowly, so a stale value is visibly stale.
            let rate = base * (1.0 + 0.002 * (now.as_secs_f64() / 3.0).sin());
            (
                StatusCode::OK,
                serde_json::json!({ "currency": c, "usd": rate }).to_string(),
            )
        }
        None => (
            StatusCode::NOT_FOUND,
            format!("unknown currency {currency}"),
        ),
    }
}
