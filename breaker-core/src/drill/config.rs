//! What a drill injects, into which share of calls, and when: [`DrillConfig`].

use std::fmt;
use std::time::Duration;

/// One of the stack's own rejections, injected as if that layer had refused the call.
///
/// In the attribute stack each becomes the matching `StackError` variant, so the layer's
/// fallback and every outer layer see exactly what a real refusal would give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rejection {
    /// `CallNotPermittedException` (file value `call-not-permitted`).
    CallNotPermitted,
    /// The time limiter's `TimeoutException` (file value `timeout`).
    Timeout,
    /// `BulkheadFullException` (file value `bulkhead-full`).
    BulkheadFull,
    /// The rate limiter's `RequestNotPermitted` (file value `request-not-permitted`).
    RequestNotPermitted,
}

impl Rejection {
    /// Every rejection, in the order the file's allowed values list them.
    pub const ALL: [Rejection; 4] = [
        Rejection::CallNotPermitted,
        Rejection::Timeout,
        Rejection::BulkheadFull,
        Rejection::RequestNotPermitted,
    ];

    /// The file's spelling: `call-not-permitted`, `timeout`, `bulkhead-full`,
    /// `request-not-permitted`.
    pub fn key(self) -> &'static str {
        match self {
            Rejection::CallNotPermitted => "call-not-permitted",
            Rejection::Timeout => "timeout",
            Rejection::BulkheadFull => "bulkhead-full",
            Rejection::RequestNotPermitted => "request-not-permitted",
        }
    }

    /// The rejection a file value names, compared without case, `-` and `_`
    /// (`CallNotPermitted`, `call_not_permitted` and `call-not-permitted` are one).
    pub fn parse(text: &str) -> Option<Rejection> {
        let norm = |s: &str| s.replace(['-', '_'], "").to_ascii_lowercase();
        let t = norm(text);
        Rejection::ALL.into_iter().find(|r| norm(r.key()) == t)
    }
}

/// The error a drill injects.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DrillErrorKind {
    /// One of the stack's rejections.
    Rejection(Rejection),
    /// An application error by name: from a file, a name the `ErrorCatalog` can build
    /// (e.g. `java.io.IOException`); for the core API any name, handed to the closure that
    /// makes the caller's error value.
    Named(String),
}

impl fmt::Display for DrillErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DrillErrorKind::Rejection(r) => f.write_str(r.key()),
            DrillErrorKind::Named(n) => f.write_str(n),
        }
    }
}

/// Extra latency before the call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Latency {
    /// Always this long.
    Fixed(Duration),
    /// Uniformly distributed in `min..=max` (nanosecond resolution, from the drill's
    /// seedable generator).
    Uniform {
        /// The shortest delay.
        min: Duration,
        /// The longest delay (at least `min`).
        max: Duration,
    },
}

/// What a drill does to a call it picks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Fault {
    /// Fails the call at once with this error; the dependency is not called.
    Error(DrillErrorKind),
    /// Waits this long (on the registry's clock), then calls the dependency.
    Latency(Latency),
    /// Never completes (until an outer time limiter or the caller gives up); the dependency
    /// is not called.
    Hang,
}

impl Fault {
    /// `error`, `latency` or `hang`: the `kind` tag of counters, events and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::Error(_) => "error",
            Fault::Latency(_) => "latency",
            Fault::Hang => "hang",
        }
    }
}

/// A drill of one instance (`breaker.drill.instances.<name>.*` in a file).
///
/// Off by default: only a configured drill injects anything. Times are epoch nanoseconds on
/// the [`DrillRegistry`](super::DrillRegistry)'s clock (a `ManualClock` in tests).
#[derive(Debug, Clone, PartialEq)]
pub struct DrillConfig {
    /// What is injected.
    pub fault: Fault,
    /// The share of calls injected, in percent, `0.0..=100.0` (default 100: every call).
    pub percentage: f64,
    /// The drill injects nothing before this time (epoch ns; `None`: from its start).
    pub start_nanos: Option<u64>,
    /// The drill injects nothing from this time on (epoch ns; `None`: until stopped).
    pub end_nanos: Option<u64>,
    /// The drill injects nothing until this long after it was set (`None`: at once).
    pub delay: Option<Duration>,
    /// The drill injects nothing from this long after it began injecting (after `delay`)
    /// (`None`: until `end_nanos` or stopped). A reload that keeps the drill's config keeps
    /// its times; a changed config starts it again.
    pub duration: Option<Duration>,
    /// The drill ends after injecting into this many calls (`None`: no limit; must be > 0).
    pub max_calls: Option<u64>,
    /// The seed of the generator that picks calls and delays (`None`: a random seed).
    pub seed: Option<u64>,
}

