//! TimeLimiter: Resilience4j's `TimeLimiter` for async calls: `timeoutDuration`,
//! `cancelRunningFuture`, the timeout error with Resilience4j's message, `SUCCESS` /
//! `TIMEOUT` / `ERROR` events and the counters Resilience4j's Micrometer binder exports.
//!
//! ```
//! use breaker_core::timelimiter::{TimeLimiterConfig, TimeLimiterRegistry};
//! use std::time::Duration;
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = TimeLimiterRegistry::with_default_config(
//!     TimeLimiterConfig::builder().timeout_duration(Duration::from_secs(2)).build().unwrap(),
//! );
//! let limiter = registry.time_limiter("paymentService");
//! let r = limiter.call(async { Ok::<_, std::io::Error>("paid") }).await;
//! assert_eq!(r.unwrap(), "paid");
//! assert_eq!(limiter.metrics().number_of_successful_calls, 1);
//! # }
//! ```
//!
//! # The timeout
//!
//! [`TimeLimiter::call`] wraps one future. The timeout counts from the first poll of the
//! call, i.e. when the call starts running, on the config's [`Clock`](crate::Clock) (a tokio
//! timer in a runtime, [`ManualClock`](crate::ManualClock) in tests); whole milliseconds, as
//! Resilience4j uses `timeoutDuration.toMillis()`. A future that is ready at its first poll
//! succeeds whatever the timeout, even 0 (Resilience4j: a completed future with a 0 timeout
//! publishes `SUCCESS`). A timed-out call fails with [`Timeout`], whose `Display` is
//! Resilience4j's message, `TimeLimiter 'backendA' recorded a timeout exception.`
//!
//! # `cancelRunningFuture`
//!
//! In Resilience4j the flag decides whether `Future.cancel(true)` interrupts the work on a
//! timeout, on the `Future` path only; the `CompletionStage` path (which Spring's
//! `@TimeLimiter` aspect uses) never cancels and leaves the work running.
//!
//! A Rust future does nothing unless polled, so here:
//! - [`TimeLimiter::call`] **drops** the timed-out future, which cancels it at its current
//!   `.await` (its destructors run, no further code of it runs). That is
//!   `cancelRunningFuture: true`, and it is what `call` does whatever the flag says: a
//!   future borrowed from the caller cannot outlive the call. This is a deliberate
//!   difference from Spring's aspect, where the work keeps running after the timeout.
//! - `TimeLimiter::call_detached` (feature `tokio`) takes a `Send + 'static` future and,
//!   with `cancelRunningFuture: false`, leaves it **running detached** on the tokio runtime
//!   to completion, its result discarded (Resilience4j's `CompletionStage` behaviour); with
//!   `true` it drops it like `call`.

mod config;
mod error;
mod events;
mod instance;
mod metrics;
mod registry;

pub use config::{defaults, TimeLimiterConfig, TimeLimiterConfigBuilder};
pub use error::{TimeLimiterError, Timeout};
pub use events::{TimeLimiterEvent, TimeLimiterEventType};
pub use instance::TimeLimiter;
pub use metrics::TimeLimiterMetrics;
pub use registry::TimeLimiterRegistry;
