//! What each call did, and the numbers over a set of calls.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The start of the run; every time in the output is measured from it.
#[derive(Clone, Copy, Debug)]
pub struct Epoch(Instant);

impl Epoch {
    /// Now is t=0.
    pub fn now() -> Self {
        Epoch(Instant::now())
    }

    /// Time since t=0.
    pub fn elapsed(self) -> Duration {
        self.0.elapsed()
    }

    /// The instant at `t`.
    pub fn at(self, t: Duration) -> Instant {
        self.0 + t
    }
}

/// How one call ended, from the caller's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A fresh quote from the provider.
    Live,
    /// The last good quote, served by the fallback.
    Stale {
        /// The breaker rejected the call (it never reached the provider).
        short_circuited: bool,
    },
    /// A 4xx: the request itself was bad.
    ClientError,
    /// An error with no last good value to serve instead.
    Failed {
        /// The breaker rejected the call.
        short_circuited: bool,
    },
}

impl Outcome {
    /// Whether the caller's answer was a rejection (its last attempt never reached the
    /// provider; an earlier one may have: see [`SeenCalls`]).
    pub fn rejected(self) -> bool {
        matches!(
            self,
            Outcome::Stale {
                short_circuited: true
            } | Outcome::Failed {
                short_circuited: true
            }
        )
    }
}

/// The client calls the provider received at least one request for, as the provider counts
/// them: every request carries its client call's id (header `x-call-id`, the same on every
/// retry attempt), and the provider notes each id it sees. A first attempt that timed out
/// before the breaker opened, or a HALF_OPEN trial call, reached the provider even when the
/// caller's last answer came from the breaker; counting here keeps them.
#[derive(Default)]
pub struct SeenCalls(Mutex<HashSet<u64>>);

impl SeenCalls {
    /// The provider received a request of call `id`.
    pub fn note(&self, id: u64) {
        self.0.lock().unwrap().insert(id);
    }

    /// Whether the provider received any request of call `id`.
    pub fn contains(&self, id: u64) -> bool {
        self.0.lock().unwrap().contains(&id)
    }
}

/// One call.
#[derive(Clone, Copy, Debug)]
pub struct CallRecord {
    /// The call's id (what the provider sees in `x-call-id`).
    pub id: u64,
    /// When it started.
    pub start: Duration,
    /// How long the caller waited.
    pub latency: Duration,
    /// How it ended.
    pub outcome: Outcome,
}

/// The calls of one run, and how many have finished in each second (for the live table).
pub struct Recorder {
    records: Mutex<Vec<CallRecord>>,
    done_per_second: Vec<AtomicU32>,
    next_id: AtomicU64,
    /// What the provider these calls go to has seen.
    pub seen: Arc<SeenCalls>,
}

impl Recorder {
    /// A recorder for a run of `seconds` seconds whose calls go to a provider that notes
    /// the calls it sees in `seen`.
    pub fn new(seconds: usize, seen: Arc<SeenCalls>) -> Self {
        Recorder {
            records: Mutex::new(Vec::new()),
            done_per_second: (0..seconds).map(|_| AtomicU32::new(0)).collect(),
            next_id: AtomicU64::new(1),
            seen,
        }
    }

    /// A fresh call id.
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The numbers over the calls that started in `window`.
    pub fn stats(&self, window: Range<Duration>) -> Stats {
        Stats::of(&self.started_in(window), &self.seen)
    }

    /// Adds a finished call.
    pub fn record(&self, r: CallRecord) {
        self.records.lock().unwrap().push(r);
        if let Some(c) = self.done_per_second.get(r.start.as_secs() as usize) {
            c.fetch_add(1, Ordering::Release);
        }
    }

    /// Calls started in second `s` that have finished.
    pub fn done_in_second(&self, s: usize) -> u32 {
        self.done_per_second
            .get(s)
            .map_or(0, |c| c.load(Ordering::Acquire))
    }

    /// The calls that started in `window`.
    pub fn started_in(&self, window: Range<Duration>) -> Vec<CallRecord> {
        let all = self.records.lock().unwrap();
        all.iter()
            .filter(|r| window.contains(&r.start))
            .copied()
            .collect()
    }
}

/// Numbers over a set of calls.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    /// Calls.
    pub calls: usize,
    /// Calls the provider received at least one request for (counted on its side).
    pub reached: usize,
    /// Calls whose last answer was a rejection (the breaker's, the bulkhead's or the rate
    /// limiter's); an earlier attempt of one of them may have reached the provider.
    pub short_circuited: usize,
    /// Calls answered with the last good value.
    pub fallback: usize,
    /// 4xx answers.
    pub client_errors: usize,
    /// Calls that ended in an error other than a 4xx.
    pub failed: usize,
    /// Mean wait, ms.
    pub mean_ms: f64,
    /// 99th percentile wait (nearest rank), ms.
    pub p99_ms: f64,
}

impl Stats {
    /// The numbers over `calls`, `seen` telling which reached the provider.
    pub fn of(calls: &[CallRecord], seen: &SeenCalls) -> Stats {
        let mut ms: Vec<f64> = calls
            .iter()
            .map(|c| c.latency.as_secs_f64() * 1e3)
            .collect();
        ms.sort_by(f64::total_cmp);
        let count = |f: fn(Outcome) -> bool| calls.iter().filter(|c| f(c.outcome)).count();
        Stats {
            calls: calls.len(),
            reached: calls.iter().filter(|c| seen.contains(c.id)).count(),
            short_circuited: count(|o| o.rejected()),
            fallback: count(|o| matches!(o, Outcome::Stale { .. })),
            client_errors: count(|o| o == Outcome::ClientError),
            failed: count(|o| matches!(o, Outcome::Failed { .. })),
            mean_ms: if ms.is_empty() {
                0.0
            } else {
                ms.iter().sum::<f64>() / ms.len() as f64
            },
            p99_ms: percentile(&ms, 0.99),
        }
    }

    /// Share of the calls that never reached the provider, 0..=1.
    pub fn never_reached_share(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            1.0 - self.reached as f64 / self.calls as f64
        }
    }
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A latency in ms for a table cell: `0.04`, `3.1`, `502`.
pub fn ms(v: f64) -> String {
    if v < 1.0 {
        format!("{v:.2}")
    } else if v < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}
