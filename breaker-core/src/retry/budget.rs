//! A retry's budgets (breaker's own settings, beyond Resilience4j; all off by default):
//! the time per attempt a deadline is judged by, what it does inside another retry, and a
//! retry budget in the manner of gRPC's retry throttling and Finagle's `RetryBudget`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

pub use crate::deadline::NestedRetries;

/// A retry budget: retries are allowed only while, over the last `window`, they stay under
/// `ratio` x the calls made plus `min_retries_per_second` x the window's seconds
/// (`breaker.retry.instances.<name>.budget.{ratio,min-retries-per-second,window}`).
///
/// Finagle's `RetryBudget(ttl, minRetriesPerSec, percentCanRetry)`; gRPC's retry throttling
/// has the same aim: in an outage where every call fails, a dependency sees at most
/// `(1 + ratio)` x the incoming calls plus the floor, instead of `maxAttempts` x.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryBudgetConfig {
    /// Retries allowed per call made, in `0.0..=1.0` (default 0.2, Finagle's).
    pub ratio: f64,
    /// Retries always allowed per second of the window, whatever the calls (default 10,
    /// Finagle's), so that a quiet service can still retry.
    pub min_retries_per_second: u32,
    /// How far back calls and retries are counted, 1 s to 1 h (default 10 s, Finagle's).
    /// Counted in ten buckets of a tenth of it each.
    pub window: Duration,
}

impl Default for RetryBudgetConfig {
    fn default() -> Self {
        RetryBudgetConfig {
            ratio: 0.2,
            min_retries_per_second: 10,
            window: Duration::from_secs(10),
        }
    }
}

impl RetryBudgetConfig {
    /// Checks the ranges.
    ///
    /// # Errors
    /// A message naming the setting and its allowed values.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.ratio) || self.ratio.is_nan() {
            return Err(format!(
                "budget.ratio must be between 0.0 and 1.0, was {}",
                self.ratio
            ));
        }
        if self.window < Duration::from_secs(1) || self.window > Duration::from_secs(3600) {
            return Err(format!(
                "budget.window must be between 1s and 1h, was {:?}",
                self.window
            ));
        }
        Ok(())
    }
}

/// A retry's budgets, set with
/// [`RetryConfigBuilder::budgets`](crate::retry::RetryConfigBuilder::budgets). The default
/// (nothing set) is Resilience4j's behaviour.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RetryBudgets {
    /// What one attempt may take (`breaker.retry.instances.<name>.attempt-timeout`, usually
    /// the time limiter's `timeoutDuration` inside the retry): inside a deadline, a retry
    /// starts the next wait and attempt only if both fit in the time left. `None`: judged by
    /// the wait alone (the attempt must start before the deadline).
    pub attempt_timeout: Option<Duration>,
    /// Inside another retry's attempt (`nested-retries`); `None` is
    /// [`NestedRetries::All`]. Nesting is detected inside a deadline scope, and everywhere
    /// once any retry config of the process sets `Some(_)` (every retry then marks its
    /// attempts: one more atomic load per call); the first time a pair is seen, a warning
    /// names both retries and the worst-case number of calls.
    pub nested_retries: Option<NestedRetries>,
    /// A retry budget (`budget.*`), `None` for none.
    pub budget: Option<RetryBudgetConfig>,
}

impl RetryBudgets {
    /// Whether any setting is made.
    pub fn is_set(&self) -> bool {
        self.attempt_timeout.is_some() || self.nested_retries.is_some() || self.budget.is_some()
    }
}

/// A retry's counters of its budgets, read with
/// [`Retry::budget_metrics`](crate::retry::Retry::budget_metrics). Exported beside
/// Resilience4j's as `resilience4j_retry_budget_calls{kind="deadline_exceeded" |
/// "budget_exhausted" | "nested_suppressed"}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RetryBudgetMetrics {
    /// Calls that stopped retrying because the next wait and attempt did not fit before the
    /// deadline (each also counts as failed with retry).
    pub number_of_deadline_exceeded_calls: u64,
    /// Retries skipped because the retry budget was spent (each ends its call).
    pub number_of_budget_exhausted_calls: u64,
    /// Calls that did not retry because they ran inside another retry with
    /// `nested-retries: outermost`.
    pub number_of_suppressed_nested_retries: u64,
}

/// The counters behind [`RetryBudgetMetrics`].
#[derive(Debug, Default)]
pub(crate) struct BudgetCounters {
    pub(crate) deadline_exceeded: AtomicU64,
    pub(crate) budget_exhausted: AtomicU64,
    pub(crate) suppressed: AtomicU64,
}

impl BudgetCounters {
    pub(crate) fn snapshot(&self) -> RetryBudgetMetrics {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        RetryBudgetMetrics {
            number_of_deadline_exceeded_calls: r(&self.deadline_exceeded),
            number_of_budget_exhausted_calls: r(&self.budget_exhausted),
            number_of_suppressed_nested_retries: r(&self.suppressed),
        }
    }
}

const BUCKETS: usize = 10;

/// Calls and retries of the last window, in ten time buckets.
#[derive(Debug, Default)]
struct Window {
    /// The bucket index (time / bucket length) each slot holds.
    epoch: [u64; BUCKETS],
    calls: [u64; BUCKETS],
    retries: [u64; BUCKETS],
}

impl Window {
    fn slot(&mut self, now_nanos: u64, bucket_nanos: u64) -> usize {
        let epoch = now_nanos / bucket_nanos;
        let i = (epoch % BUCKETS as u64) as usize;
        if self.epoch[i] != epoch {
            self.epoch[i] = epoch;
            self.calls[i] = 0;
            self.retries[i] = 0;
        }
        i
    }

    fn sums(&self, now_nanos: u64, bucket_nanos: u64) -> (u64, u64) {
        let epoch = now_nanos / bucket_nanos;
        let live = |i: usize| epoch.saturating_sub(self.epoch[i]) < BUCKETS as u64;
        (0..BUCKETS)
            .filter(|&i| live(i))
            .fold((0, 0), |(c, r), i| (c + self.calls[i], r + self.retries[i]))
    }
}

/// A retry instance's budget state (kept across config changes).
#[derive(Debug, Default)]
pub(crate) struct BudgetWindow {
    window: Mutex<Window>,
}

impl BudgetWindow {
    fn bucket_nanos(config: &RetryBudgetConfig) -> u64 {
        (config.window.as_nanos() as u64 / BUCKETS as u64).max(1)
    }

    /// Counts a call.
    pub(crate) fn deposit(&self, now_nanos: u64, config: &RetryBudgetConfig) {
        let mut w = self.window.lock().unwrap_or_else(|p| p.into_inner());
        let i = w.slot(now_nanos, Self::bucket_nanos(config));
        w.calls[i] += 1;
    }

    /// Takes one retry from the budget if it has one: `false` when the retries of the window
    /// have reached `ratio x calls + floor`.
    pub(crate) fn try_withdraw(&self, now_nanos: u64, config: &RetryBudgetConfig) -> bool {
        let bucket = Self::bucket_nanos(config);
        let mut w = self.window.lock().unwrap_or_else(|p| p.into_inner());
        let i = w.slot(now_nanos, bucket);
        let (calls, retries) = w.sums(now_nanos, bucket);
        let floor = f64::from(config.min_retries_per_second) * config.window.as_secs_f64();
        let allowed = config.ratio * calls as f64 + floor;
        if (retries + 1) as f64 <= allowed {
            w.retries[i] += 1;
            true
        } else {
            false
        }
    }
}
