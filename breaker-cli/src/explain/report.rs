//! The results of `breaker explain`: text for people, one JSON object for tools.

use std::fmt::Write;
use std::time::Duration;

use breaker_core::{CircuitBreakerConfig, SlidingWindowType};
use serde_json::{json, Map, Value};

use super::binomial::{failures_to_reach, significant};
use super::probe::Detection;
use super::retry_budget::{BudgetFit, RetryPlan, MOST_ATTEMPTS_COUNTED};
use super::trips::Measured;

/// Accidental trips at one error rate.
pub struct TripRow {
    /// Share of calls that fail.
    pub error_rate: f64,
    /// Calls a second.
    pub calls_per_s: f64,
    /// The binomial estimate, trips a day.
    pub binomial: f64,
    /// The simulated figure, when days were simulated.
    pub simulated: Option<Measured>,
}

/// What `explain` found about retries for one instance.
pub enum RetryFinding {
    /// No `resilience4j.retry` section.
    NoRetry,
    /// A retry whose worst case cannot be computed, and why.
    Unbounded(String),
    /// The retry of this instance, and its fit in `--budget`.
    Plan {
        /// The retry and time limiter.
        plan: RetryPlan,
        /// `--budget`.
        budget: Option<Duration>,
        /// The plan against the budget.
        fit: Option<BudgetFit>,
    },
}

/// Everything explained about one instance.
pub struct Explained {
    /// Its name.
    pub name: String,
    /// Its config.
    pub config: CircuitBreakerConfig,
    /// Failures to open, detection time.
    pub detection: Detection,
    /// Accidental trips, one row per error rate.
    pub trips: Vec<TripRow>,
    /// Retry.
    pub retry: RetryFinding,
}

fn pct(p: f64) -> String {
    let v = p * 100.0;
    if v == v.round() {
        format!("{v:.0} %")
    } else {
        format!("{v} %")
    }
}

