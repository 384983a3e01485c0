//! The OPEN-state wait: Resilience4j's `IntervalFunction` (constant, exponential, randomized).

use std::time::Duration;

use crate::java::java_double;

/// How long an OPEN breaker waits before it admits trial calls, as a function of the attempt
/// number (Resilience4j's `waitIntervalFunctionInOpenState`).
///
/// The attempt is 1 for the first OPEN after CLOSED and grows by one on every
/// HALF_OPEN -> OPEN (and OPEN -> OPEN); it goes back to 0 when the breaker closes.
/// All intervals are whole milliseconds, as in Resilience4j.
#[derive(Debug, Clone, PartialEq)]
pub enum IntervalFunction {
    /// `IntervalFunction.of(ms)`: always the same wait.
    Constant {
        /// Wait in ms, at least 1.
        interval_millis: u64,
    },
    /// `IntervalFunction.ofExponentialBackoff(initial, multiplier[, max])`: attempt 1 waits
    /// `initial`, every later attempt multiplies the previous wait by `multiplier` and
    /// truncates to whole ms; never more than `max_millis` when given.
    Exponential {
        /// First wait in ms, at least 1.
        initial_millis: u64,
        /// Growth factor per attempt, at least 1.0 (Resilience4j's default is 1.5).
        multiplier: f64,
        /// Upper bound in ms, at least 1.
        max_millis: Option<u64>,
    },
    /// `IntervalFunction.ofRandomized(ms, factor)`: a uniformly random wait in
    /// `[ms - factor*ms, ms + factor*ms]`, at least 1 ms.
    Randomized {
        /// Centre of the wait in ms, at least 1.
        interval_millis: u64,
        /// Randomization factor in `[0, 1]` (Resilience4j's default is 0.5).
        randomization_factor: f64,
    },
    /// `IntervalFunction.ofExponentialRandomBackoff(initial, multiplier, factor[, max])`:
    /// the exponential wait of the attempt, randomized, then capped at `max_millis`.
    ExponentialRandom {
        /// First wait in ms, at least 1.
        initial_millis: u64,
        /// Growth factor per attempt, at least 1.0.
        multiplier: f64,
        /// Randomization factor in `[0, 1]`.
        randomization_factor: f64,
        /// Upper bound in ms, at least 1.
        max_millis: Option<u64>,
    },
}

/// Resilience4j's `IntervalFunction.DEFAULT_MULTIPLIER`.
pub const DEFAULT_MULTIPLIER: f64 = 1.5;
/// Resilience4j's `IntervalFunction.DEFAULT_RANDOMIZATION_FACTOR`.
pub const DEFAULT_RANDOMIZATION_FACTOR: f64 = 0.5;

/// A source of uniformly distributed numbers in `[0, 1)`, like Java's `Math.random()`: the
/// randomized interval functions draw one number per interval.
///
/// The default, [`ThreadRandom`], uses a fast per-thread generator. Tests and simulations
/// inject their own (any `Fn() -> f64 + Send + Sync` closure is a source) so that every
/// randomized wait is known in advance.
pub trait RandomSource: Send + Sync {
    /// The next number, in `[0, 1)`.
    fn next_f64(&self) -> f64;
}

impl<F: Fn() -> f64 + Send + Sync> RandomSource for F {
    fn next_f64(&self) -> f64 {
        self()
    }
}

/// The default [`RandomSource`]: a fast per-thread generator (`fastrand`), not
/// cryptographically secure, as `Math.random()` is not.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadRandom;

impl RandomSource for ThreadRandom {
    fn next_f64(&self) -> f64 {
        fastrand::f64()
    }
}

impl IntervalFunction {
    /// A constant wait (`IntervalFunction.of(duration)`), truncated to whole ms.
    pub fn constant(wait: Duration) -> Self {
        IntervalFunction::Constant {
            interval_millis: wait.as_millis() as u64,
        }
    }

