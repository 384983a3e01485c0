//! One call's attempt bookkeeping (Resilience4j's `Retry.Context`): after each attempt,
//! decide whether to wait and try again or to finish, count the outcome and publish the
//! events, in Resilience4j's order.
//!
//! Two modes: the default one fixes the defects listed in the module docs; the
//! exact-Resilience4j one reproduces Resilience4j's synchronous loop (`decorateCallable`),
//! where whatever the success path throws (the `MaxRetriesExceededException`, a failed
//! sleep, a deferred interval check) is caught by the same loop and handled like an error
//! thrown by the attempt.

use std::any::Any;
use std::fmt;
use std::time::Duration;

use super::config::{AttemptOutcome, RetryConfig};
use super::error::{results_exhausted_marker, MaxRetriesExceeded, RetryError, WaitIntervalError};
use super::events::{RetryEvent, RetryEventType};
use super::instance::RetryShared;
use super::metrics::Counters;
use crate::deadline::{Deadline, RetryCall};

/// What the call does after an attempt.
pub(crate) enum Next<T, E> {
    /// Wait this many ms (>= 0), then make another attempt.
    Wait(u64),
    /// The call is over.
    Done(Result<T, RetryError<E>>),
}

/// The state of one call: Resilience4j's `numOfAttempts` and `lastException`.
pub(crate) struct Context<'a, E> {
    shared: &'a RetryShared,
    config: &'a RetryConfig,
    /// Failed attempts so far: retried errors and retried results.
    attempts: u32,
    /// The last retried error.
    last_error: Option<RetryError<E>>,
    /// What the exception settings and the interval function see of an error.
    cause: fn(&E) -> &dyn Any,
    /// The deadline in scope when the call started (breaker's budgets).
    deadline: Option<Deadline>,
    /// Inside another retry with `nested-retries: outermost`: no retries.
    suppress: bool,
}

/// What an event reports as its last throwable.
enum Last<'e, E> {
    None,
    Error(&'e RetryError<E>),
    Marker,
}

impl<'a, E: Any + fmt::Display> Context<'a, E> {
    pub(crate) fn new(
        shared: &'a RetryShared,
        config: &'a RetryConfig,
        cause: fn(&E) -> &dyn Any,
        call: Option<&RetryCall>,
    ) -> Self {
        Context {
            shared,
            config,
            attempts: 0,
            last_error: None,
            cause,
            deadline: call.and_then(|c| c.frame.deadline.clone()),
            suppress: call.is_some_and(|c| c.suppress),
        }
    }

    /// Whether `attempts` failed attempts end the call: `maxAttempts` reached, or retries
    /// suppressed inside an outer retry (counted).
    fn out_of_attempts(&self, attempts: u32) -> bool {
        if attempts >= self.config.max_attempts {
            return true;
        }
        if self.suppress {
            Counters::bump(&self.shared.budget_counters.suppressed);
            return true;
        }
        false
    }

    /// breaker's budgets, before a retry that waits `wait_ms`: the event kind that stops
    /// the call instead (counted, and counted as failed with retry), or `None` to retry.
    fn stopped_by_budget(&self, wait_ms: u64) -> Option<RetryEventType> {
        let counters = &self.shared.budget_counters;
        if let Some(deadline) = &self.deadline {
            let left = deadline.remaining();
            let wait = Duration::from_millis(wait_ms);
            let attempt = self.config.budgets.attempt_timeout.unwrap_or_default();
            if wait >= left || wait + attempt > left {
                Counters::bump(&counters.deadline_exceeded);
                Counters::bump(&self.shared.counters.failed_with_retry);
                return Some(RetryEventType::DeadlineExceeded);
            }
        }
        if let Some(budget) = &self.config.budgets.budget {
            if !self.config.exact_resilience4j
                && !self
                    .shared
                    .budget
                    .try_withdraw(self.config.clock.now_nanos(), budget)
            {
                Counters::bump(&counters.budget_exhausted);
                Counters::bump(&self.shared.counters.failed_with_retry);
                return Some(RetryEventType::BudgetExhausted);
            }
        }
        None
    }

