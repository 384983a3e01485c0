//! What `breaker simulate` runs: the traffic, the dependency's behaviour and its outages.

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

use super::latency::Latency;
use crate::units::Span;

/// Traffic and dependency behaviour, all in virtual time from the start of the run.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Mean call rate of the Poisson arrivals, calls per second (> 0).
    pub rate: f64,
    /// Latency of a healthy dependency.
    pub latency: Latency,
    /// Share of healthy calls that fail, in [0, 1].
    pub error_rate: f64,
    /// Outage windows: a call arriving inside one gets `outage_latency` and
    /// `outage_error_rate`.
    pub outages: Vec<Span>,
    /// Latency of a call made during an outage.
    pub outage_latency: Latency,
    /// Share of calls made during an outage that fail, in [0, 1].
    pub outage_error_rate: f64,
    /// How long the run lasts.
    pub duration: Duration,
}

/// One client call: when it arrives and what the dependency would do with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    /// Arrival, nanoseconds from the start of the run.
    pub at_ns: u64,
    /// How long the dependency takes to answer, nanoseconds.
    pub latency_ns: u64,
    /// Whether the dependency answers with an error.
    pub fails: bool,
    /// Whether the call arrives during an outage.
    pub in_outage: bool,
}

/// The calls of a scenario, in arrival order, drawn from one seeded generator: the same seed
/// gives the same calls, so the runs with and without the breaker see the same traffic.
pub struct Arrivals<'s> {
    scenario: &'s Scenario,
    rng: ChaCha8Rng,
    gap: Exp<f64>,
    t_ns: f64,
    end_ns: f64,
}

impl<'s> Arrivals<'s> {
    /// The calls of `scenario` drawn from `rng`.
    pub fn new(scenario: &'s Scenario, rng: ChaCha8Rng) -> Self {
        Arrivals {
            scenario,
            rng,
            // Inter-arrival gaps of a Poisson process: exponential with mean 1 / rate.
            gap: Exp::new(scenario.rate / 1e9).expect("rate > 0 is checked by the parser"),
            t_ns: 0.0,
            end_ns: scenario.duration.as_nanos() as f64,
        }
    }
}

fn draw(rng: &mut ChaCha8Rng, p: f64) -> bool {
    // No draw for the common 0 % and 100 %: keeps the stream of a scenario without errors
    // independent of the error settings.
    p >= 1.0 || (p > 0.0 && rng.gen_bool(p))
}

impl Iterator for Arrivals<'_> {
    type Item = Call;

    #[inline]
    fn next(&mut self) -> Option<Call> {
        self.t_ns += self.gap.sample(&mut self.rng);
        if self.t_ns >= self.end_ns {
            return None;
        }
        let at_ns = self.t_ns as u64;
        let at = Duration::from_nanos(at_ns);
        let s = self.scenario;
        let in_outage = s.outages.iter().any(|o| o.contains(at));
        let (latency, p) = if in_outage {
            (&s.outage_latency, s.outage_error_rate)
        } else {
            (&s.latency, s.error_rate)
        };
        let latency_ns = latency.sample_ns(&mut self.rng);
        let fails = draw(&mut self.rng, p);
        Some(Call {
            at_ns,
            latency_ns,
            fails,
            in_outage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn scenario() -> Scenario {
        Scenario {
            rate: 50.0,
            latency: Latency::parse("exp:20ms").unwrap(),
            error_rate: 0.0,
            outages: vec![crate::units::span("15s..35s").unwrap()],
            outage_latency: Latency::parse("2000ms").unwrap(),
            outage_error_rate: 1.0,
            duration: Duration::from_secs(60),
        }
    }

    #[test]
    fn poisson_count_and_outage_behaviour() {
        let s = scenario();
        let calls: Vec<Call> = Arrivals::new(&s, ChaCha8Rng::seed_from_u64(1)).collect();
        // 3000 expected; a Poisson count has standard deviation sqrt(3000) = 55.
        assert!((2780..3220).contains(&calls.len()), "{}", calls.len());
        assert!(calls.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
        for c in &calls {
            let in_outage = (15_000_000_000..35_000_000_000).contains(&c.at_ns);
            assert_eq!(c.in_outage, in_outage);
            assert_eq!(c.fails, in_outage);
            if in_outage {
                assert_eq!(c.latency_ns, 2_000_000_000);
            }
        }
    }

    #[test]
    fn same_seed_same_calls() {
        let s = scenario();
        let a: Vec<Call> = Arrivals::new(&s, ChaCha8Rng::seed_from_u64(9)).collect();
        let b: Vec<Call> = Arrivals::new(&s, ChaCha8Rng::seed_from_u64(9)).collect();
        let c: Vec<Call> = Arrivals::new(&s, ChaCha8Rng::seed_from_u64(10)).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
