//! Resilience4j's Micrometer meters for breaker, through the [`metrics`] facade
//! (integration spec §3): the same names, types, tags and units, so that a Prometheus
//! exposition through `metrics-exporter-prometheus` reads like Resilience4j's through
//! Micrometer and an existing Grafana dashboard or alert (on `resilience4j_circuitbreaker_state`,
//! `resilience4j_circuitbreaker_calls_seconds_count`, `resilience4j_retry_calls_total`, ...)
//! works unchanged.
//!
//! | module | meters (Prometheus series) | tags |
//! |---|---|---|
//! | circuit breaker | `resilience4j_circuitbreaker_state` (6 series, 1 for the current state), `_buffered_calls`, `_slow_calls`, `_failure_rate`, `_slow_call_rate` (gauges); `_calls_seconds_count` / `_sum` / `_max` (timer); `_not_permitted_calls_total` | `name`, `state`, `kind` |
//! | retry | `resilience4j_retry_calls_total` | `name`, `kind` (`successful_without_retry`, ...) |
//! | time limiter | `resilience4j_timelimiter_calls_total` | `name`, `kind` (`successful`, `failed`, `timeout`) |
//! | bulkhead | `resilience4j_bulkhead_available_concurrent_calls`, `_max_allowed_concurrent_calls` | `name` |
//! | thread-pool bulkhead | `resilience4j_bulkhead_queue_depth`, `_queue_capacity`, `_thread_pool_size`, `_max_thread_pool_size`, `_core_thread_pool_size`, `_active_thread_count`, `_available_thread_count` | `name` |
//! | rate limiter | `resilience4j_ratelimiter_available_permissions`, `_waiting_threads` | `name` |
//!
//! Plus the publisher's tags (`management.metrics.tags.*`) and each registry's
//! (`resilience4j.<module>.tags`). Tags are sorted by key, as Micrometer prints them.
//!
//! ```
//! use breaker_core::Registry;
//! use breaker_metrics::MetricsPublisher;
//!
//! // Install your recorder first, e.g.
//! // metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder()?;
//! let registry = Registry::new();
//! let publisher = MetricsPublisher::new([("application", "checkout")]);
//! publisher.bind(&registry);
//! // before every scrape (or every few seconds for a push exporter):
//! publisher.refresh();
//! ```
//!
//! # Where this differs from Micrometer
//!
//! - Gauges hold the value of the last [`MetricsPublisher::refresh`], not a live function.
//! - The `metrics` facade cannot unregister a meter: a removed instance's series keep their
//!   last value (configure your exporter's idle timeout to drop them).
//! - `metrics-exporter-prometheus` prints a timer without histogram buckets as a summary
//!   with quantiles beside `_count` and `_sum` (Micrometer prints only those two).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod circuit_breaker;
mod family;
mod modules;
pub mod names;
mod publisher;
pub mod readings;
mod register;
mod window_max;

#[doc(hidden)]
pub use family::Refresh;
pub use publisher::{MeteredRegistry, MetricsPublisher};
pub use register::{recorder_installed, Tags};