/// A rate a day to `digits` significant digits; tiny ones in scientific notation.
fn per_day(x: f64, digits: i32) -> String {
    let x = significant(x, digits);
    if x == 0.0 {
        "0".into()
    } else if x.abs() < 1e-4 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

fn days_text(days: f64) -> String {
    if days == 1.0 {
        "1 day".into()
    } else {
        format!("{days} days")
    }
}

fn simulated_text(m: &Option<Measured>) -> String {
    match m {
        None => "-".into(),
        Some(m) if m.trips == 0 => format!(
            "0 (none in {}: fewer than {} a day at 95 % confidence)",
            days_text(m.days),
            per_day(m.upper_bound_if_none(), 2)
        ),
        Some(m) => format!(
            "{} ({} trips in {})",
            per_day(m.per_day(), 4),
            m.trips,
            days_text(m.days)
        ),
    }
}

fn retry_json(r: &RetryFinding) -> Value {
    match r {
        RetryFinding::NoRetry => Value::Null,
        RetryFinding::Unbounded(why) => json!({"loaded": false, "reason": why}),
        RetryFinding::Plan { plan, budget, fit } => json!({
            "loaded": true,
            "max_attempts": plan.max_attempts,
            "worst_case_ms": plan.worst_case_ms(plan.max_attempts),
            "budget_ms": budget.map(|b| b.as_millis() as u64),
            "fits_budget": fit.and_then(|f| budget.and_then(|b| f.worst_case_ms.map(|w| w <= b.as_millis() as u64))),
            "most_attempts_in_budget": fit.and_then(|f| f.most_attempts_in_budget),
        }),
    }
}

/// The `--json` object.
pub fn json(explained: &[Explained], calls_per_s: f64, days: f64) -> Value {
    let mut instances = Map::new();
    for e in explained {
        let trips: Vec<Value> = e
            .trips
            .iter()
            .map(|t| {
                json!({
                    "error_rate": t.error_rate,
                    "calls_per_s": t.calls_per_s,
                    "binomial": significant(t.binomial, 6),
                    "simulated": t.simulated.map(|m| significant(m.per_day(), 6)),
                    "simulated_trips": t.simulated.map(|m| m.trips),
                    "simulated_days": t.simulated.map(|m| m.days),
                })
            })
            .collect();
        let d = &e.detection;
        instances.insert(
            e.name.clone(),
            json!({
                "config": crate::describe::config_line(&e.config),
                "failures_to_open": d.failures_to_open,
                "failures_to_open_fresh": d.failures_to_open_fresh,
                "detection_s": d.detection_s.map(|s| (s * 1e6).round() / 1e6),
                "false_trips_per_day": trips,
                "retry": retry_json(&e.retry),
            }),
        );
    }
    json!({"calls_per_s": calls_per_s, "days_simulated": days, "instances": instances})
}

/// The text report.
pub fn text(explained: &[Explained], calls_per_s: f64, days: f64) -> String {
    let mut out = String::new();
    for e in explained {
        instance_text(&mut out, e, calls_per_s, days);
    }
    out
}

fn instance_text(out: &mut String, e: &Explained, calls_per_s: f64, days: f64) {
    let c = &e.config;
    let d = &e.detection;
    let _ = writeln!(
        out,
        "Circuit breaker '{}': {}",
        e.name,
        crate::describe::config_line(c)
    );
    let n = |v: Option<u64>| v.map_or("never".into(), |v| v.to_string());
    let _ = writeln!(
        out,
        "  Failures in a row that open it: {} when its window is full of successes, {} from a fresh start.",
        n(d.failures_to_open),
        n(d.failures_to_open_fresh)
    );
    match d.detection_s {
        Some(s) => {
            let _ = writeln!(
                out,
                "  At {calls_per_s} calls/s, a dependency that fails every call is noticed (OPEN) {s:.3} s after it breaks, plus the time a failing call takes to fail."
            );
        }
        None => {
            let _ = writeln!(
                out,
                "  At {calls_per_s} calls/s, a dependency that fails every call never opens it."
            );
        }
    }
    let _ = writeln!(
        out,
        "  Opened by accident on a healthy dependency, trips a day at {calls_per_s} calls/s:"
    );
    let sim_head = if days > 0.0 {
        "simulated through the real sliding window".to_string()
    } else {
        "simulated (--days 0: skipped)".into()
    };
    let _ = writeln!(
        out,
        "    {:>8}  {:>18}  {}",
        "errors", "binomial estimate", sim_head
    );
    for t in &e.trips {
        let _ = writeln!(
            out,
            "    {:>8}  {:>18}  {}",
            pct(t.error_rate),
            per_day(t.binomial, 6),
            simulated_text(&t.simulated)
        );
    }
    let k = match c.sliding_window_type() {
        SlidingWindowType::CountBased => {
            failures_to_reach(c.sliding_window_size(), c.failure_rate_threshold())
        }
        SlidingWindowType::TimeBased => None,
    };
    let size = c.sliding_window_size();
    if let Some(k) = k {
        let _ = writeln!(
            out,
            "    The estimate takes errors as independent and windows as disjoint: P(at least {k} of {size} calls fail) x {} windows a day.",
            per_day(calls_per_s * super::binomial::DAY_S / f64::from(size), 6)
        );
    } else {
        let _ = writeln!(
            out,
            "    The estimate takes errors as independent and windows as disjoint: a window of {size} s holds about {} calls at this rate, {} windows a day.",
            (f64::from(size) * calls_per_s).round(),
            per_day(super::binomial::DAY_S / f64::from(size), 6)
        );
    }
    out.push_str(
        "    The real window slides (every call ends a new window), so it trips more often; but it cannot trip\n    while OPEN, so a breaker that trips all the time opens less often than estimated.\n",
    );
    retry_text(out, &e.retry);
    out.push('\n');
}

fn retry_text(out: &mut String, r: &RetryFinding) {
    match r {
        RetryFinding::NoRetry => {}
        RetryFinding::Unbounded(why) => {
            let _ = writeln!(out, "  Retry: no worst-case time: {why}.");
        }
        RetryFinding::Plan { plan, budget, fit } => {
            let worst = plan.worst_case_ms(plan.max_attempts).map_or(
                "unbounded (no time limiter cuts the attempts)".into(),
                |w| format!("{w} ms"),
            );
            let _ = writeln!(
                out,
                "  Retry: {} attempts take at worst {worst} (timeouts plus waits, backoff capped).",
                plan.max_attempts
            );
            if let (Some(b), Some(f)) = (budget, fit) {
                let most = match f.most_attempts_in_budget {
                    None => "unbounded attempts never fit".to_string(),
                    Some(MOST_ATTEMPTS_COUNTED) => {
                        format!("{MOST_ATTEMPTS_COUNTED} or more attempts fit")
                    }
                    Some(m) => format!("at most {m} attempts fit"),
                };
                let verdict = match f.worst_case_ms {
                    Some(w) if w <= b.as_millis() as u64 => "within",
                    _ => "OVER",
                };
                let _ = writeln!(
                    out,
                    "    Budget {}: {verdict} budget; {most}.",
                    humantime::format_duration(*b)
                );
            }
        }
    }
}
