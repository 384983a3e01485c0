//! Property test: random sequences of calls and clock moves against a small reference model
//! of Resilience4j's CLOSED / OPEN / HALF_OPEN cycle with a count window.
//!
//! The model is written from the rules in the spec, independently of the implementation:
//! a window of the last N outcomes, rate = failures * 100 / calls in f32, `>=` against the
//! threshold once min(minimumNumberOfCalls, N) calls are in; OPEN admits strictly after the
//! wait; HALF_OPEN admits `permitted` calls and decides after min(minimumNumberOfCalls,
//! permitted) of them.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use breaker_core::{CircuitBreaker, CircuitBreakerConfig, ManualClock, State};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// A call that completes at once with a failure (true) or success (false).
    Call(bool),
    /// The clock moves forward by this many ms.
    Advance(u64),
}

#[derive(Debug)]
enum ModelState {
    Closed(VecDeque<bool>),
    Open { deadline: u64 },
    HalfOpen { permits: u32, outcomes: Vec<bool> },
}

struct Model {
    size: usize,
    min_calls: usize,
    threshold: f32,
    wait: u64,
    permitted: u32,
    now: u64,
    state: ModelState,
}

fn rate(outcomes: &[bool]) -> f32 {
    let failed = outcomes.iter().filter(|f| **f).count();
    failed as f32 * 100.0 / outcomes.len() as f32
}

impl Model {
    /// Returns whether the call was permitted.
    fn call(&mut self, failed: bool) -> bool {
        if let ModelState::Open { deadline } = self.state {
            if self.now > deadline {
                self.state = ModelState::HalfOpen {
                    permits: self.permitted,
                    outcomes: Vec::new(),
                };
            } else {
                return false;
            }
        }
        let now = self.now;
        match &mut self.state {
            ModelState::Closed(w) => {
                w.push_back(failed);
                if w.len() > self.size {
                    w.pop_front();
                }
                let v: Vec<bool> = w.iter().copied().collect();
                if v.len() >= self.min_calls.min(self.size) && rate(&v) >= self.threshold {
                    self.state = ModelState::Open {
                        deadline: now + self.wait,
                    };
                }
                true
            }
            ModelState::HalfOpen { permits, outcomes } => {
                if *permits == 0 {
                    return false;
                }
                *permits -= 1;
                outcomes.push(failed);
                if outcomes.len() >= self.min_calls.min(self.permitted as usize) {
                    self.state = if rate(outcomes) >= self.threshold {
                        ModelState::Open {
                            deadline: now + self.wait,
                        }
                    } else {
                        ModelState::Closed(VecDeque::new())
                    };
                }
                true
            }
            ModelState::Open { .. } => unreachable!(),
        }
    }

    fn state(&self) -> State {
        match self.state {
            ModelState::Closed(_) => State::Closed,
            ModelState::Open { .. } => State::Open,
            ModelState::HalfOpen { .. } => State::HalfOpen,
        }
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<bool>().prop_map(Op::Call),
        1 => (0u64..3000).prop_map(Op::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn breaker_agrees_with_the_model(
        size in 1usize..12,
        min_calls in 1usize..15,
        threshold in 1u32..=100,
        wait in 1u64..2000,
        permitted in 1u32..5,
        ops in prop::collection::vec(op(), 1..150),
    ) {
        let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
        let config = CircuitBreakerConfig::builder()
            .sliding_window_size(size as i64)
            .minimum_number_of_calls(min_calls as i64)
            .failure_rate_threshold(threshold as f32)
            .wait_duration_in_open_state(Duration::from_millis(wait))
            .permitted_number_of_calls_in_half_open_state(permitted as i64)
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap();
        let cb = CircuitBreaker::new("model", config);
        let mut model = Model {
            size, min_calls, threshold: threshold as f32, wait, permitted,
            now: 0, state: ModelState::Closed(VecDeque::new()),
        };
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Op::Advance(ms) => {
                    model.now += ms;
                    clock.advance(Duration::from_millis(ms));
                }
                Op::Call(failed) => {
                    let expected = model.call(failed);
                    let got = match cb.try_acquire_permission() {
                        Ok(p) => { if failed { p.on_error() } else { p.on_success() }; true }
                        Err(_) => false,
                    };
                    prop_assert_eq!(got, expected, "permitted differs at op {}", i);
                }
            }
            prop_assert_eq!(cb.state(), model.state(), "state differs after op {} ({:?})", i, op);
        }
    }
}
