//! Ratios measured by alternation: the two sides of a comparison run in the same process,
//! one batch after the other (A, B, A, B, ...), so that whatever else the machine is doing
//! at a given moment weighs on both sides alike. This is what makes a ratio reproducible
//! on a shared 2-core machine where absolute figures move by tens of percent.
//!
//! A [`Side`] times `n` iterations of one operation with [`std::time::Instant`] around a
//! loop whose body goes through [`std::hint::black_box`] (the loop is monomorphised: no
//! dynamic call per iteration). Each side is first calibrated to a batch of about
//! [`Plan::batch`]; then every round runs [`Plan::pairs`] pairs of batches, A then B, and
//! keeps each side's fastest batch of the round (a batch that lost the CPU for a while is
//! slower, never faster); the round's ratio is A's per-call time over B's. Over
//! [`Plan::rounds`] rounds, [`Measured`] keeps the median ratio and its min-max.

use std::time::{Duration, Instant};

/// One side of a comparison: runs `n` iterations and returns how long they took.
pub struct Side<'a> {
    pub name: &'static str,
    run: Box<dyn FnMut(u64) -> Duration + 'a>,
}

impl<'a> Side<'a> {
    /// A side that times `n` calls of `f` in a plain loop.
    pub fn looped<R>(name: &'static str, mut f: impl FnMut() -> R + 'a) -> Self {
        Side {
            name,
            run: Box::new(move |n| {
                let start = Instant::now();
                for _ in 0..n {
                    std::hint::black_box(f());
                }
                start.elapsed()
            }),
        }
    }

    /// A side that measures `n` iterations itself (e.g. on several threads) and returns
    /// the time one iteration's caller saw, times `n`.
    pub fn custom(name: &'static str, run: impl FnMut(u64) -> Duration + 'a) -> Self {
        Side {
            name,
            run: Box::new(run),
        }
    }

    fn per_call_ns(&mut self, n: u64) -> f64 {
        (self.run)(n).as_nanos() as f64 / n as f64
    }

    /// The iteration count whose batch takes about `target`.
    fn calibrate(&mut self, target: Duration) -> u64 {
        let mut n = 64u64;
        loop {
            let t = (self.run)(n);
            if t >= target / 8 || n >= 1 << 40 {
                let per = t.as_nanos().max(1) as f64 / n as f64;
                return ((target.as_nanos() as f64 / per) as u64).max(16);
            }
            n *= 4;
        }
    }
}

/// How long and how often to alternate.
///
/// The default (21 rounds of 15 pairs of 2 ms batches, about 1.3 s a side per row) keeps
/// batches shorter than a scheduler time slice, so that on a loaded machine most batches
/// run uninterrupted and the fastest of 15 is a clean one; longer batches were almost all
/// interrupted at a load average of 5 on 2 cores, and the rounds' ratios spread accordingly.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Rounds, each giving one ratio (at least 10).
    pub rounds: usize,
    /// A-then-B pairs of batches in one round; each side keeps its fastest.
    pub pairs: usize,
    /// The length of one batch.
    pub batch: Duration,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            rounds: 21,
            pairs: 15,
            batch: Duration::from_millis(2),
        }
    }
}

/// The result of one alternated comparison.
#[derive(Debug, Clone)]
pub struct Measured {
    /// A's per-call time (ns) in each round (its fastest batch).
    pub a_ns: Vec<f64>,
    /// B's per-call time (ns) in each round.
    pub b_ns: Vec<f64>,
    /// A / B in each round.
    pub ratios: Vec<f64>,
}

impl Measured {
    fn sorted(v: &[f64]) -> Vec<f64> {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s
    }

    fn median_of(v: &[f64]) -> f64 {
        let s = Self::sorted(v);
        let n = s.len();
        if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        }
    }

    /// The median ratio over the rounds.
    pub fn median(&self) -> f64 {
        Self::median_of(&self.ratios)
    }
    /// The smallest and largest ratio of a round.
    pub fn min_max(&self) -> (f64, f64) {
        let s = Self::sorted(&self.ratios);
        (s[0], s[s.len() - 1])
    }
    /// A's median per-call time (ns).
    pub fn a_median_ns(&self) -> f64 {
        Self::median_of(&self.a_ns)
    }
    /// B's median per-call time (ns).
    pub fn b_median_ns(&self) -> f64 {
        Self::median_of(&self.b_ns)
    }
}

