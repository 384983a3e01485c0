//! `RetryConfig`: every Resilience4j Retry setting, its default and its validation.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::classify::{AnyPredicate, ErrorCatalog};
use crate::clock::{Clock, SystemClock};
use crate::interval::{IntervalFunction, RandomSource, ThreadRandom};

/// Resilience4j's Retry defaults.
pub mod defaults {
    /// `DEFAULT_MAX_ATTEMPTS`: 3 calls in all, the first one included.
    pub const MAX_ATTEMPTS: u32 = 3;
    /// `DEFAULT_WAIT_DURATION`: 500 ms between attempts.
    pub const WAIT_DURATION_MILLIS: u64 = 500;
}

/// What an attempt produced, as a custom interval function sees it (Resilience4j's
/// `Either<Throwable, T>` argument of `IntervalBiFunction`).
#[derive(Clone, Copy)]
pub enum AttemptOutcome<'a> {
    /// The attempt failed with this error (the application's `E`, or one of the library's
    /// own errors in exact-Resilience4j mode). `Left(exception)` in Java.
    Error(&'a dyn Any),
    /// The attempt returned this value and `retryOnResult` asked for a retry. `Right(result)`.
    Result(&'a dyn Any),
}

impl fmt::Debug for AttemptOutcome<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AttemptOutcome::Error(_) => "Error(..)",
            AttemptOutcome::Result(_) => "Result(..)",
        })
    }
}

/// A custom wait: `(attempt, outcome) -> milliseconds` (Resilience4j's `IntervalBiFunction`).
/// `attempt` is 1 for the wait before the second call. A negative value stops retrying.
pub type IntervalBiFunction = Arc<dyn Fn(u32, AttemptOutcome<'_>) -> i64 + Send + Sync>;

pub(super) type ResultConsumer = Arc<dyn Fn(u32, &dyn Any) + Send + Sync>;

/// The wait between attempts, validated.
#[derive(Clone)]
pub(crate) enum RetryInterval {
    /// One of Resilience4j's interval functions. `deferred` holds the message of the check
    /// Resilience4j makes only when the first interval is computed (exact mode only).
    Function {
        function: IntervalFunction,
        deferred: Option<String>,
    },
    /// A custom function.
    BiFunction(IntervalBiFunction),
}

/// The configuration of one retry: Resilience4j's `RetryConfig`.
///
/// Immutable and cheap to clone. Build one with [`RetryConfig::builder`] or start from
/// [`RetryConfig::default`] (Resilience4j's `ofDefaults()`: 3 attempts, 500 ms between
/// them, every error retried, no result retried, `failAfterMaxAttempts` off).
#[derive(Clone)]
pub struct RetryConfig {
    pub(crate) max_attempts: u32,
    pub(crate) interval: RetryInterval,
    pub(crate) retry_on_result: Option<AnyPredicate>,
    pub(crate) consume_result_before_retry_attempt: Option<ResultConsumer>,
    pub(crate) fail_after_max_attempts: bool,
    pub(crate) writable_stack_trace_enabled: bool,
    pub(crate) retry_on_exception: Option<AnyPredicate>,
    pub(crate) retry_exceptions: Vec<String>,
    pub(crate) ignore_exceptions: Vec<String>,
    pub(crate) error_catalog: ErrorCatalog,
    pub(crate) random: Arc<dyn RandomSource>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) exact_resilience4j: bool,
    /// breaker's own budget settings (off by default).
    pub(crate) budgets: super::budget::RetryBudgets,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_attempts: defaults::MAX_ATTEMPTS,
            interval: RetryInterval::Function {
                function: IntervalFunction::Constant {
                    interval_millis: defaults::WAIT_DURATION_MILLIS,
                },
                deferred: None,
            },
            retry_on_result: None,
            consume_result_before_retry_attempt: None,
            fail_after_max_attempts: false,
            writable_stack_trace_enabled: true,
            retry_on_exception: None,
            retry_exceptions: Vec::new(),
            ignore_exceptions: Vec::new(),
            error_catalog: ErrorCatalog::new(),
            random: Arc::new(ThreadRandom),
            clock: SystemClock::shared(),
            exact_resilience4j: false,
            budgets: super::budget::RetryBudgets::default(),
        }
    }
}

impl RetryConfig {
    /// `maxAttempts`: calls in all, the first one included (>= 1; 1 = never retry).
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The interval function, `None` when a custom
    /// [`interval_bi_function`](crate::retry::RetryConfigBuilder::interval_bi_function) is in use.
    pub fn interval_function(&self) -> Option<&IntervalFunction> {
        match &self.interval {
            RetryInterval::Function { function, .. } => Some(function),
            RetryInterval::BiFunction(_) => None,
        }
    }

