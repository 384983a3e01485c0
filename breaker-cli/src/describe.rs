//! One line naming the settings that decide when a breaker opens and closes.

use breaker_core::{CircuitBreakerConfig, SlidingWindowType};

/// The `minimumNumberOfCalls` a breaker uses: Resilience4j's `CircuitBreakerConfig` builder
/// stores `min(minimumNumberOfCalls, slidingWindowSize)` for a COUNT_BASED window (a window of
/// 5 calls never holds 100); a TIME_BASED window uses the value as written.
pub fn effective_minimum(c: &CircuitBreakerConfig) -> u32 {
    match c.sliding_window_type() {
        SlidingWindowType::CountBased => c.minimum_number_of_calls().min(c.sliding_window_size()),
        SlidingWindowType::TimeBased => c.minimum_number_of_calls(),
    }
}

/// `minimumNumberOfCalls N`, followed by the rule when the effective value differs from the
/// configured one.
fn minimum_text(c: &CircuitBreakerConfig) -> String {
    let effective = effective_minimum(c);
    if effective == c.minimum_number_of_calls() {
        format!("minimumNumberOfCalls {effective}")
    } else {
        format!(
            "minimumNumberOfCalls {effective}: {} configured, capped at slidingWindowSize for a COUNT_BASED window",
            c.minimum_number_of_calls()
        )
    }
}

/// E.g. `COUNT_BASED window of 20 calls (minimumNumberOfCalls 20), failureRateThreshold 50 %,
/// waitDurationInOpenState 5000 ms, permittedNumberOfCallsInHalfOpenState 5`. The minimum shown
/// is the effective one ([`effective_minimum`]).
pub fn config_line(c: &CircuitBreakerConfig) -> String {
    let window = match c.sliding_window_type() {
        SlidingWindowType::CountBased => format!("window of {} calls", c.sliding_window_size()),
        SlidingWindowType::TimeBased => format!("window of {} s", c.sliding_window_size()),
    };
    let mut s = format!(
        "{} {window} ({}), failureRateThreshold {} %, \
         waitDurationInOpenState {} ms, permittedNumberOfCallsInHalfOpenState {}",
        c.sliding_window_type().name(),
        minimum_text(c),
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