/// Measures A against B by alternation (see the module docs).
pub fn alternate(plan: Plan, a: &mut Side<'_>, b: &mut Side<'_>) -> Measured {
    assert!(plan.rounds >= 1 && plan.pairs >= 1);
    // Warm both (caches, lazily started clock thread, allocator), then calibrate.
    a.calibrate(plan.batch / 4);
    b.calibrate(plan.batch / 4);
    let na = a.calibrate(plan.batch);
    let nb = b.calibrate(plan.batch);
    let mut m = Measured {
        a_ns: Vec::with_capacity(plan.rounds),
        b_ns: Vec::with_capacity(plan.rounds),
        ratios: Vec::with_capacity(plan.rounds),
    };
    for _ in 0..plan.rounds {
        let (mut best_a, mut best_b) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..plan.pairs {
            best_a = best_a.min(a.per_call_ns(na));
            best_b = best_b.min(b.per_call_ns(nb));
        }
        m.a_ns.push(best_a);
        m.b_ns.push(best_b);
        m.ratios.push(best_a / best_b);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_range_of_known_ratios() {
        let m = Measured {
            a_ns: vec![2.0, 4.0, 3.0, 5.0],
            b_ns: vec![1.0, 1.0, 1.0, 1.0],
            ratios: vec![2.0, 4.0, 3.0, 5.0],
        };
        assert_eq!(m.median(), 3.5);
        assert_eq!(m.min_max(), (2.0, 5.0));
        assert_eq!(m.a_median_ns(), 3.5);
    }

    /// A side whose batches take a virtual `per_call` nanoseconds per call, and whose batch
    /// number `k` (for every `k` in `stalled`) is stalled by `stall` as if it had lost the
    /// CPU: no wall clock is read, so load cannot change what the test sees. (Speed itself is
    /// measured in the `ratios` benchmark, never asserted by a test.)
    fn virtual_side(
        name: &'static str,
        per_call: u64,
        stalled: &'static [usize],
        stall: Duration,
    ) -> Side<'static> {
        let mut batch = 0usize;
        Side::custom(name, move |n| {
            batch += 1;
            let t = Duration::from_nanos(per_call * n);
            if stalled.contains(&batch) {
                t + stall
            } else {
                t
            }
        })
    }

    #[test]
    fn a_side_that_does_twice_the_work_measures_twice() {
        let plan = Plan {
            rounds: 5,
            pairs: 2,
            batch: Duration::from_millis(4),
        };
        let mut a = virtual_side("double", 400, &[], Duration::ZERO);
        let mut b = virtual_side("single", 200, &[], Duration::ZERO);
        let m = alternate(plan, &mut a, &mut b);
        assert_eq!(m.ratios.len(), 5);
        assert_eq!(m.median(), 2.0);
        assert_eq!(m.a_median_ns(), 400.0);
        assert_eq!(m.b_median_ns(), 200.0);
    }

    /// A batch that lost the CPU is slower, never faster: each round keeps each side's
    /// fastest batch, so a stall in one batch of a round of two pairs does not move the
    /// ratio. At 400 ns a call, calibration takes this side's first 7 batches (64, 256 and
    /// 1024 calls for the 1 ms warm-up target, 64 to 4096 for the 4 ms one: a batch must reach
    /// 1/8 of the target); rounds then take batches 8-9, 10-11 and 12-13, and one batch of
    /// each is stalled.
    #[test]
    fn a_stalled_batch_does_not_move_a_round() {
        let plan = Plan {
            rounds: 3,
            pairs: 2,
            batch: Duration::from_millis(4),
        };
        let mut a = virtual_side("double", 400, &[8, 11, 12], Duration::from_millis(50));
        let mut b = virtual_side("single", 200, &[], Duration::ZERO);
        let m = alternate(plan, &mut a, &mut b);
        assert_eq!(m.ratios, vec![2.0, 2.0, 2.0]);
    }
}
