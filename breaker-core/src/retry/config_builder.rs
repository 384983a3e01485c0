//! `RetryConfigBuilder`: Resilience4j's `RetryConfig.Builder`, every setter, the wait settings of
//! Spring's `CommonRetryConfigurationProperties` and the validation of
//! [`build`](RetryConfigBuilder::build).

use std::any::Any;
use std::sync::Arc;

use crate::classify::{predicate, AnyPredicate, ErrorCatalog};
use crate::clock::Clock;
use crate::config::{dedup, SignedDuration};
use crate::error::ConfigError;
use crate::interval::{
    check_interval, check_randomization_factor, IntervalFunction, RandomSource, DEFAULT_MULTIPLIER,
    DEFAULT_RANDOMIZATION_FACTOR,
};

use super::config::{
    AttemptOutcome, IntervalBiFunction, ResultConsumer, RetryConfig, RetryInterval,
};

impl RetryConfig {
    /// A builder starting from Resilience4j's defaults (`RetryConfig.custom()`).
    pub fn builder() -> RetryConfigBuilder {
        RetryConfigBuilder::from_config(&RetryConfig::default())
    }

    /// A builder starting from this config (`RetryConfig.from(base)`): a list set on it
    /// replaces the base's list; a `retry_on_exception` predicate of the base stays and is
    /// ORed with a new `retryExceptions` list, as in Resilience4j.
    pub fn to_builder(&self) -> RetryConfigBuilder {
        RetryConfigBuilder::from_config(self)
    }
}

/// How the builder was told to wait, before validation.
#[derive(Clone)]
enum Wait {
    /// `waitDuration(d)`: a constant wait of `d` (>= 0 ms).
    Duration(SignedDuration),
    /// One of `IntervalFunction`'s factories, with its raw (possibly invalid) arguments.
    Factory {
        function: IntervalFunction,
        initial_millis: i64,
        max_millis: Option<i64>,
    },
    /// Taken over from a built config.
    Built(RetryInterval),
}

/// Builds a validated [`RetryConfig`] (Resilience4j's `RetryConfig.Builder`).
///
/// Setters take values as Resilience4j's do (counts that may be negative, durations that may
/// be negative), so that a config file's values reach [`build`](Self::build), which checks
/// them all and returns a [`ConfigError`] naming the setting with Resilience4j's exact
/// message.
#[derive(Clone)]
pub struct RetryConfigBuilder {
    max_attempts: i64,
    wait: Wait,
    retry_on_result: Option<AnyPredicate>,
    consume_result_before_retry_attempt: Option<ResultConsumer>,
    fail_after_max_attempts: bool,
    writable_stack_trace_enabled: bool,
    retry_on_exception: Option<AnyPredicate>,
    retry_exceptions: Vec<String>,
    ignore_exceptions: Vec<String>,
    error_catalog: ErrorCatalog,
    random: Arc<dyn RandomSource>,
    clock: Arc<dyn Clock>,
    exact_resilience4j: bool,
    interval_bi_function: Option<IntervalBiFunction>,
    budgets: super::budget::RetryBudgets,
}

impl RetryConfigBuilder {
    fn from_config(c: &RetryConfig) -> Self {
        RetryConfigBuilder {
            max_attempts: c.max_attempts as i64,
            wait: Wait::Built(c.interval.clone()),
            retry_on_result: c.retry_on_result.clone(),
            consume_result_before_retry_attempt: c.consume_result_before_retry_attempt.clone(),
            fail_after_max_attempts: c.fail_after_max_attempts,
            writable_stack_trace_enabled: c.writable_stack_trace_enabled,
            retry_on_exception: c.retry_on_exception.clone(),
            retry_exceptions: c.retry_exceptions.clone(),
            ignore_exceptions: c.ignore_exceptions.clone(),
            error_catalog: c.error_catalog.clone(),
            random: c.random.clone(),
            clock: c.clock.clone(),
            exact_resilience4j: c.exact_resilience4j,
            interval_bi_function: None,
            budgets: c.budgets,
        }
    }

