//! The breaker's events: the live transition log (with the reason for each move), the
//! optional JSON-lines history, and counts the summary needs.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use resilience4rs::{java_float, CircuitBreaker, CircuitBreakerEvent, EventKind, State};

use super::flags::show;
use super::stats::Epoch;
use super::style;

/// One state transition.
#[derive(Clone, Debug)]
pub struct Transition {
    /// When.
    pub t: Duration,
    /// From.
    pub from: State,
    /// To.
    pub to: State,
    /// Why, in words.
    pub reason: String,
    /// The failure rate that tripped it, if a rate did.
    pub failure_rate: Option<f32>,
    /// For a move to OPEN: how long calls will be rejected.
    pub open_wait: Option<Duration>,
}

#[derive(Default)]
struct Trial {
    ok: u32,
    failed: u32,
}

/// Everything the breaker published, as the example needs it.
pub struct EventLog {
    epoch: Epoch,
    breaker: CircuitBreaker,
    transitions: Mutex<Vec<Transition>>,
    last_rate: Mutex<Option<f32>>,
    trial: Mutex<Trial>,
    jsonl: Option<Mutex<File>>,
    /// Calls recorded as failures.
    pub errors: AtomicU64,
    /// Calls whose error the config ignores (`ignoreExceptions`).
    pub ignored: AtomicU64,
    /// Calls recorded as successes.
    pub successes: AtomicU64,
    /// Calls rejected.
    pub not_permitted: AtomicU64,
}

impl EventLog {
    /// Subscribes to `breaker`; transitions are printed as they happen and, with `jsonl`,
    /// written there as JSON lines.
    pub fn attach(breaker: &CircuitBreaker, epoch: Epoch, jsonl: Option<File>) -> Arc<EventLog> {
        let log = Arc::new(EventLog {
            epoch,
            breaker: breaker.clone(),
            transitions: Mutex::default(),
            last_rate: Mutex::default(),
            trial: Mutex::default(),
            jsonl: jsonl.map(Mutex::new),
            errors: AtomicU64::new(0),
            ignored: AtomicU64::new(0),
            successes: AtomicU64::new(0),
            not_permitted: AtomicU64::new(0),
        });
        let sink = log.clone();
        breaker.subscribe(move |e| sink.on_event(e));
        log
    }

    /// The transitions so far.
    pub fn transitions(&self) -> Vec<Transition> {
        self.transitions.lock().unwrap().clone()
    }

    /// The state at `t` (CLOSED before the first transition).
    pub fn state_at(&self, t: Duration) -> State {
        let all = self.transitions.lock().unwrap();
        all.iter()
            .rev()
            .find(|x| x.t <= t)
            .map_or(State::Closed, |x| x.to)
    }

    fn on_event(&self, e: &CircuitBreakerEvent) {
        match e.kind {
            EventKind::Success { .. } => {
                self.successes.fetch_add(1, Ordering::Relaxed);
                self.trial.lock().unwrap().ok += 1;
            }
            EventKind::Error { .. } => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                self.trial.lock().unwrap().failed += 1;
            }
            EventKind::IgnoredError { .. } => {
                self.ignored.fetch_add(1, Ordering::Relaxed);
            }
            EventKind::NotPermitted => {
                self.not_permitted.fetch_add(1, Ordering::Relaxed);
            }
            EventKind::FailureRateExceeded { failure_rate } => {
                *self.last_rate.lock().unwrap() = Some(failure_rate);
            }
            EventKind::StateTransition { from, to } => self.on_transition(from, to),
            _ => {}
        }
    }

    fn on_transition(&self, from: State, to: State) {
        let t = self.epoch.elapsed();
        let config = self.breaker.config();
        let threshold = java_float(config.failure_rate_threshold());
        let trial = std::mem::take(&mut *self.trial.lock().unwrap());
        let trials = trial.ok + trial.failed;
        let mut failure_rate = None;
        let mut open_wait = None;
        let mut reason = match (from, to) {
            (State::Closed, State::Open) => {
                let rate = self.last_rate.lock().unwrap().take();
                failure_rate = rate;
                match rate {
                    Some(r) => format!("failure rate {}% >= {threshold}%", java_float(r)),
                    None => "slow-call rate over its threshold".to_string(),
                }
            }
            (State::HalfOpen, State::Open) => {
                let r = if trials == 0 {
                    0.0
                } else {
                    trial.failed as f32 * 100.0 / trials as f32
                };
                failure_rate = Some(r);
                format!("{} of {trials} trial calls failed", trial.failed)
            }
            (State::Open, State::HalfOpen) => {
                let opened = self.transitions.lock().unwrap().last().map(|x| x.t);
                let after = opened.map(|o| format!("after {:.2}s open; ", (t - o).as_secs_f64()));
                format!(
                    "{}letting {} trial calls through",
                    after.unwrap_or_default(),
                    config.permitted_number_of_calls_in_half_open_state()
                )
            }
            (State::HalfOpen, State::Closed) => {
                format!("{} of {trials} trial calls succeeded", trial.ok)
            }
            _ => String::new(),
        };
        if to == State::Open {
            let wait = config.wait_duration_in_open_state();
            open_wait = Some(wait);
            reason.push_str(&format!("; rejecting calls for {}", show(wait)));
        }
        let line = format!(
            "{} {} {} -> {} ({reason})",
            style::cyan(&format!("t={:.2}s", t.as_secs_f64())),
            style::bold(self.breaker.name()),
            style::state(from),
            style::state(to),
        );
        println!("{line}");
        let transition = Transition {
            t,
            from,
            to,
            reason,
            failure_rate,
            open_wait,
        };
        self.write_json(&transition);
        self.transitions.lock().unwrap().push(transition);
    }

    fn write_json(&self, x: &Transition) {
        let Some(file) = &self.jsonl else { return };
        let json = serde_json::json!({
            "t_s": round3(x.t.as_secs_f64()),
            "breaker": self.breaker.name(),
            "from": x.from.name(),
            "to": x.to.name(),
            "reason": x.reason,
            "failure_rate": x.failure_rate,
            "open_wait_s": x.open_wait.map(|d| d.as_secs_f64()),
        });
        let mut f = file.lock().unwrap();
        if let Err(e) = writeln!(f, "{json}") {
            eprintln!("cannot write the events file: {e}");
        }
    }
}

/// Rounds to milliseconds for the JSON output.
pub fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}
