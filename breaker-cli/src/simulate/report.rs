//! The results of `breaker simulate`: text for people, one JSON object for tools.

use std::fmt::Write;
use std::time::Duration;

use breaker_core::State;
use serde_json::{json, Value};

use super::scenario::Scenario;
use super::stats::{Figures, Stats};
use super::svg::Picture;
use super::timeline::Timeline;
use crate::units::Span;

const NS: f64 = 1e9;
/// Longer runs print only the interesting seconds of the per-second table.
const MAX_TABLE_ROWS: usize = 300;

/// One simulated run.
pub struct Report<'a> {
    /// The circuit breaker's name.
    pub instance: &'a str,
    /// Its deciding settings, as one line.
    pub config_line: String,
    /// The traffic and outages.
    pub scenario: &'a Scenario,
    /// The seed of the random numbers.
    pub seed: u64,
    /// What callers saw.
    pub stats: Stats,
    /// The breaker's states.
    pub timeline: Timeline,
    /// Wall-clock time the simulation took.
    pub wall: Duration,
}

/// `x` rounded to `d` decimals, for JSON.
fn round(x: f64, d: i32) -> f64 {
    let f = 10f64.powi(d);
    (x * f).round() / f
}

fn secs(ns: u64) -> f64 {
    ns as f64 / NS
}

fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

fn opt(v: Option<f64>, d: i32) -> Value {
    v.map_or(Value::Null, |v| json!(round(v, d)))
}

fn ms_text(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1} ms"))
}

fn pct_text(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1} %", v * 100.0))
}

fn span_text(o: &Span) -> String {
    format!(
        "{}..{}",
        humantime::format_duration(o.start),
        humantime::format_duration(o.end)
    )
}

/// Timings of one outage.
struct OutageTimes {
    span: Span,
    /// From the outage's start to the first transition into OPEN, seconds.
    open_after_s: Option<f64>,
    /// From the outage's end to the first transition into CLOSED (after an OPEN), seconds.
    closed_after_recovery_s: Option<f64>,
}