    /// `maxAttempts`: calls in all, the first one included; allowed >= 1; default 3.
    pub fn max_attempts(mut self, attempts: i64) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// `waitDuration`: a constant wait between attempts, truncated to whole ms; allowed
    /// >= 0 ms (0 retries at once); default 500 ms. Replaces any interval function.
    pub fn wait_duration(mut self, d: impl Into<SignedDuration>) -> Self {
        self.wait = Wait::Duration(d.into());
        self.interval_bi_function = None;
        self
    }

    /// `intervalFunction`: the wait per attempt, as one of Resilience4j's `IntervalFunction`
    /// factories (checked as the factory checks it: intervals >= 1 ms, randomization factor
    /// in `[0, 1]`; the multiplier is not checked). Replaces `waitDuration` and any
    /// `intervalBiFunction` (the last one set wins, as in Resilience4j).
    pub fn interval_function(mut self, f: IntervalFunction) -> Self {
        let (initial, max) = match f {
            IntervalFunction::Constant { interval_millis } => (interval_millis, None),
            IntervalFunction::Randomized {
                interval_millis, ..
            } => (interval_millis, None),
            IntervalFunction::Exponential {
                initial_millis,
                max_millis,
                ..
            }
            | IntervalFunction::ExponentialRandom {
                initial_millis,
                max_millis,
                ..
            } => (initial_millis, max_millis),
        };
        let ms = |v: u64| v.min(i64::MAX as u64) as i64;
        self.wait = Wait::Factory {
            function: f,
            initial_millis: ms(initial),
            max_millis: max.map(ms),
        };
        self.interval_bi_function = None;
        self
    }

    /// `IntervalFunction.ofExponentialBackoff(initial, multiplier[, max])` from raw values
    /// (durations truncated to whole ms; may be invalid, [`build`](Self::build) reports it):
    /// attempt 1 waits `initial`, each later attempt the previous wait times `multiplier`,
    /// truncated; at most `max`.
    pub fn exponential_backoff(
        self,
        initial: impl Into<SignedDuration>,
        multiplier: f64,
        max: Option<SignedDuration>,
    ) -> Self {
        let (initial, max) = (millis(initial.into()), max.map(millis));
        self.factory(
            IntervalFunction::Exponential {
                initial_millis: clamp(initial),
                multiplier,
                max_millis: max.map(clamp),
            },
            initial,
            max,
        )
    }

    /// `IntervalFunction.ofRandomized(interval, factor)` from raw values: a uniformly random
    /// wait in `[interval - factor*interval, interval + factor*interval]`, at least 1 ms.
    pub fn randomized_wait(self, interval: impl Into<SignedDuration>, factor: f64) -> Self {
        let interval = millis(interval.into());
        self.factory(
            IntervalFunction::Randomized {
                interval_millis: clamp(interval),
                randomization_factor: factor,
            },
            interval,
            None,
        )
    }

    /// `IntervalFunction.ofExponentialRandomBackoff(initial, multiplier, factor[, max])` from
    /// raw values: the exponential wait of the attempt, randomized, then capped at `max`.
    pub fn exponential_random_backoff(
        self,
        initial: impl Into<SignedDuration>,
        multiplier: f64,
        factor: f64,
        max: Option<SignedDuration>,
    ) -> Self {
        let (initial, max) = (millis(initial.into()), max.map(millis));
        self.factory(
            IntervalFunction::ExponentialRandom {
                initial_millis: clamp(initial),
                multiplier,
                randomization_factor: factor,
                max_millis: max.map(clamp),
            },
            initial,
            max,
        )
    }

    fn factory(mut self, function: IntervalFunction, initial: i64, max: Option<i64>) -> Self {
        self.wait = Wait::Factory {
            function,
            initial_millis: initial,
            max_millis: max,
        };
        self.interval_bi_function = None;
        self
    }

    /// The wait as Resilience4j's Spring layer selects it from the `resilience4j.retry`
    /// properties of one config block (`CommonRetryConfigurationProperties`); see
    /// [`RetryWaitProperties`].
    pub fn wait_properties(self, p: &RetryWaitProperties) -> Self {
        p.apply(self)
    }

