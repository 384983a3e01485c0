use super::*;

/// `try_record_quiet` (falling back to `on_outcome`) leaves the machine exactly
/// where `on_outcome` alone does: same state, metrics and events, step by step, over
/// random outcomes, durations, window sizes and thresholds, through trips and recoveries.
#[test]
fn quiet_closed_path_matches_on_outcome() {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut fast_taken = 0u32;
    for _ in 0..300 {
        let size = rng.i64(1..=40);
        let config = Arc::new(
            CircuitBreakerConfig::builder()
                .sliding_window_size(size)
                .minimum_number_of_calls(rng.i64(1..=50))
                .failure_rate_threshold(rng.f32() * 99.0 + 1.0)
                .slow_call_rate_threshold(rng.f32() * 99.0 + 1.0)
                .slow_call_duration_threshold(Duration::from_millis(10))
                .permitted_number_of_calls_in_half_open_state(rng.i64(1..=5))
                .wait_duration_in_open_state(Duration::from_millis(5))
                .build()
                .unwrap(),
        );
        let mut now = 1_700_000_000_000_000_000u64;
        let mut a = Machine::new(config.clone(), now);
        let mut b = Machine::new(config.clone(), now);
        a.set_quiet(true);
        b.set_quiet(true);
        for step in 0..400 {
            now += rng.u64(0..3_000_000);
            let (mut sa, mut sb) = (EventSink::default(), EventSink::default());
            let ra = a.try_acquire(now, &mut sa);
            let rb = b.try_acquire(now, &mut sb);
            assert_eq!(ra, rb);
            if let Ok(ga) = ra {
                let outcome = match rng.u8(0..10) {
                    0..=2 => Outcome::Failure,
                    3 => Outcome::Ignored,
                    _ => Outcome::Success,
                };
                let elapsed = Duration::from_millis(rng.u64(0..15));
                if outcome != Outcome::Ignored
                    && a.try_record_quiet(outcome == Outcome::Failure, elapsed, ga, now)
                {
                    fast_taken += 1;
                } else {
                    a.on_outcome(outcome, elapsed, None, ga, now, &mut sa);
                }
                b.on_outcome(outcome, elapsed, None, ga, now, &mut sb);
            }
            assert_eq!(
                sa.iter().collect::<Vec<_>>(),
                sb.iter().collect::<Vec<_>>(),
                "step {step}"
            );
            assert_eq!(a.state(), b.state(), "step {step}");
            let (mut s1, mut s2) = (EventSink::default(), EventSink::default());
            let (ma, mb) = (a.metrics(now, &mut s1), b.metrics(now, &mut s2));
            assert_eq!(format!("{ma:?}"), format!("{mb:?}"), "step {step}");
            if rng.u8(0..50) == 0 {
                // A threshold change keeps the window: the fast path must not use the
                // old integer thresholds.
                let c = Arc::new(
                    CircuitBreakerConfig::builder()
                        .sliding_window_size(size)
                        .failure_rate_threshold(rng.f32() * 99.0 + 1.0)
                        .slow_call_duration_threshold(Duration::from_millis(10))
                        .wait_duration_in_open_state(Duration::from_millis(5))
                        .build()
                        .unwrap(),
                );
                a.reconfigure(c.clone(), now);
                b.reconfigure(c, now);
            }
        }
    }
    assert!(fast_taken > 10_000, "fast path taken {fast_taken} times");
}
