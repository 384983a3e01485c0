//! `BulkheadConfig`: Resilience4j's semaphore-bulkhead settings, defaults and validation.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::config::SignedDuration;
use crate::error::ConfigError;

/// `DEFAULT_MAX_CONCURRENT_CALLS`: 25 calls.
pub const DEFAULT_MAX_CONCURRENT_CALLS: u32 = 25;

/// The configuration of one semaphore bulkhead: Resilience4j's `BulkheadConfig`.
///
/// Immutable and cheap to clone. Build one with [`BulkheadConfig::builder`] or take
/// [`BulkheadConfig::default`] (`BulkheadConfig.ofDefaults()`: 25 calls, no wait, fair).
#[derive(Clone)]
pub struct BulkheadConfig {
    pub(crate) max_concurrent_calls: u32,
    pub(crate) max_wait_duration: Duration,
    pub(crate) writable_stack_trace_enabled: bool,
    pub(crate) fair_call_handling_enabled: bool,
    pub(crate) exact_resilience4j: bool,
    pub(crate) clock: Arc<dyn Clock>,
}

impl Default for BulkheadConfig {
    fn default() -> Self {
        BulkheadConfig {
            max_concurrent_calls: DEFAULT_MAX_CONCURRENT_CALLS,
            max_wait_duration: Duration::ZERO,
            writable_stack_trace_enabled: true,
            fair_call_handling_enabled: true,
            exact_resilience4j: false,
            clock: SystemClock::shared(),
        }
    }
}

impl BulkheadConfig {
    /// A builder starting from Resilience4j's defaults (`BulkheadConfig.custom()`).
    pub fn builder() -> BulkheadConfigBuilder {
        BulkheadConfig::default().to_builder()
    }

    /// A builder starting from this config (`BulkheadConfig.from(base)`).
    pub fn to_builder(&self) -> BulkheadConfigBuilder {
        BulkheadConfigBuilder {
            max_concurrent_calls: i64::from(self.max_concurrent_calls),
            max_wait_duration: self.max_wait_duration.into(),
            writable_stack_trace_enabled: self.writable_stack_trace_enabled,
            fair_call_handling_enabled: self.fair_call_handling_enabled,
            exact_resilience4j: self.exact_resilience4j,
            clock: self.clock.clone(),
        }
    }

    /// `maxConcurrentCalls`: permits, i.e. calls in flight at once (>= 0; 0 rejects every
    /// call).
    pub fn max_concurrent_calls(&self) -> u32 {
        self.max_concurrent_calls
    }
    /// `maxWaitDuration`: how long a call waits for a permit, in whole ms (sub-millisecond
    /// parts are ignored, as Resilience4j's `toMillis()` does); 0 = no wait.
    pub fn max_wait_duration(&self) -> Duration {
        Duration::from_millis(self.max_wait_duration.as_millis() as u64)
    }
    /// `writableStackTraceEnabled`: accepted for compatibility; Rust errors carry no stack
    /// trace.
    pub fn writable_stack_trace_enabled(&self) -> bool {
        self.writable_stack_trace_enabled
    }
    /// `fairCallHandlingStrategyEnabled` (`isFairCallHandlingEnabled()`): waiting calls and
    /// pending limit decreases are served in arrival order and nobody takes a permit past
    /// them (true, default); false lets a new call take a free permit ahead of them. Fixed
    /// when the bulkhead is created.
    pub fn fair_call_handling_enabled(&self) -> bool {
        self.fair_call_handling_enabled
    }
    /// Whether the bulkhead reproduces Resilience4j's defects (see the module docs).
    pub fn exact_resilience4j(&self) -> bool {
        self.exact_resilience4j
    }
    /// The clock of the `maxWaitDuration` wait and of event times.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }
}

impl fmt::Debug for BulkheadConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BulkheadConfig")
            .field("max_concurrent_calls", &self.max_concurrent_calls)
            .field("max_wait_duration", &self.max_wait_duration)
            .field(
                "writable_stack_trace_enabled",
                &self.writable_stack_trace_enabled,
            )
            .field(
                "fair_call_handling_enabled",
                &self.fair_call_handling_enabled,
            )
            .field("exact_resilience4j", &self.exact_resilience4j)
            .finish_non_exhaustive()
    }
}

/// Builds a validated [`BulkheadConfig`] (Resilience4j's `BulkheadConfig.Builder`).
///
/// Setters take values as a config file gives them (counts as `i64`, durations that may be
/// negative); [`build`](Self::build) rejects what Resilience4j rejects, with its message.
#[derive(Clone)]
pub struct BulkheadConfigBuilder {
    max_concurrent_calls: i64,
    max_wait_duration: SignedDuration,
    writable_stack_trace_enabled: bool,
    fair_call_handling_enabled: bool,
    exact_resilience4j: bool,
    clock: Arc<dyn Clock>,
}

