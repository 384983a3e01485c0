//! The worst-case time a retried call can take, against a caller's budget.
//!
//! In Spring's aspect order a `@Retry` wraps the `@TimeLimiter`, so every attempt is cut at
//! the time limiter's `timeoutDuration`, and the retry waits between attempts. The worst
//! case of `n` attempts is `n x timeoutDuration` plus the longest waits before attempts 2 to
//! `n`. Waits follow Resilience4j's interval functions (attempt numbers from 1: the wait
//! before the 2nd call is attempt 1):
//!
//! - fixed: `waitDuration`;
//! - exponential: `waitDuration x multiplier^(n-1)`, truncated to whole milliseconds at every
//!   step, capped by `exponentialMaxWaitDuration` when set;
//! - randomized: `current ± randomizedWaitFactor x current`, drawn as
//!   `lo + U x (hi - lo + 1)` with `U` in [0, 1) and truncated, so the longest wait is
//!   `ceil(current x (1 + factor))` (1000 ms and 0.5: up to 1500; 1687.5: up to 1688);
//!   with exponential backoff the cap applies after randomizing, so it is a hard cap.

use std::time::Duration;

/// How the wait between attempts grows (Resilience4j's `IntervalFunction` as Spring builds
/// it from `enableExponentialBackoff` / `enableRandomizedWait`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Backoff {
    /// `waitDuration` every time.
    Fixed,
    /// `ofExponentialBackoff(waitDuration, multiplier[, max])`.
    Exponential {
        /// `exponentialBackoffMultiplier` (> 0).
        multiplier: f64,
        /// `exponentialMaxWaitDuration`, when Spring passes it.
        max_wait: Option<Duration>,
    },
    /// `ofRandomized(waitDuration, factor)`.
    Randomized {
        /// `randomizedWaitFactor`, in [0, 1].
        factor: f64,
    },
    /// `ofExponentialRandomBackoff(waitDuration, multiplier, factor[, max])`.
    ExponentialRandomized {
        /// `exponentialBackoffMultiplier` (> 0).
        multiplier: f64,
        /// `randomizedWaitFactor`, in [0, 1].
        factor: f64,
        /// `exponentialMaxWaitDuration`, a hard cap after randomizing.
        max_wait: Option<Duration>,
    },
}

/// A retry and the time limiter around each of its attempts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPlan {
    /// `maxAttempts`: calls in all, the first included (>= 1).
    pub max_attempts: u32,
    /// `waitDuration`: the first wait.
    pub wait: Duration,
    /// How the wait grows.
    pub backoff: Backoff,
    /// The time limiter's `timeoutDuration`, the longest an attempt can take; `None` when no
    /// time limiter bounds the attempts (the worst case is then unbounded).
    pub attempt_timeout: Option<Duration>,
}

/// Counting attempts that fit in a budget stops here (waits that shrink to nothing would
/// fit any number).
pub const MOST_ATTEMPTS_COUNTED: u32 = 1000;

/// What the plan costs against a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetFit {
    /// Worst-case time of all `maxAttempts` attempts and the waits between them, ms;
    /// `None` when unbounded (no time limiter).
    pub worst_case_ms: Option<u64>,
    /// Of which waiting between attempts, ms.
    pub waits_ms: u64,
    /// The most attempts whose worst case fits in the budget (0 if even one attempt may
    /// not, at most [`MOST_ATTEMPTS_COUNTED`]); `None` when unbounded.
    pub most_attempts_in_budget: Option<u32>,
}

impl RetryPlan {
    fn wait_ms(&self) -> f64 {
        self.wait.as_millis() as f64
    }

    /// `exp(initial, m, n)`: truncated to whole milliseconds at every step, saturating.
    fn exponential(&self, multiplier: f64, attempt: u32) -> f64 {
        let mut v = self.wait_ms();
        for _ in 1..attempt {
            v = (v * multiplier).trunc().min(i64::MAX as f64);
        }
        v
    }

    /// The longest wait before attempt `attempt + 1` (attempt >= 1), ms.
    pub fn longest_wait_ms(&self, attempt: u32) -> u64 {
        let capped = |v: f64, max: Option<Duration>| match max {
            Some(m) => v.min(m.as_millis() as f64),
            None => v,
        };
        let upper = |current: f64, factor: f64| (current + factor * current).ceil().max(1.0);
        let v = match self.backoff {
            Backoff::Fixed => self.wait_ms(),
            Backoff::Exponential {
                multiplier,
                max_wait,
            } => capped(self.exponential(multiplier, attempt), max_wait),
            Backoff::Randomized { factor } => upper(self.wait_ms(), factor),
            Backoff::ExponentialRandomized {
                multiplier,
                factor,
                max_wait,
            } => capped(
                upper(self.exponential(multiplier, attempt), factor),
                max_wait,
            ),
        };
        v.max(0.0) as u64
    }

    /// Worst-case time of `attempts` attempts: each cut at the timeout, with the longest
    /// waits between them, ms; `None` without a time limiter.
    pub fn worst_case_ms(&self, attempts: u32) -> Option<u64> {
        let timeout = self.attempt_timeout?.as_millis() as u64;
        let waits: u64 = (1..attempts).map(|a| self.longest_wait_ms(a)).sum();
        Some(
            timeout
                .saturating_mul(u64::from(attempts))
                .saturating_add(waits),
        )
    }

