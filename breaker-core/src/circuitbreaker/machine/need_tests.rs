use super::*;

/// The integer thresholds agree with the float comparison for every count and a spread
/// of thresholds, including ones that sit exactly on a rate.
#[test]
fn smallest_reaching_matches_the_float_rule() {
    let thresholds = [
        0.5f32, 1.0, 10.0, 12.5, 25.0, 33.333332, 33.333336, 49.99, 50.0, 50.01, 66.66667, 70.0,
        99.0, 99.99, 100.0,
    ];
    for calls in 1..=300u32 {
        for &thr in &thresholds {
            let need = smallest_reaching(calls, thr);
            for k in 0..=calls {
                assert_eq!(
                    k >= need,
                    rate(k, calls) >= thr,
                    "calls {calls}, threshold {thr}, k {k}"
                );
            }
        }
    }
}
