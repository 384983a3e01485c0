//! How many failures open a breaker, and how fast it notices a dead dependency: measured by
//! feeding the real state machine calls at a steady rate on a virtual clock.

use std::sync::Arc;

use breaker_core::{CircuitBreaker, CircuitBreakerConfig, ManualClock, SlidingWindowType, State};

use crate::simulate::EPOCH_NS;

/// Calls after which a probe gives up (a config that never opens).
const MAX_PROBE_CALLS: u64 = 10_000_000;

/// A breaker with `config` on a fresh virtual clock at [`EPOCH_NS`].
///
/// # Errors
/// breaker-core refuses the config with the clock (it accepted it without).
pub fn breaker_on_clock(
    config: &CircuitBreakerConfig,
    name: &str,
) -> Result<(CircuitBreaker, ManualClock), String> {
    let clock = ManualClock::default();
    clock.set_epoch_nanos(EPOCH_NS);
    let config = config
        .to_builder()
        .clock(Arc::new(clock.clone()))
        .build()
        .map_err(|e| format!("circuit breaker '{name}': {e}"))?;
    Ok((CircuitBreaker::new(name.to_string(), config), clock))
}

/// How the breaker reacts to a dependency that starts failing every call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detection {
    /// Consecutive failures that open it when its window is full of successes.
    pub failures_to_open: Option<u64>,
    /// Consecutive failures that open a fresh breaker (empty window).
    pub failures_to_open_fresh: Option<u64>,
    /// Seconds from the dependency's failure to OPEN at the call rate, with a window full of
    /// successes and failures that fail at once (add the time a failing call takes).
    pub detection_s: Option<f64>,
}

/// Calls `cb` every `gap_ns` until it is OPEN, each failing; the number of failures and the
/// time they took, or `None` if it has not opened after [`MAX_PROBE_CALLS`].
fn fail_until_open(cb: &CircuitBreaker, clock: &ManualClock, gap_ns: u64) -> Option<(u64, u64)> {
    let start = clock_ns(clock);
    for n in 1..=MAX_PROBE_CALLS {
        clock.advance(std::time::Duration::from_nanos(gap_ns));
        if let Ok(p) = cb.try_acquire_permission() {
            p.on_error();
        }
        if cb.state() == State::Open {
            return Some((n, clock_ns(clock) - start));
        }
    }
    None
}

fn clock_ns(clock: &ManualClock) -> u64 {
    use breaker_core::Clock;
    clock.now_nanos()
}

/// Measures [`Detection`] for `config` at `calls_per_s`.
///
/// "Full of successes" means `slidingWindowSize` successes for a count-based window, and
/// successes at `calls_per_s` for `slidingWindowSize` seconds plus one (so every bucket is
/// filled) for a time-based one; calls take no time.
///
/// # Errors
/// The config cannot be given a virtual clock.
pub fn detection(
    config: &CircuitBreakerConfig,
    name: &str,
    calls_per_s: f64,
) -> Result<Detection, String> {
    let gap_ns = (1e9 / calls_per_s).round().max(1.0) as u64;

    let (cb, clock) = breaker_on_clock(config, name)?;
    let fill = match config.sliding_window_type() {
        SlidingWindowType::CountBased => u64::from(config.sliding_window_size()),
        SlidingWindowType::TimeBased => {
            ((f64::from(config.sliding_window_size()) + 1.0) * calls_per_s).ceil() as u64
        }
    };
    for _ in 0..fill.min(MAX_PROBE_CALLS) {
        clock.advance(std::time::Duration::from_nanos(gap_ns));
        if let Ok(p) = cb.try_acquire_permission() {
            p.on_success();
        }
    }
    let full = if cb.state() == State::Closed {
        fail_until_open(&cb, &clock, gap_ns)
    } else {
        None
    };

    let (fresh_cb, fresh_clock) = breaker_on_clock(config, name)?;
    let fresh = if fresh_cb.state() == State::Closed {
        fail_until_open(&fresh_cb, &fresh_clock, gap_ns)
    } else {
        None
    };
    Ok(Detection {
        failures_to_open: full.map(|(n, _)| n),
        failures_to_open_fresh: fresh.map(|(n, _)| n),
        detection_s: full.map(|(_, ns)| ns as f64 / 1e9),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(size: i64, min: i64, threshold: f32) -> CircuitBreakerConfig {
        CircuitBreakerConfig::builder()
            .sliding_window_size(size)
            .minimum_number_of_calls(min)
            .failure_rate_threshold(threshold)
            .build()
            .unwrap()
    }

    #[test]
    fn count_window_by_arithmetic() {
        // Full window of 10 successes: each failure replaces a success; 5 of 10 = 50 %.
        // Fresh: the rate is evaluated from min(minimumNumberOfCalls, size) = 10 calls on,
        // when it is 100 %.
        let d = detection(&count(10, 10, 50.0), "a", 20.0).unwrap();
        assert_eq!(d.failures_to_open, Some(5));
        assert_eq!(d.failures_to_open_fresh, Some(10));
        assert!((d.detection_s.unwrap() - 0.25).abs() < 1e-9); // 5 calls at 20/s
                                                               // minimumNumberOfCalls above the size is clamped to the size for count windows.
        let d = detection(&count(5, 50, 20.0), "b", 20.0).unwrap();
        assert_eq!(d.failures_to_open, Some(1));
        assert_eq!(d.failures_to_open_fresh, Some(5));
        // 3 of 20 = 15 % >= 12.5 %; 2 of 20 = 10 % is not.
        let d = detection(&count(20, 4, 12.5), "c", 10.0).unwrap();
        assert_eq!(d.failures_to_open, Some(3));
        assert_eq!(d.failures_to_open_fresh, Some(4));
    }

    #[test]
    fn time_window_holds_the_calls_of_its_seconds() {
        // The window holds the calls of the last 10 epoch seconds (the current one partly):
        // 91 to 100 calls at 10 calls/s. Each failure pushes the oldest success out, so it
        // opens when the failures reach half of them: after 46 to 50 failures.
        let c = CircuitBreakerConfig::builder()
            .sliding_window_type(breaker_core::SlidingWindowType::TimeBased)
            .sliding_window_size(10)
            .minimum_number_of_calls(20)
            .build()
            .unwrap();
        let d = detection(&c, "t", 10.0).unwrap();
        let f = d.failures_to_open.unwrap();
        assert!((46..=50).contains(&f), "{f}");
        // Fresh: minimumNumberOfCalls (20) is not clamped for time windows.
        assert_eq!(d.failures_to_open_fresh, Some(20));
    }

    #[test]
    fn a_breaker_that_cannot_open() {
        let c = CircuitBreakerConfig::builder()
            .initial_state(State::Disabled)
            .build()
            .unwrap();
        let d = detection(&c, "d", 10.0).unwrap();
        assert_eq!(d.failures_to_open, None);
        assert_eq!(d.detection_s, None);
    }
}
