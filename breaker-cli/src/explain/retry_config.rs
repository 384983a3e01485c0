//! Where `explain` gets a [`RetryPlan`]: the retry and time limiter that
//! `#[retry(name = ..)]` and `#[time_limiter(name = ..)]` with the breaker's name would get
//! from the files (the listed instance, else the config of that name, else
//! `configs.default`, as Spring's aspects look them up), through breaker-core's configs
//! ([`plan_from_core`]).

use breaker_config::modules::RetryInterval;
use breaker_config::Loaded;
use breaker_core::retry::RetryConfig;
use breaker_core::timelimiter::TimeLimiterConfig;
use breaker_core::ErrorCatalog;
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

/// The retry (and time limiter) that the instance `name` gets from the files: `Ok(None)` when
/// the files have no `resilience4j.retry` section; `Err` with the reason when that retry is
/// invalid or its waits are Java code (`intervalBiFunction`) that cannot be bounded here.
pub fn retry_plan(loaded: &Loaded, name: &str) -> Result<Option<RetryPlan>, String> {
    if !has_section(loaded, "retry") {
        return Ok(None);
    }
    let modules = &loaded.modules;
    let Some(retry) = modules.retry.config_for(name) else {
        return Err(format!("the retry {name} is invalid (see breaker check)"));
    };
    if let RetryInterval::Custom { class } = &retry.interval.value {
        return Err(format!(
            "its waits come from the Java intervalBiFunction {class}, which cannot be bounded here"
        ));
    }
    let retry = retry
        .to_core_config(&ErrorCatalog::new())
        .map_err(|e| e.to_string())?;
    let time_limiter = match has_section(loaded, "timelimiter") {
        false => None,
        true => match modules.time_limiter.config_for(name) {
            Some(t) => Some(t.to_core_config().map_err(|e| e.to_string())?),
            None => {
                return Err(format!(
                    "the time limiter {name} is invalid (see breaker check)"
                ))
            }
        },
    };
    Ok(plan_from_core(&retry, time_limiter.as_ref()))
}

/// The plan of a breaker-core retry whose attempts `time_limiter` cuts (Spring's aspect
/// order puts the retry outside the time limiter). `None` for a custom interval
/// bi-function, whose waits cannot be bounded.
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
