//! Retry: Resilience4j's `Retry`, exact (settings, defaults, validation messages, the attempt
//! loop, interval functions to the millisecond, events, the five counters).
//!
//! ```
//! use breaker_core::retry::{RetryConfig, RetryError, RetryRegistry};
//! use std::time::Duration;
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = RetryRegistry::with_default_config(
//!     RetryConfig::builder()
//!         .max_attempts(3)
//!         .exponential_backoff(Duration::from_millis(100), 2.0, None)
//!         .build()
//!         .unwrap(),
//! );
//! let payments = registry.retry("paymentService");
//! let r: Result<&str, RetryError<std::io::Error>> = payments.call(|| async { Ok("paid") }).await;
//! assert_eq!(r.unwrap(), "paid");
//! # }
//! ```
//!
//! # The attempt loop
//!
//! [`Retry::call`] takes a closure that makes a new future per attempt. After an attempt:
//!
//! - **an error that is not retried** (see [`RetryConfig::is_retryable`]: `retryExceptions`
//!   or `retryOnException`, or every error when neither is set, and never an
//!   `ignoreExceptions` match) ends the call with that error: `IGNORED_ERROR` (0 attempts),
//!   `numberOfFailedCallsWithoutRetryAttempt` + 1;
//! - **a retried error** counts one failed attempt `n`. At `n >= maxAttempts`: `ERROR(n)`,
//!   `numberOfFailedCallsWithRetryAttempt` + 1, the error is returned. Otherwise
//!   `RETRY(n, wait)` is published, the call waits `interval(n)` and tries again;
//! - **a result `retryOnResult` accepts** counts a failed attempt the same way; when the
//!   attempts run out the call ends with `ERROR(n)` (last throwable: the last retried error,
//!   or Resilience4j's `MaxRetriesExceeded` marker), adds 1 to
//!   `numberOfFailedCallsWithRetryAttempt`, and returns that last result, or
//!   [`MaxRetriesExceeded`] with `failAfterMaxAttempts`;
//! - **any other result** ends the call: `numberOfSuccessfulCallsWithoutRetryAttempt` + 1
//!   at the first attempt (no event), else `SUCCESS(n)` and
//!   `numberOfSuccessfulCallsWithRetryAttempt` + 1.
//!
//! `interval(n)` is the config's interval function for the `n`-th failed attempt (1 before
//! the second call): constant, exponential (truncated to whole ms at every step), randomized
//! (`(long) max(1, min + r * (max - min + 1))`, `r` from the injectable
//! [`RandomSource`](crate::RandomSource)), exponential-random (capped after randomizing), or
//! a custom [`IntervalBiFunction`]. Waits run on the config's [`Clock`](crate::Clock): a tokio
//! timer in a runtime, [`ManualClock`](crate::ManualClock) in tests.
//!
//! # Where this differs from Resilience4j, on purpose
//!
//! Each fix is pinned by a test (`tests/retry_deviations.rs`) and undone by
//! [`RetryConfigBuilder::exact_resilience4j`], which the conformance suite uses for the
//! vectors that record the defect (Resilience4j's synchronous `decorateCallable` loop):
//!
//! - **`failAfterMaxAttempts` counts a call once.** Resilience4j throws its
//!   `MaxRetriesExceededException` inside its own retry loop, which catches it as if the
//!   attempt had thrown it: a second `ERROR` (attempts = max + 1) or an `IGNORED_ERROR`, and
//!   a second failed-call count. Here the call ends with one `ERROR` and one count, as
//!   Resilience4j's own asynchronous loop does.
//! - **`numberOfTotalCalls` counts attempts.** Resilience4j counts the last attempt of a
//!   call whose results ran out twice.
//! - **A negative interval ends the call as the last attempt would.** Resilience4j (only a
//!   negative multiplier or a custom function produce one) publishes `ERROR` and rethrows
//!   the error without counting the call; after a retried result its sleep fails with
//!   `IllegalStateException: Unexpected exception during retry wait interval`, which its
//!   loop then retries like an attempt's error. Here the call counts as failed with retry,
//!   and after a result returns that result (or [`MaxRetriesExceeded`]) like an
//!   exhausted call.
//! - **An exponential backoff with a cap checks its initial interval when built.**
//!   Resilience4j checks it only when computing the first wait, so a `waitDuration` of 0 with
//!   `exponentialMaxWaitDuration` fails the first retried call with `IllegalArgumentException`
//!   instead of the call's own error. Here [`RetryConfigBuilder::build`] rejects it with the
//!   same message.
//! - **A panicking event subscriber is isolated** (logged), as in Resilience4j's circuit
//!   breaker and time limiter; Resilience4j's Retry lets a consumer's exception replace the
//!   call's outcome (exact mode lets the panic unwind into the caller).
//!
//! Kept as Resilience4j does, deliberately: `maxAttempts: 1` counts a failure as "failed with
//! retry"; an error that is not retried counts as "failed without retry" even after retries
//! (both are exported metrics, so Java dashboards keep their meaning); the result predicate
//! sees every `Ok` value. Not applicable in Rust: a process-wide sleep function (each retry
//! waits on its own clock), a supplier that throws synchronously on a re-attempt (a closure
//! returns a future), `null` results of void methods.

mod budget;
mod config;
mod config_builder;
mod context;
mod error;
mod events;
mod first_attempt;
mod instance;
mod metrics;
mod registry;

pub use budget::{NestedRetries, RetryBudgetConfig, RetryBudgetMetrics, RetryBudgets};
pub use config::{defaults, AttemptOutcome, IntervalBiFunction, RetryConfig};
pub use config_builder::{RetryConfigBuilder, RetryWaitProperties};
pub use error::{MaxRetriesExceeded, RetryError, WaitIntervalError};
pub use events::{RetryEvent, RetryEventType};
pub use instance::Retry;
pub use metrics::RetryMetrics;
pub use registry::RetryRegistry;