    /// The wait for `attempt` (1-based; 0 is treated as 1), in milliseconds, never negative,
    /// drawing randomized waits from [`ThreadRandom`].
    pub fn wait_millis(&self, attempt: u32) -> u64 {
        self.millis(attempt, &ThreadRandom).max(0) as u64
    }

    /// Resilience4j's value for `attempt` (1-based; 0 is treated as 1), in milliseconds, with
    /// randomized waits drawn from `random`.
    ///
    /// Exactly as Resilience4j computes it: exponential waits are truncated to whole ms at
    /// every step (`x(k+1) = (long)(x(k) * multiplier)`, saturating at `i64::MAX`), a
    /// randomized wait is `(long) max(1.0, min + r * (max - min + 1))` with
    /// `min/max = current -/+ factor * current`, and a cap applies after randomizing. A
    /// negative multiplier gives negative values, which Retry reads as "stop retrying".
    pub fn millis(&self, attempt: u32, random: &dyn RandomSource) -> i64 {
        let attempt = attempt.max(1);
        match *self {
            IntervalFunction::Constant { interval_millis } => to_i64(interval_millis),
            IntervalFunction::Exponential {
                initial_millis,
                multiplier,
                max_millis,
            } => cap(exponential(initial_millis, multiplier, attempt), max_millis),
            IntervalFunction::Randomized {
                interval_millis,
                randomization_factor,
            } => randomize(to_i64(interval_millis), randomization_factor, random),
            IntervalFunction::ExponentialRandom {
                initial_millis,
                multiplier,
                randomization_factor,
                max_millis,
            } => {
                let exp = exponential(initial_millis, multiplier, attempt);
                cap(randomize(exp, randomization_factor, random), max_millis)
            }
        }
    }

    /// The checks Resilience4j's factory for this shape makes when it is called, in its
    /// order, as `(setting, message)`: intervals >= 1 ms and a randomization factor in
    /// `[0, 1]`. The initial interval of the shapes with a cap is checked only when the
    /// first interval is computed ([`deferred_check`](Self::deferred_check)). The multiplier
    /// is not checked.
    pub(crate) fn creation_check(&self) -> Result<(), (&'static str, String)> {
        let factor = match *self {
            IntervalFunction::Constant { interval_millis } => {
                return check_interval(to_i64(interval_millis)).map_err(wait)
            }
            IntervalFunction::Exponential {
                initial_millis,
                max_millis,
                ..
            } => {
                return match max_millis {
                    Some(max) => check_interval(to_i64(max)).map_err(max_wait),
                    None => check_interval(to_i64(initial_millis)).map_err(wait),
                }
            }
            IntervalFunction::Randomized {
                interval_millis,
                randomization_factor,
            } => {
                check_interval(to_i64(interval_millis)).map_err(wait)?;
                randomization_factor
            }
            IntervalFunction::ExponentialRandom {
                initial_millis,
                randomization_factor,
                max_millis,
                ..
            } => {
                match max_millis {
                    Some(max) => check_interval(to_i64(max)).map_err(max_wait)?,
                    None => check_interval(to_i64(initial_millis)).map_err(wait)?,
                }
                randomization_factor
            }
        };
        check_randomization_factor(factor).map_err(|m| ("randomizedWaitFactor", m))
    }

    /// The check Resilience4j defers to the first computed interval: the initial interval of
    /// the exponential shapes with a cap (`ofExponentialBackoff(initial, multiplier, max)`
    /// accepts an initial interval of 0 and fails at the first retry).
    pub(crate) fn deferred_check(&self) -> Result<(), String> {
        match *self {
            IntervalFunction::Exponential {
                initial_millis,
                max_millis: Some(_),
                ..
            }
            | IntervalFunction::ExponentialRandom {
                initial_millis,
                max_millis: Some(_),
                ..
            } => check_interval(to_i64(initial_millis)),
            _ => Ok(()),
        }
    }