    /// `waitDuration` of a constant wait, or the initial interval of a backoff, in whole ms;
    /// `None` with a custom interval function.
    pub fn wait_duration(&self) -> Option<Duration> {
        let ms = match self.interval_function()? {
            IntervalFunction::Constant { interval_millis } => *interval_millis,
            IntervalFunction::Exponential { initial_millis, .. }
            | IntervalFunction::ExponentialRandom { initial_millis, .. } => *initial_millis,
            IntervalFunction::Randomized {
                interval_millis, ..
            } => *interval_millis,
        };
        Some(Duration::from_millis(ms))
    }

    /// `failAfterMaxAttempts`: when the results are exhausted (the last attempt's result
    /// still matches `retryOnResult`), fail with
    /// [`MaxRetriesExceeded`](crate::retry::MaxRetriesExceeded) instead of returning that
    /// result. An error on the last attempt is returned unchanged either way.
    pub fn fail_after_max_attempts(&self) -> bool {
        self.fail_after_max_attempts
    }

    /// `writableStackTraceEnabled`: kept for parity; Rust errors carry no stack trace.
    pub fn writable_stack_trace_enabled(&self) -> bool {
        self.writable_stack_trace_enabled
    }

    /// `retryExceptions`: names of errors that are retried (bound through the
    /// [`ErrorCatalog`]); empty = every error (unless a `retry_on_exception` predicate is
    /// set).
    pub fn retry_exceptions(&self) -> &[String] {
        &self.retry_exceptions
    }

    /// `ignoreExceptions`: names of errors that are never retried; they win over
    /// `retryExceptions`.
    pub fn ignore_exceptions(&self) -> &[String] {
        &self.ignore_exceptions
    }

    /// Whether a `retryOnResult` predicate is set.
    pub fn has_retry_on_result(&self) -> bool {
        self.retry_on_result.is_some()
    }

    /// Whether a `retryOnException` predicate is set.
    pub fn has_retry_on_exception(&self) -> bool {
        self.retry_on_exception.is_some()
    }

    /// The catalog that binds exception names to application errors.
    pub fn error_catalog(&self) -> &ErrorCatalog {
        &self.error_catalog
    }

    /// The clock the waits run on (and events are stamped with).
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Whether this config reproduces Resilience4j's defects (see the
    /// [module docs](crate::retry#where-this-differs-from-resilience4j-on-purpose)).
    pub fn exact_resilience4j(&self) -> bool {
        self.exact_resilience4j
    }

    /// breaker's own budget settings (deadline attempt time, nested retries, retry budget);
    /// the default sets none (see [`RetryBudgets`](super::RetryBudgets)).
    pub fn budgets(&self) -> &super::budget::RetryBudgets {
        &self.budgets
    }

    /// Resilience4j's exception predicate: `(retryExceptions OR retryOnException, or every
    /// error when neither is set) AND NOT ignoreExceptions`.
    pub fn is_retryable(&self, error: &dyn Any) -> bool {
        let ignored = !self.ignore_exceptions.is_empty()
            && self
                .error_catalog
                .matches_any(&self.ignore_exceptions, error);
        if ignored {
            return false;
        }
        let listed = !self.retry_exceptions.is_empty();
        match &self.retry_on_exception {
            None if !listed => true,
            p => {
                (listed
                    && self
                        .error_catalog
                        .matches_any(&self.retry_exceptions, error))
                    || p.as_ref().is_some_and(|p| p(error))
            }
        }
    }

    /// Whether `retryOnResult` asks for another attempt after `result`.
    pub fn is_retry_result(&self, result: &dyn Any) -> bool {
        self.retry_on_result.as_ref().is_some_and(|p| p(result))
    }

    /// The wait before attempt `attempt + 1`, in ms (negative: stop retrying).
    ///
    /// # Errors
    /// Resilience4j's deferred interval check (exact mode only), e.g. `Illegal argument
    /// interval: 0 millis is less than 1`.
    pub(crate) fn interval_millis(
        &self,
        attempt: u32,
        outcome: AttemptOutcome<'_>,
    ) -> Result<i64, String> {
        match &self.interval {
            RetryInterval::Function {
                deferred: Some(message),
                ..
            } => Err(message.clone()),
            RetryInterval::Function { function, .. } => Ok(function.millis(attempt, &*self.random)),
            RetryInterval::BiFunction(f) => Ok(f(attempt, outcome)),
        }
    }

    pub(crate) fn consume_result(&self, attempt: u32, result: &dyn Any) {
        if let Some(c) = &self.consume_result_before_retry_attempt {
            c(attempt, result);
        }
    }
}

impl fmt::Debug for RetryConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryConfig")
            .field("max_attempts", &self.max_attempts)
            .field("interval_function", &self.interval_function())
            .field("fail_after_max_attempts", &self.fail_after_max_attempts)
            .field("retry_exceptions", &self.retry_exceptions)
            .field("ignore_exceptions", &self.ignore_exceptions)
            .field("retry_on_exception", &self.retry_on_exception.is_some())
            .field("retry_on_result", &self.retry_on_result.is_some())
            .field("exact_resilience4j", &self.exact_resilience4j)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
