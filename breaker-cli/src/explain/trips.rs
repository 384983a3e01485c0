//! Accidental trips measured: days of healthy traffic (Poisson arrivals, independent
//! errors) through the real state machine on a virtual clock, counting CLOSED -> OPEN.
//!
//! The real window slides: every call closes a new window, so a run of errors that
//! straddles two disjoint windows still trips it; and while it is OPEN or HALF_OPEN it
//! cannot trip again. Both make the true figure differ from the binomial estimate.

use breaker_core::{CircuitBreakerConfig, State};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

use super::binomial::DAY_S;
use super::probe::breaker_on_clock;
use crate::progress::Progress;

/// Trips counted over a number of simulated days.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// CLOSED -> OPEN transitions.
    pub trips: u64,
    /// Days of traffic simulated.
    pub days: f64,
    /// Calls made.
    pub calls: u64,
}

impl Measured {
    /// Trips a day.
    pub fn per_day(&self) -> f64 {
        self.trips as f64 / self.days
    }

    /// An upper bound of the true trips a day at 95 % confidence when none were seen
    /// (the rule of three: 3 / days).
    pub fn upper_bound_if_none(&self) -> f64 {
        3.0 / self.days
    }
}

/// Healthy traffic: Poisson arrivals, independent errors, calls that take no time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Traffic {
    /// Mean calls a second (> 0).
    pub calls_per_s: f64,
    /// Probability that a call fails, in [0, 1].
    pub error_rate: f64,
    /// Days to simulate (> 0).
    pub days: f64,
    /// Seed of the random numbers.
    pub seed: u64,
}

/// Simulates `traffic` through a breaker with `config`; counts CLOSED -> OPEN transitions.
/// `progress` advances by one per simulated second, from `progress_from`.
///
/// # Errors
/// The config cannot be given a virtual clock.
pub fn measure(
    config: &CircuitBreakerConfig,
    name: &str,
    traffic: Traffic,
    progress: &mut Progress,
    progress_from: u64,
) -> Result<Measured, String> {
    let Traffic {
        calls_per_s,
        error_rate,
        days,
        seed,
    } = traffic;
    let (cb, clock) = breaker_on_clock(config, name)?;
    // Leaving CLOSED only ever happens when an outcome is recorded there, so reading the
    // state after each recorded outcome (one atomic load while CLOSED) sees every trip,
    // without the cost of an event per call that a subscription brings.
    let mut trips = 0;
    let mut closed = cb.state() == State::Closed;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let gap = Exp::new(calls_per_s / 1e9).map_err(|e| format!("--rate: {e}"))?;
    let end_ns = days * DAY_S * 1e9;
    let start = crate::simulate::EPOCH_NS;
    let mut t = 0.0;
    let mut calls = 0;
    loop {
        t += gap.sample(&mut rng);
        if t >= end_ns {
            break;
        }
        calls += 1;
        clock.set_epoch_nanos(start + t as u64);
        match cb.try_acquire_permission() {
            Ok(p) => {
                if error_rate > 0.0 && rng.gen_bool(error_rate) {
                    p.on_error();
                } else {
                    p.on_success();
                }
                let state = cb.state();
                trips += u64::from(closed && state == State::Open);
                closed = state == State::Closed;
            }
            // CLOSED never rejects.
            Err(_) => closed = false,
        }
        if calls & 0xFFFF == 0 {
            progress.set(progress_from + (t / 1e9) as u64);
        }
    }
    Ok(Measured { trips, days, calls })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn every_error_trips_a_window_of_one_failure_unless_open() {
        // Window 5, 20 %: one failure among 5 buffered calls opens it (and the window is
        // evaluated from 5 calls on). At 20 calls/s with 1 % errors, a failure comes every
        // 5 s on average; after each trip the breaker waits 5 s OPEN, then 5 trial calls
        // (about 0.25 s) close it with a fresh window, whose first 5 calls (0.25 s) must
        // be buffered before it can trip again. A cycle lasts about 5 + 5 + 0.25 + 0.25 =
        // 10.5 s: about 343 trips an hour. (Trial calls that fail, 5 % of cycles, add one
        // more wait of 5 s.)
        let c = CircuitBreakerConfig::builder()
            .sliding_window_size(5)
            .minimum_number_of_calls(5)
            .failure_rate_threshold(20.0)
            .wait_duration_in_open_state(Duration::from_secs(5))
            .permitted_number_of_calls_in_half_open_state(5)
            .build()
            .unwrap();
        let hours = 1.0 / 24.0;
        let mut p = Progress::new(0.0, 0, "");
        let traffic = Traffic {
            calls_per_s: 20.0,
            error_rate: 0.01,
            days: hours,
            seed: 3,
        };
        let m = measure(&c, "w5", traffic, &mut p, 0).unwrap();
        assert!((68_000..76_000).contains(&m.calls), "{}", m.calls);
        // 343 expected, about 327 with the failed trials; the count's own spread is about
        // sqrt(330) = 18.
        assert!((270..390).contains(&m.trips), "{}", m.trips);
    }
}