    /// `intervalBiFunction`: a custom wait from the attempt number and what the attempt
    /// produced, in ms; a negative value stops retrying. Replaces `waitDuration` and any
    /// `intervalFunction` (the last one set wins).
    pub fn interval_bi_function(
        mut self,
        f: impl Fn(u32, AttemptOutcome<'_>) -> i64 + Send + Sync + 'static,
    ) -> Self {
        self.interval_bi_function = Some(Arc::new(f));
        self
    }

    /// `retryOnResult`: results of type `T` for which `f` returns true are retried like
    /// failures; when the attempts run out, the last such result is returned (or
    /// [`MaxRetriesExceeded`](crate::retry::MaxRetriesExceeded) with
    /// `failAfterMaxAttempts`). Results of another type are never retried.
    pub fn retry_on_result<T: Any>(
        mut self,
        f: impl Fn(&T) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.retry_on_result = Some(predicate(f));
        self
    }

    /// `consumeResultBeforeRetryAttempt`: called with `(attempt, result)` just before the
    /// wait that precedes a retry caused by a result (not after the last attempt).
    pub fn consume_result_before_retry_attempt<T: Any>(
        mut self,
        f: impl Fn(u32, &T) + Send + Sync + 'static,
    ) -> Self {
        self.consume_result_before_retry_attempt = Some(Arc::new(move |n, v: &dyn Any| {
            if let Some(v) = v.downcast_ref::<T>() {
                f(n, v);
            }
        }));
        self
    }

    /// `failAfterMaxAttempts`; default false. See [`RetryConfig::fail_after_max_attempts`].
    pub fn fail_after_max_attempts(mut self, fail: bool) -> Self {
        self.fail_after_max_attempts = fail;
        self
    }

    /// `writableStackTraceEnabled`; default true. No effect: Rust errors carry no stack
    /// trace.
    pub fn writable_stack_trace_enabled(mut self, enabled: bool) -> Self {
        self.writable_stack_trace_enabled = enabled;
        self
    }

    /// `retryOnException` (the `retryExceptionPredicate` class of a Spring file): errors of
    /// type `E` for which `f` returns true are retried (ORed with `retryExceptions`; an
    /// `ignoreExceptions` match still wins).
    pub fn retry_on_exception<E: Any>(
        mut self,
        f: impl Fn(&E) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.retry_on_exception = Some(predicate(f));
        self
    }

    /// `retryExceptions`: error names (bound through [`error_catalog`](Self::error_catalog))
    /// that are retried. Replaces the list of a base config.
    pub fn retry_exceptions<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.retry_exceptions = names.into_iter().map(Into::into).collect();
        self
    }