impl BulkheadConfigBuilder {
    /// `maxConcurrentCalls`; allowed 0..=2147483647; default 25.
    pub fn max_concurrent_calls(mut self, calls: i64) -> Self {
        self.max_concurrent_calls = calls;
        self
    }
    /// `maxWaitDuration`; allowed >= 0 ms; default 0 (a full bulkhead rejects at once).
    pub fn max_wait_duration(mut self, d: impl Into<SignedDuration>) -> Self {
        self.max_wait_duration = d.into();
        self
    }
    /// `writableStackTraceEnabled`; default true; no effect in Rust.
    pub fn writable_stack_trace_enabled(mut self, enabled: bool) -> Self {
        self.writable_stack_trace_enabled = enabled;
        self
    }
    /// `fairCallHandlingStrategyEnabled`; default true (FIFO, no barging).
    pub fn fair_call_handling_strategy_enabled(mut self, enabled: bool) -> Self {
        self.fair_call_handling_enabled = enabled;
        self
    }
    /// Exact Resilience4j mode (default false): reproduce the defects this crate fixes (a
    /// release without an acquire raises the capacity for good). See the module docs.
    pub fn exact_resilience4j(mut self, exact: bool) -> Self {
        self.exact_resilience4j = exact;
        self
    }
    /// The clock of the wait and of event times (default: the shared system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Validates the settings as Resilience4j's builder does.
    ///
    /// # Errors
    /// A [`ConfigError`] with Resilience4j's `IllegalArgumentException` message:
    /// `maxConcurrentCalls must be an integer value >= 0` for a negative (or, beyond Java's
    /// `int`, too large) count; `maxWaitDuration must be a positive integer value >= 0` for a
    /// wait below 0 ms.
    pub fn build(self) -> Result<BulkheadConfig, ConfigError> {
        if !(0..=i64::from(i32::MAX)).contains(&self.max_concurrent_calls) {
            return Err(ConfigError::new(
                "maxConcurrentCalls",
                self.max_concurrent_calls.to_string(),
                "0 to 2147483647 (calls)",
                "maxConcurrentCalls must be an integer value >= 0".to_string(),
            ));
        }
        check_non_negative_millis("maxWaitDuration", self.max_wait_duration)?;
        Ok(BulkheadConfig {
            max_concurrent_calls: self.max_concurrent_calls as u32,
            max_wait_duration: Duration::from_nanos(
                self.max_wait_duration.as_nanos().clamp(0, u64::MAX as i128) as u64,
            ),
            writable_stack_trace_enabled: self.writable_stack_trace_enabled,
            fair_call_handling_enabled: self.fair_call_handling_enabled,
            exact_resilience4j: self.exact_resilience4j,
            clock: self.clock,
        })
    }
}

/// Resilience4j's bulkhead builders' message for a value below `min`: `<setting> must be a
/// positive integer value >= <min>` (also for durations).
pub(super) fn below_minimum(
    setting: &'static str,
    value: String,
    allowed: &'static str,
    min: &str,
) -> ConfigError {
    ConfigError::new(
        setting,
        value,
        allowed,
        format!("{setting} must be a positive integer value >= {min}"),
    )
}

/// `maxWaitDuration`, `keepAliveDuration`: whole ms (Java's `toMillis()`, which floors) must
/// be >= 0.
pub(super) fn check_non_negative_millis(
    setting: &'static str,
    d: SignedDuration,
) -> Result<(), ConfigError> {
    let ms = d.as_millis_floor();
    if ms < 0 {
        return Err(below_minimum(
            setting,
            format!("{ms}ms"),
            "at least 0 ms",
            "0",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_resilience4j_defaults() {
        let c = BulkheadConfig::default();
        assert_eq!(c.max_concurrent_calls(), 25);
        assert_eq!(c.max_wait_duration(), Duration::ZERO);
        assert!(c.writable_stack_trace_enabled());
        assert!(c.fair_call_handling_enabled());
        assert!(!c.exact_resilience4j());
    }

    #[test]
    fn zero_calls_are_allowed_and_sub_millisecond_waits_truncate() {
        let c = BulkheadConfig::builder()
            .max_concurrent_calls(0)
            .max_wait_duration(Duration::from_micros(1_999))
            .build()
            .unwrap();
        assert_eq!(c.max_concurrent_calls(), 0);
        assert_eq!(c.max_wait_duration(), Duration::from_millis(1));
    }

    #[test]
    fn out_of_range_values_get_resilience4j_messages() {
        let e = BulkheadConfig::builder()
            .max_concurrent_calls(-1)
            .build()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "maxConcurrentCalls must be an integer value >= 0"
        );
        assert_eq!(e.setting(), "maxConcurrentCalls");
        let e = BulkheadConfig::builder()
            .max_wait_duration(SignedDuration::from_millis(-1))
            .build()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "maxWaitDuration must be a positive integer value >= 0"
        );
        // -0.5 ms is -1 ms by Java's toMillis() (floor).
        assert!(BulkheadConfig::builder()
            .max_wait_duration(SignedDuration::from_nanos(-500_000))
            .build()
            .is_err());
    }
}
