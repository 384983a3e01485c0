//! One line naming the settings that decide when a breaker opens and closes.

use breaker_core::{CircuitBreakerConfig, SlidingWindowType};

/// E.g. `COUNT_BASED window of 20 calls (minimumNumberOfCalls 20), failureRateThreshold 50 %,
/// waitDurationInOpenState 5000 ms, permittedNumberOfCallsInHalfOpenState 5`.
pub fn config_line(c: &CircuitBreakerConfig) -> String {
    let window = match c.sliding_window_type() {
        SlidingWindowType::CountBased => format!("window of {} calls", c.sliding_window_size()),
        SlidingWindowType::TimeBased => format!("window of {} s", c.sliding_window_size()),
    };
    let mut s = format!(
        "{} {window} (minimumNumberOfCalls {}), failureRateThreshold {} %, \
         waitDurationInOpenState {} ms, permittedNumberOfCallsInHalfOpenState {}",
        c.sliding_window_type().name(),
        c.minimum_number_of_calls(),
        c.failure_rate_threshold(),
        c.wait_duration_in_open_state().as_millis(),
        c.permitted_number_of_calls_in_half_open_state(),
    );
    if c.slow_call_rate_threshold() < 100.0 {
        s.push_str(&format!(
            ", slowCallRateThreshold {} % over {} ms",
            c.slow_call_rate_threshold(),
            c.slow_call_duration_threshold().as_millis()
        ));
    }
    s
}
