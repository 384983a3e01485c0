//! `/actuator/prometheus`, and a Prometheus recorder set up as the file asks.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::actuator::Shared;

/// `GET /actuator/prometheus`: the meters refreshed from every instance, then the recorder's
/// text exposition (`text/plain; version=0.0.4`), both under the publisher's snapshot lock
/// so that concurrent scrapes never mix two readings.
pub(crate) async fn scrape(State(s): State<Arc<Shared>>) -> Response {
    #[cfg(feature = "prometheus")]
    if let Some(handle) = &s.actuator.prometheus {
        // One reading of every instance, rendered before another scrape sets a gauge.
        let text = match &s.common.metrics {
            Some(m) => m.snapshot(|| handle.render()),
            None => handle.render(),
        };
        return Response::builder()
            .header(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )
            .body(Body::from(text))
            .unwrap_or_default();
    }
    let _ = &s;
    (
        StatusCode::NOT_FOUND,
        "no Prometheus recorder: give the actuator one with Actuator::prometheus(handle)",
    )
        .into_response()
}

/// Buckets (seconds) of the circuit breaker's call timer when
/// `management.metrics.distribution.percentiles-histogram` asks for a histogram:
/// Micrometer's default timer buckets from 1 ms to 30 s, thinned to a power-of-two-ish
/// ladder.
#[cfg(feature = "prometheus")]
pub const TIMER_BUCKETS: [f64; 16] = [
    0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096,
    8.192, 16.384, 30.0,
];

/// Builds and installs the global `metrics` recorder of `metrics-exporter-prometheus`, with
/// the circuit breaker's call timer as a histogram (`_bucket{le=...}`) when
/// `management.metrics.distribution.percentiles-histogram` asks for it (else a summary), and
/// returns the handle for [`Actuator::prometheus`](crate::Actuator::prometheus). Tags come
/// from the actuator's publisher (`management.metrics.tags.*`), not from the recorder.
///
/// # Errors
/// The exporter's `BuildError`, e.g. when a global recorder is already installed.
#[cfg(feature = "prometheus")]
pub fn install_prometheus_recorder(
    management: &breaker_config::ManagementConfig,
) -> Result<metrics_exporter_prometheus::PrometheusHandle, metrics_exporter_prometheus::BuildError>
{
    prometheus_builder(management)?.install_recorder()
}

/// The `PrometheusBuilder` [`install_prometheus_recorder`] installs, to add your own
/// settings or to build a recorder without installing it.
///
/// # Errors
/// The exporter's `BuildError` (none for the settings made here).
#[cfg(feature = "prometheus")]
pub fn prometheus_builder(
    management: &breaker_config::ManagementConfig,
) -> Result<metrics_exporter_prometheus::PrometheusBuilder, metrics_exporter_prometheus::BuildError>
{
    let mut b = metrics_exporter_prometheus::PrometheusBuilder::new();
    if management.percentiles_histogram_for("resilience4j.circuitbreaker.calls") {
        b = b.set_buckets_for_metric(
            metrics_exporter_prometheus::Matcher::Full(
                "resilience4j_circuitbreaker_calls_seconds".into(),
            ),
            &TIMER_BUCKETS,
        )?;
    }
    Ok(b)
}
