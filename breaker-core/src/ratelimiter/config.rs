//! `RateLimiterConfig`: Resilience4j's rate-limiter settings, defaults and validation.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::config::SignedDuration;
use crate::error::ConfigError;

/// `timeoutDuration` default: 5 s.
pub const DEFAULT_TIMEOUT_DURATION: Duration = Duration::from_secs(5);
/// `limitRefreshPeriod` default: 500 ns.
pub const DEFAULT_LIMIT_REFRESH_PERIOD: Duration = Duration::from_nanos(500);
/// `limitForPeriod` default: 50 permits.
pub const DEFAULT_LIMIT_FOR_PERIOD: u32 = 50;

/// Decides from a call's outcome whether to drain the limiter: `Ok(value)` or `Err(error)`,
/// as `&dyn Any` (downcast to the types you expect). Resilience4j's
/// `drainPermissionsOnResult` predicate over `Either<Throwable, Object>`.
pub type DrainPredicate = Arc<dyn Fn(Result<&dyn Any, &dyn Any>) -> bool + Send + Sync>;

/// A duration argument that may be Java's `null`: a [`Duration`], a [`SignedDuration`], or
/// an `Option` of either (`None` is `null`, which Resilience4j's builder rejects with a
/// `NullPointerException`).
pub trait NullableDuration {
    /// The duration, `None` for `null`.
    fn into_nullable(self) -> Option<SignedDuration>;
}

impl NullableDuration for Duration {
    fn into_nullable(self) -> Option<SignedDuration> {
        Some(self.into())
    }
}
impl NullableDuration for SignedDuration {
    fn into_nullable(self) -> Option<SignedDuration> {
        Some(self)
    }
}
impl NullableDuration for Option<Duration> {
    fn into_nullable(self) -> Option<SignedDuration> {
        self.map(Into::into)
    }
}
impl NullableDuration for Option<SignedDuration> {
    fn into_nullable(self) -> Option<SignedDuration> {
        self
    }
}

/// The configuration of one rate limiter: Resilience4j's `RateLimiterConfig`.
///
/// Immutable and cheap to clone. Build one with [`RateLimiterConfig::builder`] or take
/// [`RateLimiterConfig::default`] (`RateLimiterConfig.ofDefaults()`: 50 permits per 500 ns,
/// a 5 s timeout, i.e. practically no limit; real configs set all three).
#[derive(Clone)]
pub struct RateLimiterConfig {
    pub(crate) timeout_duration: Duration,
    pub(crate) limit_refresh_period: Duration,
    pub(crate) limit_for_period: u32,
    pub(crate) drain_permissions_on_result: Option<DrainPredicate>,
    pub(crate) writable_stack_trace_enabled: bool,
    pub(crate) exact_resilience4j: bool,
    pub(crate) clock: Arc<dyn Clock>,
}

impl Default for RateLimiterConfig {
    fn default() -> Self {
        RateLimiterConfig {
            timeout_duration: DEFAULT_TIMEOUT_DURATION,
            limit_refresh_period: DEFAULT_LIMIT_REFRESH_PERIOD,
            limit_for_period: DEFAULT_LIMIT_FOR_PERIOD,
            drain_permissions_on_result: None,
            writable_stack_trace_enabled: true,
            exact_resilience4j: false,
            clock: SystemClock::shared(),
        }
    }
}

impl RateLimiterConfig {
    /// A builder starting from Resilience4j's defaults (`RateLimiterConfig.custom()`).
    pub fn builder() -> RateLimiterConfigBuilder {
        RateLimiterConfig::default().to_builder()
    }

    /// A builder starting from this config (`RateLimiterConfig.from(prototype)`).
    pub fn to_builder(&self) -> RateLimiterConfigBuilder {
        RateLimiterConfigBuilder {
            timeout_duration: Some(self.timeout_duration.into()),
            limit_refresh_period: Some(self.limit_refresh_period.into()),
            limit_for_period: i64::from(self.limit_for_period),
            drain_permissions_on_result: self.drain_permissions_on_result.clone(),
            writable_stack_trace_enabled: self.writable_stack_trace_enabled,
            exact_resilience4j: self.exact_resilience4j,
            clock: self.clock.clone(),
        }
    }