    /// Checks the parameters as Resilience4j's factories do, and the multiplier (>= 1.0) as
    /// the circuit breaker's OPEN wait requires; the message is Resilience4j's.
    pub(crate) fn validate(&self) -> Result<(), String> {
        self.creation_check().map_err(|(_, m)| m)?;
        self.deferred_check()?;
        let multiplier = match *self {
            IntervalFunction::Exponential { multiplier, .. }
            | IntervalFunction::ExponentialRandom { multiplier, .. } => multiplier,
            _ => return Ok(()),
        };
        if multiplier.is_nan() || multiplier < 1.0 {
            return Err(format!(
                "Illegal argument multiplier: {}",
                java_double(multiplier)
            ));
        }
        Ok(())
    }
}

fn wait(message: String) -> (&'static str, String) {
    ("waitDuration", message)
}

fn max_wait(message: String) -> (&'static str, String) {
    ("exponentialMaxWaitDuration", message)
}

/// Resilience4j's `checkInterval`: an interval below 1 ms is rejected.
pub(crate) fn check_interval(millis: i64) -> Result<(), String> {
    if millis < 1 {
        return Err(format!(
            "Illegal argument interval: {millis} millis is less than 1"
        ));
    }
    Ok(())
}

/// Resilience4j's `checkRandomizationFactor`: a factor outside `[0, 1]` is rejected.
pub(crate) fn check_randomization_factor(factor: f64) -> Result<(), String> {
    if !(0.0..=1.0).contains(&factor) {
        return Err(format!(
            "Illegal argument randomizationFactor: {}",
            java_double(factor)
        ));
    }
    Ok(())
}

