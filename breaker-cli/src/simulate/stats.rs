//! What the caller saw, with and without the breaker: per second, during the outages, over
//! the whole run. A call rejected by the breaker (`CallNotPermitted`) fails fast and counts
//! as 0 ms; without the breaker every call waits for the dependency.

use super::scenario::Call;

const NS_PER_S: u64 = 1_000_000_000;

/// The `q`-quantile by the nearest-rank method (the smallest value with at least `q` of the
/// values at or below it), in the values' unit; `None` for no values. Reorders `values`.
pub fn nearest_rank(values: &mut [u64], q: f64) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    let (_, v, _) = values.select_nth_unstable(rank - 1);
    Some(*v)
}

fn mean(values: &[u64]) -> Option<f64> {
    (!values.is_empty())
        .then(|| values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64)
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// Latency figures of a set of calls, milliseconds (`None` when there were no calls).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latencies {
    /// Mean.
    pub mean_ms: Option<f64>,
    /// 99th percentile (nearest rank).
    pub p99_ms: Option<f64>,
}

impl Latencies {
    fn of(values: &mut [u64]) -> Self {
        Latencies {
            mean_ms: mean(values).map(ms),
            p99_ms: nearest_rank(values, 0.99).map(|v| ms(v as f64)),
        }
    }
}

/// Counts and latencies of a set of calls (one second, the outages, the run).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Calls made by clients.
    pub calls: u64,
    /// Calls the breaker let through to the dependency.
    pub reached: u64,
    /// Calls that failed for the caller with the breaker (rejected, or an error).
    pub errors_with: u64,
    /// Calls that failed without the breaker (the dependency's errors).
    pub errors_without: u64,
    /// Latency with the breaker (rejected calls 0 ms).
    pub with: Latencies,
    /// Latency without the breaker.
    pub without: Latencies,
}

/// Accumulates the calls of one set.
#[derive(Debug, Default)]
struct Acc {
    calls: u64,
    reached: u64,
    errors_with: u64,
    errors_without: u64,
    with: Vec<u64>,
    without: Vec<u64>,
}

impl Acc {
    #[inline]
    fn add(&mut self, call: &Call, admitted: bool) {
        self.calls += 1;
        self.reached += u64::from(admitted);
        self.errors_with += u64::from(!admitted || call.fails);
        self.errors_without += u64::from(call.fails);
        self.with.push(if admitted { call.latency_ns } else { 0 });
        self.without.push(call.latency_ns);
    }

    /// Empties the set, keeping its buffers.
    fn clear(&mut self) {
        self.calls = 0;
        self.reached = 0;
        self.errors_with = 0;
        self.errors_without = 0;
        self.with.clear();
        self.without.clear();
    }

    fn figures(&mut self) -> Figures {
        Figures {
            calls: self.calls,
            reached: self.reached,
            errors_with: self.errors_with,
            errors_without: self.errors_without,
            with: Latencies::of(&mut self.with),
            without: Latencies::of(&mut self.without),
        }
    }
}

/// The figures of a run.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// One entry per second of the run, from second 0.
    pub seconds: Vec<Figures>,
    /// Calls that arrived during an outage.
    pub outage: Figures,
    /// Every call, with overall means (the p99 over the whole run is left out: it would
    /// need every latency of a long run kept).
    pub total: Figures,
}

/// Collects [`Stats`] call by call (calls arrive in time order).
#[derive(Debug, Default)]
pub struct Collector {
    second: u64,
    current: Acc,
    seconds: Vec<Figures>,
    outage: Acc,
    total: Figures,
    total_with_ns: f64,
    total_without_ns: f64,
}

impl Collector {
    /// Adds one call; `admitted` tells whether the breaker let it through.
    #[inline]
    pub fn add(&mut self, call: &Call, admitted: bool) {
        let s = call.at_ns / NS_PER_S;
        while self.second < s {
            self.close_second();
        }
        self.current.add(call, admitted);
        if call.in_outage {
            self.outage.add(call, admitted);
        }
        let t = &mut self.total;
        t.calls += 1;
        t.reached += u64::from(admitted);
        t.errors_with += u64::from(!admitted || call.fails);
        t.errors_without += u64::from(call.fails);
        self.total_with_ns += if admitted {
            call.latency_ns as f64
        } else {
            0.0
        };
        self.total_without_ns += call.latency_ns as f64;
    }

    fn close_second(&mut self) {
        let f = self.current.figures();
        self.seconds.push(f);
        self.current.clear();
        self.second += 1;
    }

    /// The figures of a run of `duration_ns`.
    pub fn finish(mut self, duration_ns: u64) -> Stats {
        let seconds = duration_ns.div_ceil(NS_PER_S);
        while self.second < seconds {
            self.close_second();
        }
        let mut total = self.total;
        if total.calls > 0 {
            let n = total.calls as f64;
            total.with.mean_ms = Some(ms(self.total_with_ns / n));
            total.without.mean_ms = Some(ms(self.total_without_ns / n));
        }
        Stats {
            seconds: self.seconds,
            outage: self.outage.figures(),
            total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(nearest_rank(&mut v, 0.99), Some(99));
        assert_eq!(nearest_rank(&mut v, 0.5), Some(50));
        assert_eq!(nearest_rank(&mut v, 1.0), Some(100));
        // 10 values: rank ceil(9.9) = 10, the largest.
        let mut v: Vec<u64> = (1..=10).collect();
        assert_eq!(nearest_rank(&mut v, 0.99), Some(10));
        assert_eq!(nearest_rank(&mut [], 0.99), None);
    }

    #[test]
    fn rejected_calls_count_as_zero_ms_with_the_breaker() {
        let mut c = Collector::default();
        let call = |at_ms: u64, latency_ms: u64, fails: bool, in_outage: bool| Call {
            at_ns: at_ms * 1_000_000,
            latency_ns: latency_ms * 1_000_000,
            fails,
            in_outage,
        };
        c.add(&call(100, 20, false, false), true);
        c.add(&call(1500, 2000, true, true), true);
        c.add(&call(1600, 2000, true, true), false);
        c.add(&call(1700, 2000, true, true), false);
        c.add(&call(1800, 2000, true, true), false);
        let s = c.finish(3_000_000_000);
        assert_eq!(s.seconds.len(), 3);
        assert_eq!(s.seconds[0].calls, 1);
        assert_eq!(s.seconds[2].calls, 0);
        assert_eq!(s.seconds[2].with.mean_ms, None);
        let o = &s.outage;
        assert_eq!((o.calls, o.reached), (4, 1));
        assert_eq!(o.with.mean_ms, Some(500.0)); // (2000 + 0 + 0 + 0) / 4
        assert_eq!(o.without.mean_ms, Some(2000.0));
        assert_eq!(o.with.p99_ms, Some(2000.0));
        assert_eq!((o.errors_with, o.errors_without), (4, 4));
        assert_eq!(s.total.calls, 5);
        assert_eq!(s.total.with.mean_ms, Some(404.0)); // (20 + 2000) / 5
        assert_eq!(s.total.without.mean_ms, Some(1604.0)); // (20 + 4 * 2000) / 5
    }
}
