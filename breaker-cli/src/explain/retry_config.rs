//! Where `explain` gets a [`RetryPlan`]: from breaker-core's retry and time-limiter configs
//! ([`plan_from_core`]), which in turn come from the files.
//!
//! WIRING PENDING: breaker-config does not load `resilience4j.retry` and
//! `resilience4j.timelimiter` from files yet (breaker-core has `RetryConfig` and
//! `TimeLimiterConfig`; the loader is being added on another branch). Until it does,
//! [`retry_plan`] returns `None` and `explain` only says whether the files hold a retry
//! section. To wire it: in [`retry_plan`], take the resolved `RetryConfig` of the retry
//! instance named like the circuit breaker and the `TimeLimiterConfig` of the same name,
//! and return `plan_from_core(&retry, time_limiter.as_ref())`.

use breaker_config::Loaded;
use breaker_core::retry::RetryConfig;
use breaker_core::timelimiter::TimeLimiterConfig;
use breaker_core::IntervalFunction;

use super::retry_budget::{Backoff, RetryPlan};
use std::time::Duration;

/// Whether the active documents hold any `resilience4j.<section>` key (`retry`,
/// `timelimiter`).
pub fn has_section(loaded: &Loaded, section: &str) -> bool {
    loaded.documents.iter().any(|d| {
        d.properties
            .iter()
            .any(|p| p.name.len() > 1 && p.name[0].is("resilience4j") && p.name[1].is(section))
    })
}

/// The retry (and time limiter) of the instance `name`, when the files configure one and
/// breaker-config can load it. WIRING PENDING: always `None` for now (see the module docs).
pub fn retry_plan(_loaded: &Loaded, _name: &str) -> Option<RetryPlan> {
    None
}

/// The plan of a breaker-core retry whose attempts `time_limiter` cuts (Spring's aspect
/// order puts the retry outside the time limiter). `None` for a custom interval
/// bi-function, whose waits cannot be bounded.
// WIRING PENDING: called from `retry_plan` once breaker-config loads retries.
#[allow(dead_code)]
pub fn plan_from_core(
    retry: &RetryConfig,
    time_limiter: Option<&TimeLimiterConfig>,
) -> Option<RetryPlan> {
    let ms = Duration::from_millis;
    let (wait, backoff) = match *retry.interval_function()? {
        IntervalFunction::Constant { interval_millis } => (interval_millis, Backoff::Fixed),
        IntervalFunction::Exponential {
            initial_millis,
            multiplier,
            max_millis,
        } => (
            initial_millis,
            Backoff::Exponential {
                multiplier,
                max_wait: max_millis.map(ms),
            },
        ),
        IntervalFunction::Randomized {
            interval_millis,
            randomization_factor,
        } => (
            interval_millis,
            Backoff::Randomized {
                factor: randomization_factor,
            },
        ),
        IntervalFunction::ExponentialRandom {
            initial_millis,
            multiplier,
            randomization_factor,
            max_millis,
        } => (
            initial_millis,
            Backoff::ExponentialRandomized {
                multiplier,
                factor: randomization_factor,
                max_wait: max_millis.map(ms),
            },
        ),
    };
    Some(RetryPlan {
        max_attempts: retry.max_attempts(),
        wait: ms(wait),
        backoff,
        attempt_timeout: time_limiter.map(TimeLimiterConfig::timeout_duration),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resilience4j_defaults() {
        // maxAttempts 3, waitDuration 500 ms, timeoutDuration 1 s: 3 x 1000 + 2 x 500.
        let plan =
            plan_from_core(&RetryConfig::default(), Some(&TimeLimiterConfig::default())).unwrap();
        assert_eq!(plan.max_attempts, 3);
        assert_eq!(plan.backoff, Backoff::Fixed);
        assert_eq!(plan.worst_case_ms(3), Some(4000));
        assert_eq!(
            plan_from_core(&RetryConfig::default(), None)
                .unwrap()
                .worst_case_ms(3),
            None
        );
    }

    #[test]
    fn exponential_retry_against_a_budget() {
        // 4 attempts of at most 2 s, waits 500, 1000, 2000 ms: 8000 + 3500 = 11 500 ms.
        // In 10 s: 3 attempts (6000 + 1500 = 7500 ms), not 4.
        let retry = RetryConfig::builder()
            .max_attempts(4)
            .exponential_backoff(Duration::from_millis(500), 2.0, None)
            .build()
            .unwrap();
        let tl = TimeLimiterConfig::builder()
            .timeout_duration(Duration::from_secs(2))
            .build()
            .unwrap();
        let plan = plan_from_core(&retry, Some(&tl)).unwrap();
        let fit = plan.fit(Duration::from_secs(10));
        assert_eq!(fit.worst_case_ms, Some(11_500));
        assert_eq!(fit.most_attempts_in_budget, Some(3));
        // Randomized exponential with a cap: waits up to 750, 1500, then capped at 2000.
        let retry = RetryConfig::builder()
            .max_attempts(4)
            .exponential_random_backoff(
                Duration::from_millis(500),
                2.0,
                0.5,
                Some(Duration::from_secs(2).into()),
            )
            .build()
            .unwrap();
        let plan = plan_from_core(&retry, Some(&tl)).unwrap();
        assert_eq!(plan.worst_case_ms(4), Some(8000 + 750 + 1500 + 2000));
    }
}
