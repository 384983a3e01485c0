//! The simple estimate of accidental trips: independent errors, disjoint windows.
//!
//! A window of `n` calls trips when at least `k` of them fail, `k` the smallest count whose
//! failure rate reaches `failureRateThreshold` (computed in `f32` as the state machine does:
//! `k * 100 / n >= threshold`). With errors independent at probability `p`, a window trips
//! with probability `P(X >= k)`, `X ~ Binomial(n, p)`; a day holds `calls per day / n`
//! disjoint windows. (The real window slides, so it trips more often; see `trips.rs`.)

/// Seconds in a day.
pub const DAY_S: f64 = 86_400.0;

/// The fewest failures among `n` recorded calls whose failure rate reaches `threshold`
/// (percent), computed as the state machine computes rates: in `f32`, `k * 100 / n >=
/// threshold`. `None` when `n` is 0.
pub fn failures_to_reach(n: u32, threshold: f32) -> Option<u32> {
    (1..=n).find(|&k| k as f32 * 100.0 / n as f32 >= threshold)
}

/// `P(X >= k)` for `X ~ Binomial(n, p)`: the sum of the terms `C(n, i) p^i (1-p)^(n-i)`
/// for `i` in `k..=n`, each computed through logarithms so large windows neither overflow
/// nor underflow before the sum.
pub fn upper_tail(n: u32, k: u32, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    // ln C(n, i), built up from ln C(n, 0) = 0.
    let mut ln_c = 0.0;
    let mut sum = 0.0;
    for i in 1..=n {
        ln_c += f64::from(n - i + 1).ln() - f64::from(i).ln();
        if i >= k {
            sum += (ln_c + f64::from(i) * lp + f64::from(n - i) * lq).exp();
        }
    }
    sum.min(1.0)
}

/// The estimate for a window of `n` calls and `threshold` (percent), at `calls_per_s` calls
/// a second of which a share `p` fails: `P(X >= k) x calls per day / n` trips a day. 0 when
/// the window can never reach the threshold.
pub fn trips_per_day(n: u32, threshold: f32, p: f64, calls_per_s: f64) -> f64 {
    match failures_to_reach(n, threshold) {
        Some(k) => upper_tail(n, k, p) * calls_per_s * DAY_S / f64::from(n),
        None => 0.0,
    }
}

/// `x` to `digits` significant digits (for printing and JSON: `11.0056`).
pub fn significant(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_as_the_machine_computes_them() {
        assert_eq!(failures_to_reach(10, 50.0), Some(5));
        assert_eq!(failures_to_reach(20, 50.0), Some(10));
        assert_eq!(failures_to_reach(5, 20.0), Some(1));
        assert_eq!(failures_to_reach(3, 100.0), Some(3));
        // 1 * 100 / 3 = 33.333332 in f32, below 33.333336 (the f32 nearest 33.333336):
        // 2 failures are needed.
        assert_eq!(failures_to_reach(3, 33.333336), Some(2));
        assert_eq!(failures_to_reach(0, 50.0), None);
    }

    #[test]
    fn tails_by_hand() {
        // P(X >= 5), n = 10, p = 0.05: the sum over i = 5..10 of C(10, i) 0.05^i 0.95^(10-i)
        // = 6.093_525e-5 + 2.672_599e-6 + 8.037_891e-8 + 1.586_426e-9 + 1.855e-11 + 9.8e-14
        // = 6.368_983e-5.
        let t = upper_tail(10, 5, 0.05);
        assert!((t - 6.368_983e-5).abs() < 1e-11, "{t}");
        // P(X >= 1) = 1 - 0.99^5.
        assert!((upper_tail(5, 1, 0.01) - (1.0 - 0.99f64.powi(5))).abs() < 1e-15);
        assert_eq!(upper_tail(10, 0, 0.3), 1.0);
        assert_eq!(upper_tail(10, 11, 0.3), 0.0);
        assert_eq!(upper_tail(10, 3, 0.0), 0.0);
        // A window of 100 000 calls does not underflow: mean 5000, the tail from 5000 is
        // about a half.
        let big = upper_tail(100_000, 5000, 0.05);
        assert!((0.49..0.51).contains(&big), "{big}");
    }

    #[test]
    fn issue_15_reference_figures() {
        // 20 calls/s = 1 728 000 calls a day.
        // Window 10, 50 %, 5 % errors: 6.368_983e-5 x 172 800 windows = 11.005_603.
        assert_eq!(significant(trips_per_day(10, 50.0, 0.05, 20.0), 6), 11.0056);
        // Window 20, 50 %, 5 %: P(X >= 10) = 1.134_072e-8 x 86 400 windows = 0.000_979_84.
        let w20 = trips_per_day(20, 50.0, 0.05, 20.0);
        assert!((w20 - 0.000_979_84).abs() < 1e-8, "{w20}");
        // Window 5, 20 %, 1 %: (1 - 0.99^5) = 0.049_009_950_1 x 345 600 windows = 16 937.84.
        let w5 = trips_per_day(5, 20.0, 0.01, 20.0);
        assert!((w5 - 0.049_009_950_1 * 345_600.0).abs() < 1e-6, "{w5}");
        assert_eq!(significant(w5, 3), 16_900.0);
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(11.005_612, 6), 11.0056);
        assert_eq!(significant(0.000_979_6, 2), 0.00098);
        assert_eq!(significant(16_938.4, 6), 16_938.4);
        assert_eq!(significant(0.0, 6), 0.0);
    }
}