fn to_i64(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

/// `value(1) = initial`, `value(k) = (long)(value(k-1) * multiplier)`: truncated at every
/// step; Rust's `as i64` saturates (and maps NaN to 0) as Java's `(long)` cast does.
fn exponential(initial: u64, multiplier: f64, attempt: u32) -> i64 {
    let mut x = to_i64(initial);
    for _ in 1..attempt {
        let next = (x as f64 * multiplier) as i64;
        if next == x {
            // A fixed point: every later step gives the same value.
            return x;
        }
        x = next;
    }
    x
}

/// Resilience4j's `randomize`, truncated as its callers do.
fn randomize(current: i64, factor: f64, random: &dyn RandomSource) -> i64 {
    let current = current as f64;
    let delta = factor * current;
    let min = current - delta;
    let max = current + delta;
    let v = min + random.next_f64() * (max - min + 1.0);
    v.max(1.0) as i64
}

fn cap(v: i64, max: Option<u64>) -> i64 {
    max.map_or(v, |m| v.min(to_i64(m)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_truncates_each_step() {
        // 1000 * 1.5 = 1500, * 1.5 = 2250, * 1.5 = 3375
        let f = IntervalFunction::Exponential {
            initial_millis: 1000,
            multiplier: 1.5,
            max_millis: None,
        };
        assert_eq!(
            (1..=4).map(|a| f.wait_millis(a)).collect::<Vec<_>>(),
            [1000, 1500, 2250, 3375]
        );
        // 3 * 1.5 = 4.5 -> 4; 4 * 1.5 = 6
        let g = IntervalFunction::Exponential {
            initial_millis: 3,
            multiplier: 1.5,
            max_millis: Some(5),
        };
        assert_eq!([g.wait_millis(2), g.wait_millis(3)], [4, 5]);
    }

    #[test]
    fn randomized_stays_in_range() {
        let f = IntervalFunction::Randomized {
            interval_millis: 1000,
            randomization_factor: 0.5,
        };
        for _ in 0..1000 {
            let w = f.wait_millis(1);
            assert!((500..=1500).contains(&w), "{w}");
        }
    }

    fn exp(initial: u64, multiplier: f64, max: Option<u64>) -> IntervalFunction {
        IntervalFunction::Exponential {
            initial_millis: initial,
            multiplier,
            max_millis: max,
        }
    }

    fn series(f: &IntervalFunction, attempts: impl IntoIterator<Item = u32>, r: f64) -> Vec<i64> {
        attempts
            .into_iter()
            .map(|a| f.millis(a, &move || r))
            .collect()
    }

    /// The values spec §1.4 verified against Resilience4j.
    #[test]
    fn exponential_values_match_resilience4j() {
        assert_eq!(
            series(&exp(500, 1.5, None), 1..=8, 0.0),
            [500, 750, 1125, 1687, 2530, 3795, 5692, 8538]
        );
        assert_eq!(
            series(&exp(500, 2.0, None), 1..=6, 0.0),
            [500, 1000, 2000, 4000, 8000, 16000]
        );
        assert_eq!(
            series(&exp(100, 2.0, Some(1000)), 1..=6, 0.0),
            [100, 200, 400, 800, 1000, 1000]
        );
        assert_eq!(series(&exp(100, 1.0, Some(99)), 1..=3, 0.0), [99, 99, 99]);
        assert_eq!(series(&exp(3, 1.5, None), 1..=6, 0.0), [3, 4, 6, 9, 13, 19]);
        assert_eq!(
            series(&exp(500, 0.5, None), 1..=6, 0.0),
            [500, 250, 125, 62, 31, 15]
        );
        assert_eq!(series(&exp(1000, 10.0, None), [30, 40], 0.0), [i64::MAX; 2]);
        assert_eq!(
            series(&exp(100, -1.0, None), 1..=4, 0.0),
            [100, -100, 100, -100]
        );
    }

    #[test]
    fn randomized_bounds_match_resilience4j() {
        let top = 1.0 - 1e-12;
        let r = IntervalFunction::Randomized {
            interval_millis: 1000,
            randomization_factor: 0.5,
        };
        assert_eq!(
            [series(&r, [1], 0.0)[0], series(&r, [1], top)[0]],
            [500, 1500]
        );
        let one = IntervalFunction::Randomized {
            interval_millis: 1000,
            randomization_factor: 1.0,
        };
        assert_eq!(
            [series(&one, [1], 0.0)[0], series(&one, [1], top)[0]],
            [1, 2000]
        );
        let capped = IntervalFunction::ExponentialRandom {
            initial_millis: 1000,
            multiplier: 2.0,
            randomization_factor: 0.5,
            max_millis: Some(3000),
        };
        assert_eq!(series(&capped, 1..=3, 0.0), [500, 1000, 2000]);
        assert_eq!(series(&capped, 1..=3, top), [1500, 3000, 3000]);
        let defaults = IntervalFunction::ExponentialRandom {
            initial_millis: 500,
            multiplier: DEFAULT_MULTIPLIER,
            randomization_factor: DEFAULT_RANDOMIZATION_FACTOR,
            max_millis: None,
        };
        assert_eq!(series(&defaults, 1..=3, 0.0), [250, 375, 562]);
        assert_eq!(series(&defaults, 1..=3, top), [750, 1125, 1688]);
    }

    #[test]
    fn the_capped_shapes_defer_the_initial_interval_check() {
        let f = exp(0, 2.0, Some(1000));
        assert_eq!(f.creation_check(), Ok(()));
        assert_eq!(
            f.deferred_check(),
            Err("Illegal argument interval: 0 millis is less than 1".to_string())
        );
        assert_eq!(
            exp(0, 2.0, None).creation_check(),
            Err((
                "waitDuration",
                "Illegal argument interval: 0 millis is less than 1".to_string()
            ))
        );
    }

    #[test]
    fn validation_messages() {
        let bad = IntervalFunction::Randomized {
            interval_millis: 10,
            randomization_factor: 1.5,
        };
        assert_eq!(
            bad.validate().unwrap_err(),
            "Illegal argument randomizationFactor: 1.5"
        );
        assert_eq!(
            IntervalFunction::Constant { interval_millis: 0 }
                .validate()
                .unwrap_err(),
            "Illegal argument interval: 0 millis is less than 1"
        );
    }
}
