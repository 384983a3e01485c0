//! The retry counters (Resilience4j's `Retry.Metrics`).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::striped::StripedCounter;

/// A retry's counters, read with [`Retry::metrics`](crate::retry::Retry::metrics). They
/// count calls since the retry was created and never go down.
///
/// The first four are exported by Resilience4j's Micrometer binder as
/// `resilience4j_retry_calls{kind="successful_without_retry" | "successful_with_retry" |
/// "failed_without_retry" | "failed_with_retry"}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RetryMetrics {
    /// `getNumberOfSuccessfulCallsWithoutRetryAttempt()`: calls that succeeded at their
    /// first attempt.
    pub number_of_successful_calls_without_retry_attempt: u64,
    /// `getNumberOfFailedCallsWithoutRetryAttempt()`: calls ended by an error that is not
    /// retried, at any attempt (the name is Resilience4j's: an error that is not retried
    /// after two retries counts here too).
    pub number_of_failed_calls_without_retry_attempt: u64,
    /// `getNumberOfSuccessfulCallsWithRetryAttempt()`: calls that succeeded after at least
    /// one retry.
    pub number_of_successful_calls_with_retry_attempt: u64,
    /// `getNumberOfFailedCallsWithRetryAttempt()`: calls whose attempts ran out (including
    /// `maxAttempts: 1`, as in Resilience4j), by errors or by results.
    pub number_of_failed_calls_with_retry_attempt: u64,
    /// `getNumberOfTotalCalls()`: attempts made (Resilience4j counts the last attempt of a
    /// call whose results ran out twice; so does exact-Resilience4j mode).
    pub number_of_total_calls: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Also the attempts of those calls: a call that succeeds at once costs one increment,
    /// without a locked instruction (see [`StripedCounter`]).
    pub(crate) successful_without_retry: StripedCounter,
    pub(crate) failed_without_retry: AtomicU64,
    pub(crate) successful_with_retry: AtomicU64,
    pub(crate) failed_with_retry: AtomicU64,
    /// Attempts, except the single attempt of each call counted in
    /// `successful_without_retry`.
    pub(crate) total: AtomicU64,
}

impl Counters {
    #[inline]
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> RetryMetrics {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let successful_without_retry = self.successful_without_retry.sum();
        RetryMetrics {
            number_of_successful_calls_without_retry_attempt: successful_without_retry,
            number_of_failed_calls_without_retry_attempt: r(&self.failed_without_retry),
            number_of_successful_calls_with_retry_attempt: r(&self.successful_with_retry),
            number_of_failed_calls_with_retry_attempt: r(&self.failed_with_retry),
            number_of_total_calls: r(&self.total) + successful_without_retry,
        }
    }
}
