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

impl IntervalFunction {
    /// A constant wait (`IntervalFunction.of(duration)`), truncated to whole ms.
    pub fn constant(wait: Duration) -> Self {
        IntervalFunction::Constant {
            interval_millis: wait.as_millis() as u64,
        }
    }

    /// The wait for `attempt` (1-based; 0 is treated as 1), in milliseconds.
    pub fn wait_millis(&self, attempt: u32) -> u64 {
        let attempt = attempt.max(1);
        match *self {
            IntervalFunction::Constant { interval_millis } => interval_millis,
            IntervalFunction::Exponential {
                initial_millis,
                multiplier,
                max_millis,
            } => cap(exponential(initial_millis, multiplier, attempt), max_millis),
            IntervalFunction::Randomized {
                interval_millis,
                randomization_factor,
            } => randomize(interval_millis as f64, randomization_factor),
            IntervalFunction::ExponentialRandom {
                initial_millis,
                multiplier,
                randomization_factor,
                max_millis,
            } => {
                let exp = exponential(initial_millis, multiplier, attempt);
                cap(randomize(exp as f64, randomization_factor), max_millis)
            }
        }
    }

    /// Checks the parameters as Resilience4j's factories do; the message is Resilience4j's.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let (interval, multiplier, factor, max) = match *self {
            IntervalFunction::Constant { interval_millis } => (interval_millis, None, None, None),
            IntervalFunction::Exponential {
                initial_millis,
                multiplier,
                max_millis,
            } => (initial_millis, Some(multiplier), None, max_millis),
            IntervalFunction::Randomized {
                interval_millis,
                randomization_factor,
            } => (interval_millis, None, Some(randomization_factor), None),
            IntervalFunction::ExponentialRandom {
                initial_millis,
                multiplier,
                randomization_factor,
                max_millis,
            } => (
                initial_millis,
                Some(multiplier),
                Some(randomization_factor),
                max_millis,
            ),
        };
        for ms in std::iter::once(interval).chain(max) {
            if ms < 1 {
                return Err(format!(
                    "Illegal argument interval: {ms} millis is less than 1"
                ));
            }
        }
        if let Some(m) = multiplier {
            if m.is_nan() || m < 1.0 {
                return Err(format!("Illegal argument multiplier: {}", java_double(m)));
            }
        }
        if let Some(f) = factor {
            if !(0.0..=1.0).contains(&f) {
                return Err(format!(
                    "Illegal argument randomizationFactor: {}",
                    java_double(f)
                ));
            }
        }
        Ok(())
    }
}

fn exponential(initial: u64, multiplier: f64, attempt: u32) -> u64 {
    let mut x = initial;
    for _ in 1..attempt {
        let next = (x as f64 * multiplier) as u64; // saturates like Java's (long) cast
        if next == x && multiplier <= 1.0 || next == u64::MAX {
            return next;
        }
        x = next;
    }
    x
}

fn randomize(current: f64, factor: f64) -> u64 {
    let delta = factor * current;
    let min = current - delta;
    let max = current + delta;
    let v = min + fastrand::f64() * (max - min + 1.0);
    v.max(1.0) as u64
}

fn cap(v: u64, max: Option<u64>) -> u64 {
    max.map_or(v, |m| v.min(m))
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
