//! Deadlines for a call tree (breaker's own feature, beyond Resilience4j; off unless a
//! deadline is in scope).
//!
//! [`with_deadline`] runs a future with an overall budget that every layer below it sees,
//! however deep, on the same task:
//!
//! - a [`Retry`](crate::retry::Retry) does not start a wait and an attempt that cannot
//!   finish in the time left (judged by the retry's
//!   [`attempt_timeout`](crate::retry::RetryBudgets::attempt_timeout) when set, else by the
//!   wait alone), and fails with the last attempt's error, publishing
//!   [`RetryEventType::DeadlineExceeded`](crate::retry::RetryEventType::DeadlineExceeded) and
//!   counting it in [`RetryBudgetMetrics`](crate::retry::RetryBudgetMetrics);
//! - a [`TimeLimiter`](crate::timelimiter::TimeLimiter)'s `timeoutDuration`, a
//!   [`Bulkhead`](crate::bulkhead::Bulkhead)'s `maxWaitDuration` and a
//!   [`RateLimiter`](crate::ratelimiter::RateLimiter)'s `timeoutDuration` are cut to the time
//!   left;
//! - once the deadline has passed, a time limiter fails at once with its `Timeout`, a
//!   bulkhead with `BulkheadFullException`, a rate limiter with `RequestNotPermitted`,
//!   without polling the call: the dependency is not reached.
//!
//! A deadline inside another one never extends it: the earlier of the two applies.
//! With no deadline in scope every layer behaves exactly as Resilience4j's; the cost of the
//! check is one thread-local read per call.
//!
//! ```
//! use breaker_core::deadline::{self, Deadline};
//! use breaker_core::ManualClock;
//! use std::{sync::Arc, time::Duration};
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let clock = ManualClock::at_epoch_millis(0);
//! let left = deadline::with_deadline_at(
//!     Deadline::after(Duration::from_secs(5), Arc::new(clock.clone())),
//!     async { deadline::remaining() },
//! )
//! .await;
//! assert_eq!(left, Some(Duration::from_secs(5)));
//! assert_eq!(deadline::remaining(), None);
//! # }
//! ```

mod nesting;
mod scope;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};

pub use nesting::NestedRetries;
pub use scope::Scoped;

pub(crate) use nesting::{
    enter_retry, watch as watch_nesting, watched as nesting_watched, RetryCall,
};
pub(crate) use scope::{active, with_frame, Frame};

/// A point in time on a [`Clock`] by which a call tree must have finished.
#[derive(Clone)]
pub struct Deadline {
    at_nanos: u64,
    clock: Arc<dyn Clock>,
}

impl Deadline {
    /// `budget` from now on `clock`.
    pub fn after(budget: Duration, clock: Arc<dyn Clock>) -> Self {
        let at_nanos = clock
            .now_nanos()
            .saturating_add(budget.as_nanos().min(u64::MAX as u128) as u64);
        Deadline { at_nanos, clock }
    }

    /// At `at_nanos` (nanoseconds since the Unix epoch) on `clock`.
    pub fn at(at_nanos: u64, clock: Arc<dyn Clock>) -> Self {
        Deadline { at_nanos, clock }
    }

    /// When, in nanoseconds since the Unix epoch.
    pub fn at_nanos(&self) -> u64 {
        self.at_nanos
    }

    /// The clock it is read on.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The time left (zero once passed).
    pub fn remaining(&self) -> Duration {
        Duration::from_nanos(self.at_nanos.saturating_sub(self.clock.now_nanos()))
    }

    /// Whether it has passed (no time left).
    pub fn is_expired(&self) -> bool {
        self.clock.now_nanos() >= self.at_nanos
    }

    /// The earlier of the two.
    fn min(self, other: Deadline) -> Deadline {
        if other.at_nanos < self.at_nanos {
            other
        } else {
            self
        }
    }
}

impl fmt::Debug for Deadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deadline")
            .field("at_nanos", &self.at_nanos)
            .finish_non_exhaustive()
    }
}

/// The deadline has passed: what [`check`] returns, for code of one's own that wants to stop
/// as the layers do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the deadline of the call has passed")]
pub struct DeadlineExceeded;

/// Runs `fut` with `budget` from now, on the system clock ([`SystemClock::shared`]); inside
/// another deadline, the earlier one applies.
pub fn with_deadline<F: Future>(budget: Duration, fut: F) -> Scoped<F> {
    with_deadline_at(Deadline::after(budget, SystemClock::shared()), fut)
}

/// Runs `fut` with `deadline` (on its own clock: a [`ManualClock`](crate::ManualClock) in
/// tests); inside another deadline, the earlier one applies. The deadline is read when
/// this function is called.
pub fn with_deadline_at<F: Future>(deadline: Deadline, fut: F) -> Scoped<F> {
    let outer = scope::current_frame();
    let (deadline, retry) = match outer.as_deref() {
        Some(frame) => (
            match &frame.deadline {
                Some(d) => d.clone().min(deadline),
                None => deadline,
            },
            frame.retry.clone(),
        ),
        None => (deadline, None),
    };
    Scoped::new(
        Some(Arc::new(Frame {
            deadline: Some(deadline),
            retry,
        })),
        fut,
    )
}

/// The deadline of the future being polled on this thread, if any.
pub fn current() -> Option<Deadline> {
    with_frame(|f| f.and_then(|f| f.deadline.clone()))
}

/// The time left before the deadline of the future being polled, if any (zero once passed).
pub fn remaining() -> Option<Duration> {
    with_frame(|f| f.and_then(|f| f.deadline.as_ref().map(Deadline::remaining)))
}

/// `Ok` unless a deadline is in scope and has passed.
///
/// # Errors
/// [`DeadlineExceeded`] once the deadline in scope has passed.
pub fn check() -> Result<(), DeadlineExceeded> {
    if expired() {
        Err(DeadlineExceeded)
    } else {
        Ok(())
    }
}

/// Whether a deadline is in scope and has passed (one thread-local read without one).
#[inline]
pub(crate) fn expired() -> bool {
    with_frame(|f| {
        f.and_then(|f| f.deadline.as_ref())
            .is_some_and(Deadline::is_expired)
    })
}

/// `wait` cut to the time left when a deadline is in scope.
#[inline]
pub(crate) fn clamp(wait: Duration) -> Duration {
    match remaining() {
        Some(left) => wait.min(left),
        None => wait,
    }
}

#[cfg(test)]
mod tests;