    /// `timeoutDuration`: the longest a call waits for a permit (ns precision, >= 0).
    pub fn timeout_duration(&self) -> Duration {
        self.timeout_duration
    }
    /// `limitRefreshPeriod`: the length of one cycle (ns precision, >= 1 ns). Cycles are
    /// counted from the limiter's creation.
    pub fn limit_refresh_period(&self) -> Duration {
        self.limit_refresh_period
    }
    /// `limitForPeriod`: permits granted per cycle, and the most that can be stored (>= 1).
    pub fn limit_for_period(&self) -> u32 {
        self.limit_for_period
    }
    /// `drainPermissionsOnResult`, if set.
    pub fn drain_permissions_on_result(&self) -> Option<&DrainPredicate> {
        self.drain_permissions_on_result.as_ref()
    }
    /// `writableStackTraceEnabled`: accepted; no effect in Rust.
    pub fn writable_stack_trace_enabled(&self) -> bool {
        self.writable_stack_trace_enabled
    }
    /// Whether the limiter reproduces Resilience4j's defects (see the module docs).
    pub fn exact_resilience4j(&self) -> bool {
        self.exact_resilience4j
    }
    /// The clock of cycles, waits and event times.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }
}

impl fmt::Debug for RateLimiterConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimiterConfig")
            .field("timeout_duration", &self.timeout_duration)
            .field("limit_refresh_period", &self.limit_refresh_period)
            .field("limit_for_period", &self.limit_for_period)
            .field(
                "drain_permissions_on_result",
                &self.drain_permissions_on_result.is_some(),
            )
            .field(
                "writable_stack_trace_enabled",
                &self.writable_stack_trace_enabled,
            )
            .field("exact_resilience4j", &self.exact_resilience4j)
            .finish_non_exhaustive()
    }
}

/// Builds a validated [`RateLimiterConfig`] (Resilience4j's `RateLimiterConfig.Builder`).
#[derive(Clone)]
pub struct RateLimiterConfigBuilder {
    timeout_duration: Option<SignedDuration>,
    limit_refresh_period: Option<SignedDuration>,
    limit_for_period: i64,
    drain_permissions_on_result: Option<DrainPredicate>,
    writable_stack_trace_enabled: bool,
    exact_resilience4j: bool,
    clock: Arc<dyn Clock>,
}