    /// The plan against `budget`.
    pub fn fit(&self, budget: Duration) -> BudgetFit {
        let budget_ms = budget.as_millis() as u64;
        let most = self.attempt_timeout.map(|_| {
            (1..=MOST_ATTEMPTS_COUNTED)
                .take_while(|&n| self.worst_case_ms(n).is_some_and(|t| t <= budget_ms))
                .last()
                .unwrap_or(0)
        });
        BudgetFit {
            worst_case_ms: self.worst_case_ms(self.max_attempts),
            waits_ms: (1..self.max_attempts)
                .map(|a| self.longest_wait_ms(a))
                .sum(),
            most_attempts_in_budget: most,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn plan(backoff: Backoff, wait: u64) -> RetryPlan {
        RetryPlan {
            max_attempts: 3,
            wait: ms(wait),
            backoff,
            attempt_timeout: Some(ms(1000)),
        }
    }

    fn waits(p: &RetryPlan, n: u32) -> Vec<u64> {
        (1..=n).map(|a| p.longest_wait_ms(a)).collect()
    }

    #[test]
    fn waits_match_resilience4j_interval_functions() {
        // Values from the Resilience4j spec (retry-timelimiter §1.4).
        let exp = |m, max| Backoff::Exponential {
            multiplier: m,
            max_wait: max,
        };
        assert_eq!(
            waits(&plan(exp(1.5, None), 500), 8),
            [500, 750, 1125, 1687, 2530, 3795, 5692, 8538]
        );
        assert_eq!(
            waits(&plan(exp(2.0, Some(ms(1000))), 100), 6),
            [100, 200, 400, 800, 1000, 1000]
        );
        assert_eq!(waits(&plan(exp(1.0, Some(ms(99))), 100), 3), [99, 99, 99]);
        assert_eq!(waits(&plan(exp(1.5, None), 3), 6), [3, 4, 6, 9, 13, 19]);
        assert_eq!(
            waits(&plan(exp(0.5, None), 500), 6),
            [500, 250, 125, 62, 31, 15]
        );
        // ofRandomized(1000, 0.5): up to 1500; factor 1: up to 2000.
        let rnd = |f| Backoff::Randomized { factor: f };
        assert_eq!(waits(&plan(rnd(0.5), 1000), 2), [1500, 1500]);
        assert_eq!(waits(&plan(rnd(1.0), 1000), 1), [2000]);
        assert_eq!(waits(&plan(rnd(0.0), 1000), 1), [1000]);
        // ofExponentialRandomBackoff(1000, 2, 0.5[, 3000]): a1 <= 1500, a2 <= 3000,
        // a3 <= 6000 (3000 with the cap).
        let er = |max| Backoff::ExponentialRandomized {
            multiplier: 2.0,
            factor: 0.5,
            max_wait: max,
        };
        assert_eq!(waits(&plan(er(None), 1000), 3), [1500, 3000, 6000]);
        assert_eq!(
            waits(&plan(er(Some(ms(3000))), 1000), 3),
            [1500, 3000, 3000]
        );
        // ofExponentialRandomBackoff() = (500, 1.5, 0.5): a1 <= 750, a2 <= 1125, a3 <= 1688.
        let default = Backoff::ExponentialRandomized {
            multiplier: 1.5,
            factor: 0.5,
            max_wait: None,
        };
        assert_eq!(waits(&plan(default, 500), 3), [750, 1125, 1688]);
    }

    #[test]
    fn worst_case_and_budget_by_arithmetic() {
        // Resilience4j's defaults: maxAttempts 3, waitDuration 500 ms fixed, timeoutDuration
        // 1 s: 3 x 1000 + 2 x 500 = 4000 ms. In 10 s: n attempts cost 1000n + 500(n-1)
        // = 1500n - 500 <= 10 000, so n = 7 (10 000 ms exactly).
        let p = plan(Backoff::Fixed, 500);
        let f = p.fit(Duration::from_secs(10));
        assert_eq!(f.worst_case_ms, Some(4000));
        assert_eq!(f.waits_ms, 1000);
        assert_eq!(f.most_attempts_in_budget, Some(7));
        // Exponential x2 from 1 s, 2 s timeouts, 5 attempts: 5 x 2000 + (1000 + 2000 + 4000
        // + 8000) = 25 000 ms. In 10 s: 3 attempts cost 6000 + 3000 = 9000; 4 cost 8000 +
        // 7000 = 15 000.
        let p = RetryPlan {
            max_attempts: 5,
            wait: ms(1000),
            backoff: Backoff::Exponential {
                multiplier: 2.0,
                max_wait: None,
            },
            attempt_timeout: Some(ms(2000)),
        };
        let f = p.fit(Duration::from_secs(10));
        assert_eq!(f.worst_case_ms, Some(25_000));
        assert_eq!(f.most_attempts_in_budget, Some(3));
        // A timeout longer than the budget: not even one attempt fits.
        let f = p.fit(Duration::from_millis(1999));
        assert_eq!(f.most_attempts_in_budget, Some(0));
        // No time limiter: unbounded.
        let p = RetryPlan {
            attempt_timeout: None,
            ..p
        };
        let f = p.fit(Duration::from_secs(10));
        assert_eq!(f.worst_case_ms, None);
        assert_eq!(f.most_attempts_in_budget, None);
        assert_eq!(f.waits_ms, 15_000);
    }

    #[test]
    fn counting_stops_when_waits_vanish() {
        let p = RetryPlan {
            max_attempts: 3,
            wait: ms(0),
            backoff: Backoff::Fixed,
            attempt_timeout: Some(ms(0)),
        };
        assert_eq!(
            p.fit(Duration::from_secs(1)).most_attempts_in_budget,
            Some(MOST_ATTEMPTS_COUNTED)
        );
    }
}
