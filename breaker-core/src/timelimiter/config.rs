//! `TimeLimiterConfig`: Resilience4j's time-limiter settings, defaults and validation.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::config::SignedDuration;
use crate::error::ConfigError;

/// Resilience4j's TimeLimiter defaults.
pub mod defaults {
    /// `timeoutDuration`: 1 s, in ms.
    pub const TIMEOUT_DURATION_MILLIS: u64 = 1000;
    /// `cancelRunningFuture`: true.
    pub const CANCEL_RUNNING_FUTURE: bool = true;
}

/// The configuration of one time limiter: Resilience4j's `TimeLimiterConfig`.
///
/// Immutable and cheap to clone. [`TimeLimiterConfig::default`] is Resilience4j's
/// `ofDefaults()`: a 1 s timeout, `cancelRunningFuture` true.
#[derive(Clone)]
pub struct TimeLimiterConfig {
    pub(crate) timeout_duration: Duration,
    pub(crate) cancel_running_future: bool,
    pub(crate) clock: Arc<dyn Clock>,
}

impl Default for TimeLimiterConfig {
    fn default() -> Self {
        TimeLimiterConfig {
            timeout_duration: Duration::from_millis(defaults::TIMEOUT_DURATION_MILLIS),
            cancel_running_future: defaults::CANCEL_RUNNING_FUTURE,
            clock: SystemClock::shared(),
        }
    }
}

impl TimeLimiterConfig {
    /// A builder starting from Resilience4j's defaults (`TimeLimiterConfig.custom()`).
    pub fn builder() -> TimeLimiterConfigBuilder {
        TimeLimiterConfig::default().to_builder()
    }

    /// A builder starting from this config (`TimeLimiterConfig.from(base)`).
    pub fn to_builder(&self) -> TimeLimiterConfigBuilder {
        TimeLimiterConfigBuilder {
            timeout_duration: Some(self.timeout_duration.into()),
            cancel_running_future: self.cancel_running_future,
            clock: self.clock.clone(),
        }
    }

    /// `timeoutDuration`, whole ms: how long a call may take, from its first poll.
    pub fn timeout_duration(&self) -> Duration {
        self.timeout_duration
    }

    /// `cancelRunningFuture`: whether a timed-out future is dropped (true) or, through
    /// `TimeLimiter::call_detached` (feature `tokio`), left
    /// running to completion on the runtime (false). See the
    /// [module docs](crate::timelimiter#cancelrunningfuture).
    pub fn cancel_running_future(&self) -> bool {
        self.cancel_running_future
    }

    /// The clock the timeout runs on.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }
}

impl fmt::Debug for TimeLimiterConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimeLimiterConfig")
            .field("timeout_duration", &self.timeout_duration)
            .field("cancel_running_future", &self.cancel_running_future)
            .finish_non_exhaustive()
    }
}

/// Builds a [`TimeLimiterConfig`] (Resilience4j's `TimeLimiterConfig.Builder`).
#[derive(Clone)]
pub struct TimeLimiterConfigBuilder {
    timeout_duration: Option<SignedDuration>,
    cancel_running_future: bool,
    clock: Arc<dyn Clock>,
}

impl TimeLimiterConfigBuilder {
    /// `timeoutDuration`, truncated to whole ms as Resilience4j uses it; default 1 s. Zero
    /// and negative values are accepted, as in Resilience4j: a call then times out unless
    /// its future is ready at the first poll.
    pub fn timeout_duration(mut self, d: impl Into<SignedDuration>) -> Self {
        self.timeout_duration = Some(d.into());
        self
    }

    /// `timeoutDuration` that may be missing: `None` stands for Java's `null` (a key given
    /// without a value), which [`build`](Self::build) rejects.
    pub fn timeout_duration_opt(mut self, d: Option<SignedDuration>) -> Self {
        self.timeout_duration = d;
        self
    }

    /// `cancelRunningFuture`; default true.
    pub fn cancel_running_future(mut self, cancel: bool) -> Self {
        self.cancel_running_future = cancel;
        self
    }

    /// The clock the timeout runs on ([`ManualClock`](crate::ManualClock) in tests).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Validates the settings as Resilience4j's builder does.
    ///
    /// # Errors
    /// A [`ConfigError`] for a missing `timeoutDuration` (Resilience4j's
    /// `NullPointerException`: `TimeoutDuration must not be null`).
    pub fn build(self) -> Result<TimeLimiterConfig, ConfigError> {
        let Some(timeout) = self.timeout_duration else {
            return Err(ConfigError::new(
                "timeoutDuration",
                "null".to_string(),
                "a duration",
                "TimeoutDuration must not be null".to_string(),
            )
            .with_exception("NullPointerException"));
        };
        let millis = timeout.as_millis_floor().clamp(0, u64::MAX as i128) as u64;
        Ok(TimeLimiterConfig {
            timeout_duration: Duration::from_millis(millis),
            cancel_running_future: self.cancel_running_future,
            clock: self.clock,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_derived_configs() {
        let c = TimeLimiterConfig::default();
        assert_eq!(c.timeout_duration(), Duration::from_secs(1));
        assert!(c.cancel_running_future());
        // from(base) keeps what is not set: base 5 s / false, derived timeout 20 s.
        let base = TimeLimiterConfig::builder()
            .timeout_duration(Duration::from_secs(5))
            .cancel_running_future(false)
            .build()
            .unwrap();
        let derived = base
            .to_builder()
            .timeout_duration(Duration::from_secs(20))
            .build()
            .unwrap();
        assert_eq!(derived.timeout_duration(), Duration::from_secs(20));
        assert!(!derived.cancel_running_future());
    }

    #[test]
    fn sub_millisecond_and_negative_timeouts() {
        let c = TimeLimiterConfig::builder()
            .timeout_duration(Duration::from_micros(1999))
            .build()
            .unwrap();
        assert_eq!(c.timeout_duration(), Duration::from_millis(1));
        let c = TimeLimiterConfig::builder()
            .timeout_duration(SignedDuration::from_millis(-5))
            .build()
            .unwrap();
        assert_eq!(c.timeout_duration(), Duration::ZERO);
    }

    #[test]
    fn a_missing_timeout_is_resilience4j_s_null_pointer_exception() {
        let e = TimeLimiterConfig::builder()
            .timeout_duration_opt(None)
            .build()
            .unwrap_err();
        assert_eq!(e.to_string(), "TimeoutDuration must not be null");
        assert_eq!(e.exception(), "NullPointerException");
        assert_eq!(e.setting(), "timeoutDuration");
    }
}