    /// `ignoreExceptions`: error names that are never retried; they win over
    /// `retryExceptions` and `retryOnException`. Replaces the list of a base config.
    pub fn ignore_exceptions<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.ignore_exceptions = names.into_iter().map(Into::into).collect();
        self
    }

    /// The catalog that binds `retryExceptions` / `ignoreExceptions` names to errors.
    pub fn error_catalog(mut self, catalog: ErrorCatalog) -> Self {
        self.error_catalog = catalog;
        self
    }

    /// Where randomized waits draw from (Java's `Math.random()`); default [`ThreadRandom`](crate::ThreadRandom).
    /// Inject a fixed source to make randomized waits exact in tests.
    pub fn random_source(mut self, random: Arc<dyn RandomSource>) -> Self {
        self.random = random;
        self
    }

    /// The clock the waits run on ([`ManualClock`](crate::ManualClock) in tests: waits then
    /// complete when the clock is advanced).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Exact-Resilience4j mode; default false. When true, the retry reproduces the
    /// Resilience4j defects this library otherwise fixes (see the
    /// [module docs](crate::retry#where-this-differs-from-resilience4j-on-purpose)):
    /// `failAfterMaxAttempts` counting a call twice, results exhausted counting the last
    /// attempt twice in `numberOfTotalCalls`, negative intervals stopping without counting
    /// the call (and surfacing as `IllegalStateException` after a result), the deferred
    /// check of an exponential backoff's initial interval, and event subscribers whose
    /// panic reaches the caller.
    pub fn exact_resilience4j(mut self, exact: bool) -> Self {
        self.exact_resilience4j = exact;
        self
    }

    /// breaker's own budget settings (not Resilience4j's; see [`RetryBudgets`](super::RetryBudgets)):
    /// the time per attempt a deadline is judged by, nested retries, a retry budget.
    /// Ignored in exact-Resilience4j mode.
    pub fn budgets(mut self, budgets: super::budget::RetryBudgets) -> Self {
        self.budgets = budgets;
        self
    }

    /// Validates every setting as Resilience4j's builder and interval factories do.
    ///
    /// # Errors
    /// A [`ConfigError`] with Resilience4j's message for the first setting out of range:
    /// `maxAttempts` below 1 (`maxAttempts must be greater than or equal to 1`), a negative
    /// `waitDuration` (`waitDuration must be a positive value`), an interval below 1 ms for a
    /// backoff or randomized wait (`Illegal argument interval: 0 millis is less than 1`,
    /// setting `waitDuration` or `exponentialMaxWaitDuration`), a randomization factor
    /// outside `[0, 1]` (`Illegal argument randomizationFactor: 1.5`). Resilience4j checks
    /// the initial interval of an exponential backoff with a cap only at the first retry;
    /// this builder checks it here, unless in exact-Resilience4j mode.
    pub fn build(self) -> Result<RetryConfig, ConfigError> {
        if self.max_attempts < 1 {
            return Err(ConfigError::new(
                "maxAttempts",
                self.max_attempts.to_string(),
                "at least 1 (calls in all, the first one included)",
                "maxAttempts must be greater than or equal to 1".to_string(),
            ));
        }
        ConfigError::check_java_int("maxAttempts", self.max_attempts, "at most 2147483647")?;
        if let Some(budget) = &self.budgets.budget {
            budget.validate().map_err(|message| {
                ConfigError::new(
                    "budget",
                    format!("{budget:?}"),
                    "ratio 0.0..=1.0, window 1s..=1h",
                    message,
                )
            })?;
        }
        let interval = match self.interval_bi_function {
            Some(f) => RetryInterval::BiFunction(f),
            None => validate_wait(self.wait, self.exact_resilience4j)?,
        };
        Ok(RetryConfig {
            max_attempts: self.max_attempts as u32,
            interval,
            retry_on_result: self.retry_on_result,
            consume_result_before_retry_attempt: self.consume_result_before_retry_attempt,
            fail_after_max_attempts: self.fail_after_max_attempts,
            writable_stack_trace_enabled: self.writable_stack_trace_enabled,
            retry_on_exception: self.retry_on_exception,
            retry_exceptions: dedup(self.retry_exceptions),
            ignore_exceptions: dedup(self.ignore_exceptions),
            error_catalog: self.error_catalog,
            random: self.random,
            clock: self.clock,
            exact_resilience4j: self.exact_resilience4j,
            budgets: self.budgets,
        })
    }
}

fn validate_wait(wait: Wait, exact: bool) -> Result<RetryInterval, ConfigError> {
    let interval_error = |setting: &'static str, value: String, message: String| {
        ConfigError::new(
            setting,
            value,
            match setting {
                "randomizedWaitFactor" => "between 0 and 1",
                _ => "at least 1 ms",
            },
            message,
        )
    };
    match wait {
        Wait::Duration(d) => {
            let ms = d.as_millis_floor();
            if ms < 0 {
                return Err(ConfigError::new(
                    "waitDuration",
                    format!("{ms}ms"),
                    "at least 0 ms",
                    "waitDuration must be a positive value".to_string(),
                ));
            }
            Ok(RetryInterval::Function {
                function: IntervalFunction::Constant {
                    interval_millis: ms.min(i64::MAX as i128) as u64,
                },
                deferred: None,
            })
        }
        Wait::Factory {
            function,
            initial_millis,
            max_millis,
        } => {
            match max_millis {
                Some(max) => check_interval(max).map_err(|m| {
                    interval_error("exponentialMaxWaitDuration", format!("{max}ms"), m)
                })?,
                None => check_interval(initial_millis).map_err(|m| {
                    interval_error("waitDuration", format!("{initial_millis}ms"), m)
                })?,
            }
            if let IntervalFunction::Randomized {
                randomization_factor: f,
                ..
            }
            | IntervalFunction::ExponentialRandom {
                randomization_factor: f,
                ..
            } = function
            {
                check_randomization_factor(f).map_err(|m| {
                    interval_error("randomizedWaitFactor", crate::java::java_double(f), m)
                })?;
            }
            // Resilience4j checks the initial interval of the capped shapes lazily.
            let deferred = match max_millis {
                Some(_) => check_interval(initial_millis).err(),
                None => None,
            };
            deferred_or_error(function, deferred, exact, initial_millis)
        }
        Wait::Built(RetryInterval::Function { function, deferred }) => {
            let initial = match function {
                IntervalFunction::Exponential { initial_millis, .. }
                | IntervalFunction::ExponentialRandom { initial_millis, .. } => {
                    initial_millis as i64
                }
                _ => 0,
            };
            deferred_or_error(function, deferred, exact, initial)
        }
        Wait::Built(i @ RetryInterval::BiFunction(_)) => Ok(i),
    }
}

