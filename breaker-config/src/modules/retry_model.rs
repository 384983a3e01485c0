//! The types of one `resilience4j.retry` entry: its bindable keys, its wait between attempts
//! and its effective configuration. `retry.rs` binds them; `retry_notes.rs` explains them.

use breaker_core::IntervalFunction;

use crate::model::{Base, Setting};
use crate::origin::Origin;

/// A bindable `resilience4j.retry` property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum RetryKey {
    MaxAttempts,
    WaitDuration,
    IntervalBiFunction,
    RetryExceptionPredicate,
    ResultPredicate,
    ConsumeResultBeforeRetryAttempt,
    RetryExceptions,
    IgnoreExceptions,
    EventConsumerBufferSize,
    EnableExponentialBackoff,
    ExponentialBackoffMultiplier,
    ExponentialMaxWaitDuration,
    EnableRandomizedWait,
    RandomizedWaitFactor,
    FailAfterMaxAttempts,
    BaseConfig,
}

/// The retry's wait between attempts: the interval function in force, as Resilience4j's Spring
/// layer selects it from the block that sets `waitDuration` (whole milliseconds, as
/// `Duration.toMillis()` gives them).
#[derive(Clone, Debug, PartialEq)]
pub enum RetryInterval {
    /// One of Resilience4j's `IntervalFunction` factories (a constant wait included).
    Function(IntervalFunction),
    /// `intervalBiFunction`: a Java class, which cannot run here (give one in code).
    Custom {
        /// The class name as written.
        class: String,
    },
}

/// The effective configuration of one retry, each setting with its source.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedRetry {
    /// The instance name, or `default` for the default config.
    pub name: String,
    /// What it builds on.
    pub base: Base,
    /// `maxAttempts`: total calls including the first, >= 1 (default 3).
    pub max_attempts: Setting<i32>,
    /// The wait between attempts (default constant 500 ms); its source is the block that set
    /// `waitDuration` (or `intervalBiFunction`).
    pub interval: Setting<RetryInterval>,
    /// `retryExceptionPredicate` class name (cannot run here).
    pub retry_exception_predicate: Setting<Option<String>>,
    /// `resultPredicate` class name (cannot run here).
    pub result_predicate: Setting<Option<String>>,
    /// `consumeResultBeforeRetryAttempt` class name (cannot run here).
    pub consume_result_before_retry_attempt: Setting<Option<String>>,
    /// `retryExceptions` as written; `None` when not configured.
    pub retry_exceptions: Setting<Option<Vec<String>>>,
    /// `ignoreExceptions` as written; `None` when not configured.
    pub ignore_exceptions: Setting<Option<Vec<String>>>,
    /// `failAfterMaxAttempts` (default false).
    pub fail_after_max_attempts: Setting<bool>,
    /// `eventConsumerBufferSize`, >= 1 (default 100).
    pub event_consumer_buffer_size: Setting<i32>,
    /// Positions of each `retryExceptions` item, parallel to the names.
    pub retry_exceptions_origins: Vec<Origin>,
    /// Positions of each `ignoreExceptions` item, parallel to the names.
    pub ignore_exceptions_origins: Vec<Origin>,
}
