//! A snapshot of a breaker's metrics: Resilience4j's `CircuitBreaker.Metrics`.

use crate::state::State;

/// What `getMetrics()` reports, read at one instant, plus the state.
///
/// Every count refers to the current state's window: CLOSED and METRICS_ONLY use the
/// configured window, HALF_OPEN a count window of `permittedNumberOfCallsInHalfOpenState`
/// calls, OPEN the window of the state it was entered from, DISABLED and FORCED_OPEN an empty
/// one. Rates are `-1.0` while the window holds fewer calls than the effective
/// `minimumNumberOfCalls` (or none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    /// The state at the time of the snapshot.
    pub state: State,
    /// `getFailureRate()`: failed / buffered x 100 in single precision, percent, or -1.
    pub failure_rate: f32,
    /// `getSlowCallRate()`: slow / buffered x 100, percent, or -1.
    pub slow_call_rate: f32,
    /// `getNumberOfBufferedCalls()`: calls in the window.
    pub number_of_buffered_calls: u32,
    /// `getNumberOfFailedCalls()`: failures in the window, slow ones included.
    pub number_of_failed_calls: u32,
    /// `getNumberOfSuccessfulCalls()`: buffered minus failed (slow successes included).
    pub number_of_successful_calls: u32,
    /// `getNumberOfSlowCalls()`: slow successes plus slow failures.
    pub number_of_slow_calls: u32,
    /// `getNumberOfSlowSuccessfulCalls()`.
    pub number_of_slow_successful_calls: u32,
    /// `getNumberOfSlowFailedCalls()`.
    pub number_of_slow_failed_calls: u32,
    /// `getNumberOfNotPermittedCalls()`: rejections counted by the current metrics object.
    /// Reset on every transition except into OPEN, which carries it over.
    pub number_of_not_permitted_calls: u64,
}