impl RateLimiterConfigBuilder {
    /// `timeoutDuration`; allowed 0 ns up to about 292 years (its nanoseconds fit an `i64`);
    /// default 5 s. 0 fails fast.
    pub fn timeout_duration(mut self, d: impl NullableDuration) -> Self {
        self.timeout_duration = d.into_nullable();
        self
    }
    /// `limitRefreshPeriod`; allowed 1 ns up to about 292 years; default 500 ns.
    pub fn limit_refresh_period(mut self, d: impl NullableDuration) -> Self {
        self.limit_refresh_period = d.into_nullable();
        self
    }
    /// `limitForPeriod`; allowed 1..=2147483647 permits; default 50.
    pub fn limit_for_period(mut self, permits: i64) -> Self {
        self.limit_for_period = permits;
        self
    }
    /// `drainPermissionsOnResult`: after a call through the limiter, `f` sees its outcome;
    /// `true` drains the permits left in the current cycle. Not bindable from Spring.
    pub fn drain_permissions_on_result(
        mut self,
        f: impl Fn(Result<&dyn Any, &dyn Any>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.drain_permissions_on_result = Some(Arc::new(f));
        self
    }
    /// `writableStackTraceEnabled`; default true; no effect in Rust.
    pub fn writable_stack_trace_enabled(mut self, enabled: bool) -> Self {
        self.writable_stack_trace_enabled = enabled;
        self
    }
    /// Exact Resilience4j mode (default false): reproduce the defects this crate fixes (a
    /// refused call waits out its timeout; `drainPermissions` uses stale permissions and
    /// reports `min(permissions, 0)`). See the module docs.
    pub fn exact_resilience4j(mut self, exact: bool) -> Self {
        self.exact_resilience4j = exact;
        self
    }
    /// The clock of cycles, waits and event times (default: the shared system clock, read
    /// precisely).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Validates the settings as Resilience4j's builder does.
    ///
    /// # Errors
    /// A [`ConfigError`] with Resilience4j's message: `TimeoutDuration must not be null`,
    /// `TimeoutDuration too large` (its nanoseconds overflow a Java `long`), `TimeoutDuration
    /// must not be negative`; `LimitRefreshPeriod must not be null`, `LimitRefreshPeriod too
    /// large`, `LimitRefreshPeriod is too short` (below 1 ns); `LimitForPeriod should be
    /// greater than 0`.
    pub fn build(self) -> Result<RateLimiterConfig, ConfigError> {
        let timeout = nanos_of("timeoutDuration", "TimeoutDuration", self.timeout_duration)?;
        if timeout < 0 {
            return Err(ConfigError::new(
                "timeoutDuration",
                format!("{timeout}ns"),
                "at least 0 ns",
                "TimeoutDuration must not be negative".to_string(),
            ));
        }
        let period = nanos_of(
            "limitRefreshPeriod",
            "LimitRefreshPeriod",
            self.limit_refresh_period,
        )?;
        if period < 1 {
            return Err(ConfigError::new(
                "limitRefreshPeriod",
                format!("{period}ns"),
                "at least 1 ns",
                "LimitRefreshPeriod is too short".to_string(),
            ));
        }
        if self.limit_for_period < 1 {
            return Err(ConfigError::new(
                "limitForPeriod",
                self.limit_for_period.to_string(),
                "1 to 2147483647 (permits)",
                "LimitForPeriod should be greater than 0".to_string(),
            ));
        }
        ConfigError::check_java_int(
            "limitForPeriod",
            self.limit_for_period,
            "1 to 2147483647 (permits)",
        )?;
        Ok(RateLimiterConfig {
            timeout_duration: Duration::from_nanos(timeout as u64),
            limit_refresh_period: Duration::from_nanos(period as u64),
            limit_for_period: self.limit_for_period as u32,
            drain_permissions_on_result: self.drain_permissions_on_result,
            writable_stack_trace_enabled: self.writable_stack_trace_enabled,
            exact_resilience4j: self.exact_resilience4j,
            clock: self.clock,
        })
    }
}

/// The nanoseconds of a duration setting as Java's `Duration.toNanos()` gives them: `null`
/// and overflowing values rejected with Resilience4j's messages.
fn nanos_of(
    setting: &'static str,
    java_name: &str,
    d: Option<SignedDuration>,
) -> Result<i64, ConfigError> {
    let Some(d) = d else {
        return Err(ConfigError::new(
            setting,
            "null".to_string(),
            "a duration",
            format!("{java_name} must not be null"),
        )
        .with_exception("NullPointerException"));
    };
    i64::try_from(d.as_nanos()).map_err(|_| {
        ConfigError::new(
            setting,
            format!("{}ns", d.as_nanos()),
            "at most 9223372036854775807 ns",
            format!("{java_name} too large"),
        )
        .with_exception("RuntimeException")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_beyond_java_s_int_is_rejected() {
        let e = RateLimiterConfig::builder()
            .limit_for_period(i64::from(i32::MAX) + 1)
            .build()
            .unwrap_err();
        assert_eq!(
            e.message(),
            "limitForPeriod must be at most 2147483647, but was 2147483648"
        );
        assert_eq!(e.allowed(), "1 to 2147483647 (permits)");
        assert!(RateLimiterConfig::builder()
            .limit_for_period(i64::from(i32::MAX))
            .build()
            .is_ok());
    }

    #[test]
    fn defaults_are_resilience4j_defaults() {
        let c = RateLimiterConfig::default();
        assert_eq!(c.timeout_duration(), Duration::from_secs(5));
        assert_eq!(c.limit_refresh_period(), Duration::from_nanos(500));
        assert_eq!(c.limit_for_period(), 50);
        assert!(c.drain_permissions_on_result().is_none());
        assert!(!c.exact_resilience4j());
    }

    #[test]
    fn messages_are_resilience4j_s() {
        let msg = |b: RateLimiterConfigBuilder| b.build().unwrap_err().to_string();
        let b = RateLimiterConfig::builder;
        assert_eq!(
            msg(b().timeout_duration(None::<Duration>)),
            "TimeoutDuration must not be null"
        );
        assert_eq!(
            msg(b().timeout_duration(SignedDuration::from_millis(-1))),
            "TimeoutDuration must not be negative"
        );
        assert_eq!(
            msg(b().timeout_duration(SignedDuration::from_millis(9_300_000_000_000))),
            "TimeoutDuration too large"
        );
        assert_eq!(
            msg(b().limit_refresh_period(Duration::ZERO)),
            "LimitRefreshPeriod is too short"
        );
        assert_eq!(
            msg(b().limit_refresh_period(None::<SignedDuration>)),
            "LimitRefreshPeriod must not be null"
        );
        assert_eq!(
            msg(b().limit_for_period(0)),
            "LimitForPeriod should be greater than 0"
        );
        assert!(b().timeout_duration(Duration::ZERO).build().is_ok());
        assert!(b()
            .limit_refresh_period(Duration::from_nanos(1))
            .build()
            .is_ok());
    }
}