fn deferred_or_error(
    function: IntervalFunction,
    deferred: Option<String>,
    exact: bool,
    initial_millis: i64,
) -> Result<RetryInterval, ConfigError> {
    match deferred {
        Some(message) if !exact => Err(ConfigError::new(
            "waitDuration",
            format!("{initial_millis}ms"),
            "at least 1 ms",
            message,
        )),
        deferred => Ok(RetryInterval::Function { function, deferred }),
    }
}

fn millis(d: SignedDuration) -> i64 {
    d.as_millis_floor()
        .clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

fn clamp(ms: i64) -> u64 {
    ms.max(0) as u64
}

/// The wait settings of one `resilience4j.retry` config block, as Spring binds them: each
/// `None` when the key is absent.
///
/// [`RetryConfigBuilder::wait_properties`] selects the interval function exactly as
/// Resilience4j's `CommonRetryConfigurationProperties` does, silent drops included:
/// nothing happens without `waitDuration`; `exponentialMaxWaitDuration` is used only
/// together with the multiplier (and with the factor too when randomized); with both flags,
/// a factor without a multiplier is ignored as well.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RetryWaitProperties {
    /// `waitDuration`.
    pub wait_duration: Option<SignedDuration>,
    /// `enableExponentialBackoff`.
    pub enable_exponential_backoff: Option<bool>,
    /// `exponentialBackoffMultiplier`.
    pub exponential_backoff_multiplier: Option<f64>,
    /// `exponentialMaxWaitDuration`.
    pub exponential_max_wait_duration: Option<SignedDuration>,
    /// `enableRandomizedWait`.
    pub enable_randomized_wait: Option<bool>,
    /// `randomizedWaitFactor`.
    pub randomized_wait_factor: Option<f64>,
}

impl RetryWaitProperties {
    fn apply(&self, b: RetryConfigBuilder) -> RetryConfigBuilder {
        // Spring's setter has already rejected a negative `waitDuration` (with its own
        // message); one that gets here reaches the builder, which rejects it with
        // Resilience4j's.
        let Some(wait) = self.wait_duration else {
            return b;
        };
        let exponential = self.enable_exponential_backoff == Some(true);
        let randomized = self.enable_randomized_wait == Some(true);
        let (multiplier, factor, max) = (
            self.exponential_backoff_multiplier,
            self.randomized_wait_factor,
            self.exponential_max_wait_duration,
        );
        match (exponential, randomized) {
            (true, true) => match (multiplier, factor, max) {
                (Some(m), Some(f), Some(max)) => {
                    b.exponential_random_backoff(wait, m, f, Some(max))
                }
                (Some(m), Some(f), None) => b.exponential_random_backoff(wait, m, f, None),
                (Some(m), None, _) => {
                    b.exponential_random_backoff(wait, m, DEFAULT_RANDOMIZATION_FACTOR, None)
                }
                (None, _, _) => b.exponential_random_backoff(
                    wait,
                    DEFAULT_MULTIPLIER,
                    DEFAULT_RANDOMIZATION_FACTOR,
                    None,
                ),
            },
            (true, false) => match (multiplier, max) {
                (Some(m), Some(max)) => b.exponential_backoff(wait, m, Some(max)),
                (Some(m), None) => b.exponential_backoff(wait, m, None),
                (None, _) => b.exponential_backoff(wait, DEFAULT_MULTIPLIER, None),
            },
            (false, true) => {
                b.randomized_wait(wait, factor.unwrap_or(DEFAULT_RANDOMIZATION_FACTOR))
            }
            (false, false) => b.wait_duration(wait),
        }
    }
}