    /// The error as the exception settings and the interval function see it.
    fn seen<'e>(&self, error: &'e RetryError<E>) -> &'e dyn Any {
        match error {
            RetryError::Inner(e) => (self.cause)(e),
            other => other.as_any(),
        }
    }

    /// Handles the outcome of the attempt that just finished.
    /// `value` gives what the result predicate sees of an `Ok` value.
    pub(crate) fn after<T>(
        &mut self,
        outcome: Result<T, E>,
        value_cause: fn(&T) -> &dyn Any,
    ) -> Next<T, E> {
        let thrown = match outcome {
            Ok(value) if self.config.exact_resilience4j => {
                match self.on_result_exact(value, value_cause) {
                    Ok(next) => return next,
                    // Thrown inside the loop's `try`: handled as the attempt's error.
                    Err(e) => e,
                }
            }
            Ok(value) => return self.on_result(value, value_cause),
            Err(e) => RetryError::Inner(e),
        };
        self.on_error(thrown)
    }

    /// An attempt failed (or, in exact mode, the success path threw).
    fn on_error<T>(&mut self, error: RetryError<E>) -> Next<T, E> {
        let counters = &self.shared.counters;
        Counters::bump(&counters.total);
        if !self.config.is_retryable(self.seen(&error)) {
            Counters::bump(&counters.failed_without_retry);
            self.publish(RetryEventType::IgnoredError, 0, Last::Error(&error), None);
            return Next::Done(Err(error));
        }
        self.attempts += 1;
        let attempts = self.attempts;
        if self.out_of_attempts(attempts) {
            Counters::bump(&counters.failed_with_retry);
            self.publish(RetryEventType::Error, attempts, Last::Error(&error), None);
            return Next::Done(Err(error));
        }
        let wait = match self
            .config
            .interval_millis(attempts, AttemptOutcome::Error(self.seen(&error)))
        {
            Ok(w) => w,
            // Resilience4j's deferred check escapes to the caller, with no event.
            Err(message) => {
                return Next::Done(Err(RetryError::WaitInterval(
                    WaitIntervalError::illegal_interval(message),
                )))
            }
        };
        if wait < 0 {
            // A negative interval stops retrying. Resilience4j publishes ERROR and rethrows
            // without counting the call; outside exact mode the call counts as failed.
            if !self.config.exact_resilience4j {
                Counters::bump(&counters.failed_with_retry);
            }
            self.publish(RetryEventType::Error, attempts, Last::Error(&error), None);
            return Next::Done(Err(error));
        }
        if let Some(stop) = self.stopped_by_budget(wait as u64) {
            self.publish(stop, attempts, Last::Error(&error), None);
            return Next::Done(Err(error));
        }
        self.publish(
            RetryEventType::Retry,
            attempts,
            Last::Error(&error),
            Some(wait),
        );
        self.last_error = Some(error);
        Next::Wait(wait as u64)
    }

    /// An attempt returned a value (default mode).
    fn on_result<T>(&mut self, value: T, cause: fn(&T) -> &dyn Any) -> Next<T, E> {
        let counters = &self.shared.counters;
        if !self.config.is_retry_result(cause(&value)) {
            self.count_attempt();
            return Next::Done(self.complete(value));
        }
        Counters::bump(&counters.total);
        self.attempts += 1;
        let attempts = self.attempts;
        if self.out_of_attempts(attempts) {
            return Next::Done(self.exhausted(value));
        }
        self.config.consume_result(attempts, cause(&value));
        let wait = self
            .config
            .interval_millis(attempts, AttemptOutcome::Result(cause(&value)))
            .unwrap_or(-1);
        if wait < 0 {
            // A negative interval stops retrying: the results count as exhausted.
            return Next::Done(self.exhausted(value));
        }
        if let Some(stop) = self.stopped_by_budget(wait as u64) {
            // As when the results run out, with the budget's own event.
            self.publish(stop, attempts, Last::Marker, None);
            return Next::Done(Ok(value));
        }
        self.publish(RetryEventType::Retry, attempts, Last::None, Some(wait));
        Next::Wait(wait as u64)
    }

    /// An attempt returned a value (exact mode): `Err` is what Resilience4j's success path
    /// throws into its own loop.
    fn on_result_exact<T>(
        &mut self,
        value: T,
        cause: fn(&T) -> &dyn Any,
    ) -> Result<Next<T, E>, RetryError<E>> {
        if !self.config.is_retry_result(cause(&value)) {
            return self.complete_exact(value);
        }
        let counters = &self.shared.counters;
        Counters::bump(&counters.total);
        self.attempts += 1;
        let attempts = self.attempts;
        if attempts >= self.config.max_attempts {
            return self.complete_exact(value);
        }
        self.config.consume_result(attempts, cause(&value));
        let wait = self
            .config
            .interval_millis(attempts, AttemptOutcome::Result(cause(&value)))
            .map_err(|m| RetryError::WaitInterval(WaitIntervalError::illegal_interval(m)))?;
        if wait < 0 {
            // The sleep rejects the negative value; with no earlier runtime exception on
            // this path, Resilience4j throws IllegalStateException into its loop.
            self.publish(RetryEventType::Error, attempts, Last::None, None);
            return Err(RetryError::WaitInterval(WaitIntervalError::wait_failed()));
        }
        self.publish(RetryEventType::Retry, attempts, Last::None, Some(wait));
        Ok(Next::Wait(wait as u64))
    }

    /// Resilience4j's `onComplete` (exact mode): counts the attempt again, and throws the
    /// `MaxRetriesExceededException` into the loop.
    fn complete_exact<T>(&mut self, value: T) -> Result<Next<T, E>, RetryError<E>> {
        self.count_attempt();
        if self.attempts >= self.config.max_attempts {
            match self.exhausted(value) {
                Err(e) => Err(e),
                ok => Ok(Next::Done(ok)),
            }
        } else {
            Ok(Next::Done(self.complete(value)))
        }
    }

    /// Counts the attempt that ends the call with a value, unless it is the call's only
    /// attempt: [`complete`](Self::complete) then counts it with the success without retry
    /// (see `Counters::total`).
    fn count_attempt(&self) {
        if self.attempts > 0 {
            Counters::bump(&self.shared.counters.total);
        }
    }

    /// A value the result predicate accepts, before the attempts ran out.
    fn complete<T>(&mut self, value: T) -> Result<T, RetryError<E>> {
        let counters = &self.shared.counters;
        if self.attempts == 0 {
            counters.successful_without_retry.add_one();
        } else {
            Counters::bump(&counters.successful_with_retry);
            let last = match &self.last_error {
                Some(e) => Last::Error(e),
                None => Last::None,
            };
            self.publish(RetryEventType::Success, self.attempts, last, None);
        }
        Ok(value)
    }

    /// The results ran out: the last value, or `MaxRetriesExceeded`.
    fn exhausted<T>(&mut self, value: T) -> Result<T, RetryError<E>> {
        Counters::bump(&self.shared.counters.failed_with_retry);
        let fail = self.config.fail_after_max_attempts;
        let last = match &self.last_error {
            Some(e) if !fail => Last::Error(e),
            _ => Last::Marker,
        };
        self.publish(RetryEventType::Error, self.attempts, last, None);
        if fail {
            Err(RetryError::MaxRetriesExceeded(MaxRetriesExceeded {
                name: self.shared.name.clone(),
                max_attempts: self.config.max_attempts,
            }))
        } else {
            Ok(value)
        }
    }

    fn publish(
        &self,
        event_type: RetryEventType,
        attempts: u32,
        last: Last<'_, E>,
        wait: Option<i64>,
    ) {
        let events = &self.shared.events;
        if !events.any() {
            return;
        }
        let event = RetryEvent {
            retry_name: self.shared.name.clone(),
            event_type,
            number_of_retry_attempts: attempts,
            last_throwable: match last {
                Last::None => None,
                Last::Error(e) => Some(e.throwable()),
                Last::Marker => Some(results_exhausted_marker()),
            },
            wait_interval: wait.map(|w| Duration::from_millis(w as u64)),
            creation_time_nanos: self.config.clock.now_nanos(),
        };
        if self.config.exact_resilience4j {
            // Resilience4j does not catch a consumer's exception: it reaches the caller.
            events.publish_unisolated(&event);
        } else {
            events.publish(&event);
        }
    }
}
