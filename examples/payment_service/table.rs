//! The per-second table, printed live: each row as soon as every call that started in its
//! second has finished (so a row waits at most the client timeout).

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use super::events::EventLog;
use super::stats::{ms, Recorder};
use super::style;

/// Printed once under the header: what the less obvious columns count.
pub const LEGEND: &str =
    "  reached = calls that reached the provider, short = calls the breaker short-circuited or the\n  \
bulkhead / rate limiter shed, fallback = answers served by the fallback, 4xx = client errors the\n  \
breaker ignored";

/// What the table reads.
pub struct Table {
    /// Calls per second of the schedule.
    pub expected: Vec<u32>,
    /// The run with the breaker.
    pub breaker: Arc<Recorder>,
    /// The run without, if any.
    pub baseline: Option<Arc<Recorder>>,
    /// The breaker's transitions.
    pub events: Arc<EventLog>,
    /// When the provider is down.
    pub outage: Range<Duration>,
}

impl Table {
    /// Prints the header and what its columns mean, then one row per second as the seconds
    /// complete.
    pub async fn print_live(self) {
        println!("{}", style::bold(&self.header()));
        println!("{}", style::dim(LEGEND));
        for s in 0..self.expected.len() {
            while !self.second_done(s) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            println!("{}", self.row(s));
        }
    }

    fn second_done(&self, s: usize) -> bool {
        let want = self.expected[s];
        self.breaker.done_in_second(s) >= want
            && self
                .baseline
                .as_ref()
                .is_none_or(|b| b.done_in_second(s) >= want)
    }

    fn header(&self) -> String {
        let mut h = format!(
            "{:>7}  {:<8} {:<22} {:>5} {:>7} {:>5} {:>8} {:>4} {:>8} {:>7}",
            "second",
            "provider",
            "breaker",
            "calls",
            "reached",
            "short",
            "fallback",
            "4xx",
            "mean ms",
            "p99 ms"
        );
        if self.baseline.is_some() {
            h.push_str(&format!(
                " │ {:>19} {:>8} {:>7}",
                "no breaker: reached", "mean ms", "p99 ms"
            ));
        }
        h
    }

    fn row(&self, s: usize) -> String {
        let from = Duration::from_secs(s as u64);
        let second = from..from + Duration::from_secs(1);
        let down = self.outage.start < second.end && second.start < self.outage.end;
        let provider = if down {
            style::pad("DOWN", 8, style::red)
        } else {
            style::pad("up", 8, style::dim)
        };
        let b = self.breaker.stats(second.clone());
        let mut row = format!(
            "{:>7}  {provider} {} {:>5} {:>7} {:>5} {:>8} {:>4} {:>8} {:>7}",
            format!("{}-{}s", s, s + 1),
            self.states(second.clone()),
            b.calls,
            b.reached,
            b.short_circuited,
            b.fallback,
            b.client_errors,
            ms(b.mean_ms),
            ms(b.p99_ms),
        );
        if let Some(base) = &self.baseline {
            let n = base.stats(second);
            row.push_str(&format!(
                " │ {:>19} {:>8} {:>7}",
                n.reached,
                ms(n.mean_ms),
                ms(n.p99_ms)
            ));
        }
        row
    }

    /// The breaker's states during `second`: `CLOSED`, or `CLOSED→OPEN`, ...
    fn states(&self, second: Range<Duration>) -> String {
        let mut path = vec![self.events.state_at(second.start)];
        for t in self.events.transitions() {
            if second.start < t.t && t.t < second.end {
                path.push(t.to);
            }
        }
        let plain: Vec<&str> = path.iter().map(|s| s.name()).collect();
        let width = 22usize.saturating_sub(plain.join("→").chars().count());
        let painted: Vec<String> = path.iter().map(|s| style::state(*s)).collect();
        format!("{}{}", painted.join("→"), " ".repeat(width))
    }
}
