//! Conversion of a resolved retry, time limiter, bulkhead, thread-pool bulkhead or rate limiter
//! into breaker-core's config builder, the one place their values are checked (every level of
//! a `baseConfig` chain is built through it while resolving, as Resilience4j builds each).

use std::time::Duration;

use breaker_core::bulkhead::{
    BulkheadConfig, BulkheadConfigBuilder, ThreadPoolBulkheadConfig,
    ThreadPoolBulkheadConfigBuilder,
};
use breaker_core::ratelimiter::{RateLimiterConfig, RateLimiterConfigBuilder};
use breaker_core::retry::{RetryConfig, RetryConfigBuilder};
use breaker_core::timelimiter::{TimeLimiterConfig, TimeLimiterConfigBuilder};
use breaker_core::{ConfigError, ErrorCatalog, IntervalFunction};

use super::{
    ResolvedBulkhead, ResolvedRateLimiter, ResolvedRetry, ResolvedThreadPoolBulkhead,
    ResolvedTimeLimiter, RetryInterval,
};

impl ResolvedRetry {
    /// A breaker-core builder carrying every resolved setting and `catalog` (which binds the
    /// `retryExceptions` / `ignoreExceptions` names to Rust errors). The Java classes
    /// (`intervalBiFunction`, `retryExceptionPredicate`, `resultPredicate`,
    /// `consumeResultBeforeRetryAttempt`) cannot run here: set them on the builder before
    /// [`RetryConfigBuilder::build`]; with a custom `intervalBiFunction` in the file the builder
    /// keeps Resilience4j's default 500 ms wait until you do.
    pub fn to_core_builder(&self, catalog: &ErrorCatalog) -> RetryConfigBuilder {
        let mut b = RetryConfig::builder()
            .max_attempts(i64::from(self.max_attempts.value))
            .fail_after_max_attempts(self.fail_after_max_attempts.value)
            .error_catalog(catalog.clone());
        if let RetryInterval::Function(f) = &self.interval.value {
            b = match f {
                // `waitDuration` alone: 0 ms is allowed (an interval function needs >= 1 ms).
                IntervalFunction::Constant { interval_millis } => {
                    b.wait_duration(Duration::from_millis(*interval_millis))
                }
                other => b.interval_function(other.clone()),
            };
        }
        if let Some(names) = &self.retry_exceptions.value {
            b = b.retry_exceptions(names.iter().cloned());
        }
        if let Some(names) = &self.ignore_exceptions.value {
            b = b.ignore_exceptions(names.iter().cloned());
        }
        b
    }

    /// The breaker-core configuration of this retry.
    ///
    /// # Errors
    /// breaker-core's [`ConfigError`]: only for a capped backoff whose first wait is 0 ms,
    /// which Resilience4j accepts and fails at the first retry, and breaker refuses up front
    /// (`RetryConfigBuilder::exact_resilience4j(true)` on [`to_core_builder`](Self::to_core_builder)
    /// keeps Resilience4j's behaviour).
    pub fn to_core_config(&self, catalog: &ErrorCatalog) -> Result<RetryConfig, ConfigError> {
        self.to_core_builder(catalog).build()
    }
}

impl ResolvedTimeLimiter {
    /// A breaker-core builder carrying every resolved setting.
    pub fn to_core_builder(&self) -> TimeLimiterConfigBuilder {
        TimeLimiterConfig::builder()
            .timeout_duration(self.timeout_duration.value)
            .cancel_running_future(self.cancel_running_future.value)
    }

    /// The breaker-core configuration of this time limiter.
    ///
    /// # Errors
    /// breaker-core's [`ConfigError`] (none for a resolved time limiter).
    pub fn to_core_config(&self) -> Result<TimeLimiterConfig, ConfigError> {
        self.to_core_builder().build()
    }
}

impl ResolvedBulkhead {
    /// A breaker-core builder carrying every resolved setting.
    pub fn to_core_builder(&self) -> BulkheadConfigBuilder {
        BulkheadConfig::builder()
            .max_concurrent_calls(i64::from(self.max_concurrent_calls.value))
            .max_wait_duration(self.max_wait_duration.value)
            .writable_stack_trace_enabled(self.writable_stack_trace_enabled.value)
    }

    /// The breaker-core configuration of this bulkhead.
    ///
    /// # Errors
    /// breaker-core's [`ConfigError`] (none for a resolved bulkhead).
    pub fn to_core_config(&self) -> Result<BulkheadConfig, ConfigError> {
        self.to_core_builder().build()
    }
}

impl ResolvedThreadPoolBulkhead {
    /// A breaker-core builder carrying every resolved setting (the sizes left at the machine
    /// defaults unless set). `contextPropagators` name Java classes: propagate context in
    /// Rust with the runtime's means (e.g. `tracing` spans).
    pub fn to_core_builder(&self) -> ThreadPoolBulkheadConfigBuilder {
        let mut b = ThreadPoolBulkheadConfig::builder()
            .queue_capacity(i64::from(self.queue_capacity.value))
            .keep_alive_duration(self.keep_alive_duration.value)
            .writable_stack_trace_enabled(self.writable_stack_trace_enabled.value);
        if let Some(core) = self.core_thread_pool_size.value {
            b = b.core_thread_pool_size(i64::from(core));
        }
        if let Some(max) = self.max_thread_pool_size.value {
            b = b.max_thread_pool_size(i64::from(max));
        }
        b
    }

    /// The breaker-core configuration of this thread-pool bulkhead.
    ///
    /// # Errors
    /// breaker-core's [`ConfigError`] (none for a resolved thread-pool bulkhead).
    pub fn to_core_config(&self) -> Result<ThreadPoolBulkheadConfig, ConfigError> {
        self.to_core_builder().build()
    }
}

impl ResolvedRateLimiter {
    /// A breaker-core builder carrying every resolved setting. `drainPermissionsOnResult` is
    /// not bindable from Spring: set it on the builder.
    pub fn to_core_builder(&self) -> RateLimiterConfigBuilder {
        RateLimiterConfig::builder()
            .limit_for_period(i64::from(self.limit_for_period.value))
            .limit_refresh_period(self.limit_refresh_period.value)
            .timeout_duration(self.timeout_duration.value)
            .writable_stack_trace_enabled(self.writable_stack_trace_enabled.value)
    }

    /// The breaker-core configuration of this rate limiter.
    ///
    /// # Errors
    /// breaker-core's [`ConfigError`] (none for a resolved rate limiter).
    pub fn to_core_config(&self) -> Result<RateLimiterConfig, ConfigError> {
        self.to_core_builder().build()
    }
}
