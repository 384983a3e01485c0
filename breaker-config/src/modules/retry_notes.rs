//! What a porter needs to hear about a retry block: backoff settings that shape nothing
//! because the block sets no `waitDuration` (Resilience4j's `configureRetryIntervalFunction`
//! runs only for a block that sets one), and the wait in force, in words.

use breaker_core::IntervalFunction;

use crate::bind::Block;
use crate::error::Warning;
use crate::model::ValueSource;

use super::retry_model::{ResolvedRetry, RetryInterval, RetryKey, RetryKey as K};

/// The backoff settings of a block without `waitDuration` shape nothing for that entry:
/// Resilience4j's `configureRetryIntervalFunction` rebuilds the wait only in a block that
/// sets `waitDuration`, and an instance is no one's base, so its flags are lost.
pub(crate) fn flags_without_wait(
    block: &Block<RetryKey>,
    r: &ResolvedRetry,
    warnings: &mut Vec<Warning>,
) {
    if block.get(K::WaitDuration).is_some() || block.get(K::IntervalBiFunction).is_some() {
        return;
    }
    let in_effect = describe_interval(&r.interval.value);
    let from = match &r.interval.source {
        ValueSource::Config(n) => format!("from configs.{n}"),
        ValueSource::Default => "Resilience4j's default".to_string(),
        other => format!("from {other}"),
    };
    for (id, setting) in [
        (K::EnableExponentialBackoff, "enableExponentialBackoff"),
        (
            K::ExponentialBackoffMultiplier,
            "exponentialBackoffMultiplier",
        ),
        (K::ExponentialMaxWaitDuration, "exponentialMaxWaitDuration"),
        (K::EnableRandomizedWait, "enableRandomizedWait"),
        (K::RandomizedWaitFactor, "randomizedWaitFactor"),
    ] {
        if let Some(b) = block.get(id) {
            warnings.push(Warning::new(
                Some(b.origin.clone()),
                format!("{}.{setting}", block.path),
                format!(
                    "{} has no effect: this block sets no waitDuration, and Resilience4j builds the wait only in a block that sets waitDuration; the wait in effect is {in_effect} ({from}); set waitDuration here to apply it",
                    b.text
                ),
            ));
        }
    }
}

/// The wait in force, in words: `constant 2000 ms`, `exponential from 100 ms x 2 (max 1000 ms)`.
pub(crate) fn describe_interval(i: &RetryInterval) -> String {
    match i {
        RetryInterval::Function(IntervalFunction::Constant { interval_millis }) => {
            format!("constant {interval_millis} ms")
        }
        RetryInterval::Function(IntervalFunction::Exponential {
            initial_millis,
            multiplier,
            max_millis,
        }) => format!(
            "exponential from {initial_millis} ms x {multiplier}{}",
            max_millis.map_or(String::new(), |m| format!(" (max {m} ms)"))
        ),
        RetryInterval::Function(IntervalFunction::Randomized {
            interval_millis,
            randomization_factor,
        }) => format!("randomized {interval_millis} ms +/- {randomization_factor}"),
        RetryInterval::Function(IntervalFunction::ExponentialRandom {
            initial_millis,
            multiplier,
            randomization_factor,
            max_millis,
        }) => format!(
            "exponential-random from {initial_millis} ms x {multiplier} +/- {randomization_factor}{}",
            max_millis.map_or(String::new(), |m| format!(" (max {m} ms)"))
        ),
        RetryInterval::Custom { class } => format!("intervalBiFunction {class}"),
        #[allow(unreachable_patterns)]
        _ => "a custom interval".to_string(),
    }
}