impl Report<'_> {
    fn outage_times(&self) -> Vec<OutageTimes> {
        self.scenario
            .outages
            .iter()
            .map(|o| {
                let start = o.start.as_nanos() as u64;
                let end = o.end.as_nanos() as u64;
                let opened = self.timeline.first_into_after(State::Open, start);
                let closed =
                    opened.and_then(|_| self.timeline.first_into_after(State::Closed, end));
                OutageTimes {
                    span: *o,
                    open_after_s: opened.map(|t| secs(t - start)),
                    closed_after_recovery_s: closed.map(|t| secs(t - end)),
                }
            })
            .collect()
    }

    fn traffic_line(&self) -> String {
        let s = self.scenario;
        let mut t = format!(
            "Poisson {}/s for {}, latency {}, {} errors",
            s.rate,
            humantime::format_duration(s.duration),
            s.latency,
            pct_text(Some(s.error_rate))
        );
        for o in &s.outages {
            let _ = write!(
                t,
                "; outage {}: latency {}, {} errors",
                span_text(o),
                s.outage_latency,
                pct_text(Some(s.outage_error_rate))
            );
        }
        let _ = write!(t, "; seed {}", self.seed);
        t
    }

    /// The `--json` object.
    pub fn json(&self) -> Value {
        let o = &self.stats.outage;
        let times = self.outage_times();
        let first = times.first();
        let transitions: Vec<Value> = self
            .timeline
            .transitions
            .iter()
            .map(|t| json!({"t_s": round(secs(t.at_ns), 3), "from": t.from.name(), "to": t.to.name()}))
            .collect();
        let outages: Vec<Value> = times
            .iter()
            .map(|t| {
                json!({
                    "start_s": t.span.start.as_secs_f64(),
                    "end_s": t.span.end.as_secs_f64(),
                    "open_after_outage_s": opt(t.open_after_s, 3),
                    "closed_after_recovery_s": opt(t.closed_after_recovery_s, 3),
                })
            })
            .collect();
        let seconds: Vec<Value> = self
            .stats
            .seconds
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let start = i as u64 * 1_000_000_000;
                let states: Vec<&str> = self
                    .timeline
                    .states_during(start, start + 1_000_000_000)
                    .iter()
                    .map(|s| s.name())
                    .collect();
                json!({
                    "t_s": i,
                    "states": states,
                    "calls": f.calls,
                    "reached_with_breaker": f.reached,
                    "errors_with": f.errors_with,
                    "errors_without": f.errors_without,
                    "mean_latency_ms_with": opt(f.with.mean_ms, 3),
                    "p99_latency_ms_with": opt(f.with.p99_ms, 3),
                    "mean_latency_ms_without": opt(f.without.mean_ms, 3),
                    "p99_latency_ms_without": opt(f.without.p99_ms, 3),
                })
            })
            .collect();
        let t = &self.stats.total;
        json!({
            "instance": self.instance,
            "seed": self.seed,
            "rate_per_s": self.scenario.rate,
            "duration_s": self.scenario.duration.as_secs_f64(),
            "calls": t.calls,
            "calls_reached_with_breaker": t.reached,
            "calls_rejected": t.calls - t.reached,
            "outage_calls": o.calls,
            "reached_with_breaker": o.reached,
            "reached_without_breaker": o.calls,
            "reached_share_with_breaker": opt(share(o.reached, o.calls), 4),
            "reached_share_without_breaker": opt(share(o.calls, o.calls), 4),
            "mean_latency_ms_with": opt(o.with.mean_ms, 3),
            "mean_latency_ms_without": opt(o.without.mean_ms, 3),
            "p99_latency_ms_with": opt(o.with.p99_ms, 3),
            "p99_latency_ms_without": opt(o.without.p99_ms, 3),
            "errors_with": o.errors_with,
            "errors_without": o.errors_without,
            "open_after_outage_s": opt(first.and_then(|t| t.open_after_s), 3),
            "closed_after_recovery_s": opt(first.and_then(|t| t.closed_after_recovery_s), 3),
            "outages": outages,
            "transitions": transitions,
            "seconds": seconds,
            "wall_time_ms": round(self.wall.as_secs_f64() * 1e3, 3),
        })
    }

    /// The text report.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let t = &self.stats.total;
        let _ = writeln!(
            out,
            "Circuit breaker '{}': {}",
            self.instance, self.config_line
        );
        let _ = writeln!(out, "Traffic: {}", self.traffic_line());
        let _ = writeln!(
            out,
            "{} calls simulated in {:.1} ms of wall-clock time.\n",
            t.calls,
            self.wall.as_secs_f64() * 1e3
        );

        out.push_str("State transitions\n");
        if self.timeline.transitions.is_empty() {
            let _ = writeln!(out, "  none: {} throughout", self.timeline.initial);
        }
        for tr in &self.timeline.transitions {
            let _ = writeln!(out, "  {:>9.3} s  {} -> {}", secs(tr.at_ns), tr.from, tr.to);
        }
        out.push('\n');

        if !self.scenario.outages.is_empty() {
            self.outage_text(&mut out);
        }
        let _ = writeln!(
            out,
            "Whole run: {} calls, {} reached the dependency, {} rejected by the breaker; mean latency {} with the breaker, {} without.\n",
            t.calls,
            t.reached,
            t.calls - t.reached,
            ms_text(t.with.mean_ms),
            ms_text(t.without.mean_ms)
        );
        self.table_text(&mut out);
        out
    }

    fn outage_text(&self, out: &mut String) {
        let o = &self.stats.outage;
        let spans: Vec<String> = self.scenario.outages.iter().map(span_text).collect();
        let _ = writeln!(
            out,
            "During the outage ({}): calls made then, with the breaker and without",
            spans.join(", ")
        );
        let row = |out: &mut String, what: &str, a: String, b: String| {
            let _ = writeln!(out, "  {what:<26}{a:>18}{b:>18}");
        };
        row(out, "", "with breaker".into(), "without".into());
        row(out, "calls", o.calls.to_string(), o.calls.to_string());
        row(
            out,
            "reached the dependency",
            format!("{} ({})", o.reached, pct_text(share(o.reached, o.calls))),
            format!("{} ({})", o.calls, pct_text(share(o.calls, o.calls))),
        );
        row(
            out,
            "mean latency",
            ms_text(o.with.mean_ms),
            ms_text(o.without.mean_ms),
        );
        row(
            out,
            "p99 latency",
            ms_text(o.with.p99_ms),
            ms_text(o.without.p99_ms),
        );
        row(
            out,
            "failed for the caller",
            o.errors_with.to_string(),
            o.errors_without.to_string(),
        );
        for t in self.outage_times() {
            let opened = t.open_after_s.map_or("never opened".into(), |s| {
                format!("OPEN {s:.3} s after it began")
            });
            let closed = match (t.open_after_s, t.closed_after_recovery_s) {
                (None, _) => String::new(),
                (Some(_), Some(s)) => format!("; CLOSED {s:.3} s after it ended"),
                (Some(_), None) => "; not CLOSED again before the run ended".into(),
            };
            let _ = writeln!(out, "  Outage {}: {opened}{closed}", span_text(&t.span));
        }
        out.push('\n');
    }

    /// Which seconds the table shows: all of a short run; for a long one, the seconds with
    /// a transition, in an outage or rejecting calls, up to [`MAX_TABLE_ROWS`].
    fn table_rows(&self) -> (Vec<usize>, bool) {
        let n = self.stats.seconds.len();
        if n <= MAX_TABLE_ROWS {
            return ((0..n).collect(), false);
        }
        let rows: Vec<usize> = (0..n)
            .filter(|&i| {
                let f = &self.stats.seconds[i];
                let start = i as u64 * 1_000_000_000;
                f.reached < f.calls
                    || self
                        .timeline
                        .states_during(start, start + 1_000_000_000)
                        .len()
                        > 1
                    || self.scenario.outages.iter().any(|o| {
                        o.contains(Duration::from_secs(i as u64))
                            || o.contains(Duration::from_secs(i as u64 + 1))
                    })
            })
            .take(MAX_TABLE_ROWS)
            .collect();
        (rows, true)
    }

    fn table_text(&self, out: &mut String) {
        let (rows, partial) = self.table_rows();
        if partial {
            let _ = writeln!(
                out,
                "Per second ({} of {} seconds: those with a transition, an outage or rejected calls; --json has every second)",
                rows.len(),
                self.stats.seconds.len()
            );
        } else {
            out.push_str("Per second\n");
        }
        let _ = writeln!(
            out,
            "  {:>7}  {:<22} {:>6} {:>8} {:>8}  {:>21}  {:>21}",
            "second",
            "state",
            "calls",
            "reached",
            "failed",
            "mean ms with/without",
            "p99 ms with/without"
        );
        let num = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
        for i in rows {
            let f: &Figures = &self.stats.seconds[i];
            let start = i as u64 * 1_000_000_000;
            let states: Vec<&str> = self
                .timeline
                .states_during(start, start + 1_000_000_000)
                .iter()
                .map(|s| s.name())
                .collect();
            let _ = writeln!(
                out,
                "  {:>7}  {:<22} {:>6} {:>8} {:>8}  {:>21}  {:>21}",
                i,
                states.join(">"),
                f.calls,
                f.reached,
                f.errors_with,
                format!("{} / {}", num(f.with.mean_ms), num(f.without.mean_ms)),
                format!("{} / {}", num(f.with.p99_ms), num(f.without.p99_ms)),
            );
        }
    }

    /// What `--svg` draws.
    pub fn picture(&self) -> Picture<'_> {
        Picture {
            title: format!(
                "breaker simulate: '{}', {}/s, seed {}",
                self.instance, self.scenario.rate, self.seed
            ),
            subtitle: vec![self.config_line.clone(), self.traffic_line()],
            seconds: &self.stats.seconds,
            timeline: &self.timeline,
            outages: &self.scenario.outages,
            duration_s: self.scenario.duration.as_secs_f64(),
        }
    }
}
