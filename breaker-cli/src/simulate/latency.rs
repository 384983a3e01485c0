//! Latency distributions of the simulated dependency (`--latency`, `--outage-latency`),
//! sampled with `rand_distr`.

use std::fmt;
use std::time::Duration;

use rand::Rng;
use rand_distr::{Distribution, Exp, LogNormal, Normal, Uniform};

use crate::units;

/// How long a call to the dependency takes.
#[derive(Debug, Clone)]
pub enum Latency {
    /// Always the same: `20ms`.
    Constant(Duration),
    /// Exponential with this mean: `exp:20ms`.
    Exponential(Duration, Exp<f64>),
    /// Uniform between two bounds: `uniform:10ms..30ms`.
    Uniform(Duration, Duration, Uniform<f64>),
    /// Normal with mean and standard deviation, negative draws taken as 0: `normal:20ms,5ms`.
    Normal(Duration, Duration, Normal<f64>),
    /// Log-normal with this median and shape sigma: `lognormal:20ms,0.5`.
    LogNormal(Duration, f64, LogNormal<f64>),
}

const FORMS: &str = "20ms (constant), exp:20ms (exponential, mean 20 ms), \
    uniform:10ms..30ms, normal:20ms,5ms (mean, standard deviation), lognormal:20ms,0.5 (median, sigma)";

fn ns(d: Duration) -> f64 {
    d.as_nanos() as f64
}

impl Latency {
    /// Parses one of the forms listed in `--help`.
    pub fn parse(s: &str) -> Result<Latency, String> {
        let t = s.trim();
        let err = |e: String| format!("{e}; latencies are written {FORMS}");
        let Some((kind, rest)) = t.split_once(':') else {
            return units::duration(t).map(Latency::Constant).map_err(err);
        };
        let rest = rest.trim();
        match kind.trim() {
            "const" | "constant" => units::duration(rest).map(Latency::Constant).map_err(err),
            "exp" => {
                let mean = units::positive_duration(rest).map_err(err)?;
                let d = Exp::new(1.0 / ns(mean)).map_err(|e| err(e.to_string()))?;
                Ok(Latency::Exponential(mean, d))
            }
            "uniform" => {
                let span = units::span(rest).map_err(err)?;
                let d = Uniform::new(ns(span.start), ns(span.end));
                Ok(Latency::Uniform(span.start, span.end, d))
            }
            "normal" => {
                let (m, sd) = rest
                    .split_once(',')
                    .ok_or_else(|| err(format!("'{s}' needs a mean and a deviation")))?;
                let (m, sd) = (
                    units::duration(m).map_err(err)?,
                    units::duration(sd).map_err(err)?,
                );
                let d = Normal::new(ns(m), ns(sd)).map_err(|e| err(e.to_string()))?;
                Ok(Latency::Normal(m, sd, d))
            }
            "lognormal" => {
                let (m, sigma) = rest
                    .split_once(',')
                    .ok_or_else(|| err(format!("'{s}' needs a median and a sigma")))?;
                let median = units::positive_duration(m).map_err(err)?;
                let sigma: f64 = sigma
                    .trim()
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| err(format!("'{sigma}' is not a sigma >= 0")))?;
                let d = LogNormal::new(ns(median).ln(), sigma).map_err(|e| err(e.to_string()))?;
                Ok(Latency::LogNormal(median, sigma, d))
            }
            other => Err(err(format!("unknown distribution '{other}'"))),
        }
    }

    /// One draw, in nanoseconds (never negative).
    #[inline]
    pub fn sample_ns<R: Rng>(&self, rng: &mut R) -> u64 {
        let v = match self {
            Latency::Constant(d) => return d.as_nanos() as u64,
            Latency::Exponential(_, d) => d.sample(rng),
            Latency::Uniform(_, _, d) => d.sample(rng),
            Latency::Normal(_, _, d) => d.sample(rng),
            Latency::LogNormal(_, _, d) => d.sample(rng),
        };
        v.max(0.0) as u64
    }
}

impl fmt::Display for Latency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = humantime::format_duration;
        match self {
            Latency::Constant(d) => write!(f, "{}", h(*d)),
            Latency::Exponential(m, _) => write!(f, "exp:{}", h(*m)),
            Latency::Uniform(a, b, _) => write!(f, "uniform:{}..{}", h(*a), h(*b)),
            Latency::Normal(m, sd, _) => write!(f, "normal:{},{}", h(*m), h(*sd)),
            Latency::LogNormal(m, s, _) => write!(f, "lognormal:{},{s}", h(*m)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn mean_ms(l: &Latency) -> f64 {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 100_000;
        (0..n).map(|_| l.sample_ns(&mut rng) as f64).sum::<f64>() / n as f64 / 1e6
    }

    #[test]
    fn forms_and_their_means() {
        assert_eq!(
            Latency::parse("2000ms")
                .unwrap()
                .sample_ns(&mut rand::thread_rng()),
            2_000_000_000
        );
        // Sample means of 100 000 draws lie within 1 % of the distributions' means
        // (standard error of an exponential mean: 20 ms / sqrt(100 000) = 0.06 ms).
        let exp = mean_ms(&Latency::parse("exp:20ms").unwrap());
        assert!((exp - 20.0).abs() < 0.2, "{exp}");
        let uni = mean_ms(&Latency::parse("uniform:10ms..30ms").unwrap());
        assert!((uni - 20.0).abs() < 0.2, "{uni}");
        let normal = mean_ms(&Latency::parse("normal:20ms,5ms").unwrap());
        assert!((normal - 20.0).abs() < 0.2, "{normal}");
        // Log-normal with sigma 0.5: mean = median * exp(sigma^2 / 2) = 20 * 1.1331 ms.
        let logn = mean_ms(&Latency::parse("lognormal:20ms,0.5").unwrap());
        assert!((logn - 22.663).abs() < 0.3, "{logn}");
    }

    #[test]
    fn bad_forms_say_what_is_allowed() {
        for bad in [
            "exp:0ms",
            "gamma:3ms",
            "normal:20ms",
            "lognormal:20ms,x",
            "20",
        ] {
            let e = Latency::parse(bad).unwrap_err();
            assert!(e.contains("exp:20ms (exponential"), "{bad}: {e}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in ["20ms", "exp:20ms", "uniform:10ms..30ms", "normal:20ms,5ms"] {
            assert_eq!(Latency::parse(s).unwrap().to_string(), s);
        }
    }
}