impl DrillConfig {
    /// A drill injecting `fault` into every call, from now until stopped.
    pub fn new(fault: Fault) -> Self {
        DrillConfig {
            fault,
            percentage: 100.0,
            start_nanos: None,
            end_nanos: None,
            delay: None,
            duration: None,
            max_calls: None,
            seed: None,
        }
    }

    /// Sets [`percentage`](Self::percentage).
    pub fn percentage(mut self, percent: f64) -> Self {
        self.percentage = percent;
        self
    }

    /// Sets the window `[start, end)` in epoch nanoseconds (either end open with `None`).
    pub fn between(mut self, start_nanos: Option<u64>, end_nanos: Option<u64>) -> Self {
        self.start_nanos = start_nanos;
        self.end_nanos = end_nanos;
        self
    }

    /// Sets [`delay`](Self::delay) and [`duration`](Self::duration), relative to the time the
    /// drill is set.
    pub fn after(mut self, delay: Option<Duration>, duration: Option<Duration>) -> Self {
        self.delay = delay;
        self.duration = duration;
        self
    }

    /// Sets [`max_calls`](Self::max_calls).
    pub fn max_calls(mut self, calls: u64) -> Self {
        self.max_calls = Some(calls);
        self
    }

    /// Sets [`seed`](Self::seed).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Checks the ranges.
    ///
    /// # Errors
    /// [`DrillConfigError`] naming the field and its allowed values: a percentage outside
    /// 0-100 (or NaN), an end not after the start, `max_calls` of 0, a uniform latency whose
    /// `max` is below its `min`, an empty error name.
    pub fn validate(&self) -> Result<(), DrillConfigError> {
        let bad = |field: &'static str, message: String, allowed: &'static str| {
            Err(DrillConfigError {
                field,
                message,
                allowed,
            })
        };
        if !(0.0..=100.0).contains(&self.percentage) {
            return bad(
                "percentage",
                format!("{} is not a share of calls", self.percentage),
                "0 to 100",
            );
        }
        if let (Some(s), Some(e)) = (self.start_nanos, self.end_nanos) {
            if e <= s {
                return bad(
                    "end",
                    "the drill would end before it starts".into(),
                    "a time after start",
                );
            }
        }
        if self.duration.is_some_and(|d| d.is_zero()) {
            return bad("duration", "0".into(), "a positive duration");
        }
        if self.max_calls == Some(0) {
            return bad("calls", "0 calls".into(), "a positive number of calls");
        }
        match &self.fault {
            Fault::Latency(Latency::Uniform { min, max }) if max < min => bad(
                "latency",
                format!("max {max:?} is below min {min:?}"),
                "min <= max",
            ),
            Fault::Error(DrillErrorKind::Named(n)) if n.trim().is_empty() => bad(
                "error",
                "empty error name".into(),
                "a rejection or an error name",
            ),
            _ => Ok(()),
        }
    }
}

/// A [`DrillConfig`] out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("drill {field}: {message} (allowed: {allowed})")]
pub struct DrillConfigError {
    /// The field, as the file spells it (`percentage`, `end`, `calls`, `latency`, `error`).
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
    /// What is allowed.
    pub allowed: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejections_parse_in_any_spelling() {
        assert_eq!(
            Rejection::parse("CallNotPermitted"),
            Some(Rejection::CallNotPermitted)
        );
        assert_eq!(
            Rejection::parse("bulkhead_full"),
            Some(Rejection::BulkheadFull)
        );
        assert_eq!(Rejection::parse("timeout"), Some(Rejection::Timeout));
        assert_eq!(Rejection::parse("java.io.IOException"), None);
    }

    #[test]
    fn ranges_are_checked() {
        let base = DrillConfig::new(Fault::Hang);
        assert!(base.validate().is_ok());
        assert_eq!(
            base.clone().percentage(100.5).validate().unwrap_err().field,
            "percentage"
        );
        assert_eq!(
            base.clone()
                .percentage(f64::NAN)
                .validate()
                .unwrap_err()
                .field,
            "percentage"
        );
        assert!(base.clone().percentage(0.0).validate().is_ok());
        assert_eq!(
            base.clone()
                .between(Some(5), Some(5))
                .validate()
                .unwrap_err()
                .field,
            "end"
        );
        assert_eq!(
            base.clone().max_calls(0).validate().unwrap_err().field,
            "calls"
        );
        let uniform = DrillConfig::new(Fault::Latency(Latency::Uniform {
            min: Duration::from_millis(20),
            max: Duration::from_millis(10),
        }));
        assert_eq!(uniform.validate().unwrap_err().field, "latency");
    }
}
