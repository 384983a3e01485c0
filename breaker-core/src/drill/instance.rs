//! One instance's drill: its running configuration, its counters and its decision per call.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwapOption;

use super::config::{DrillConfig, DrillErrorKind, Fault, Latency};

/// What a drill does to one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Injection {
    /// Nothing: the call runs as usual.
    Pass,
    /// Fail at once with this error.
    Error(DrillErrorKind),
    /// Wait this long, then run the call.
    Delay(Duration),
    /// Never complete.
    Hang,
}

/// The error a drill injected, handed to the closure that makes the caller's error value
/// ([`DrillRegistry::call`](super::DrillRegistry::call)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedError {
    /// The drilled instance, e.g. `paymentService`.
    pub drill: String,
    /// The error configured.
    pub kind: DrillErrorKind,
}

impl std::fmt::Display for InjectedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "drill of '{}' injected {}", self.drill, self.kind)
    }
}

impl std::error::Error for InjectedError {}

/// Counts of what one instance's drills injected since the instance was first drilled
/// (Micrometer names `breaker.drill.injected` with tag `kind` = `error`, `latency`, `hang`,
/// and `breaker.drill.passed`; Resilience4j has no drills, hence breaker's own prefix).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DrillMetrics {
    /// Calls failed with an injected error.
    pub injected_errors: u64,
    /// Calls delayed by injected latency.
    pub injected_latency: u64,
    /// Calls hung.
    pub injected_hangs: u64,
    /// Calls seen while a drill was configured that it left alone (outside its window or
    /// share, or after its call limit).
    pub passed: u64,
}

impl DrillMetrics {
    /// Every injected call, of any kind.
    pub fn injected(&self) -> u64 {
        self.injected_errors + self.injected_latency + self.injected_hangs
    }
}

/// A running drill's state.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) config: DrillConfig,
    /// The effective window, epoch ns: `start_nanos` and `delay`, `end_nanos` and `duration`.
    start: Option<u64>,
    end: Option<u64>,
    rng: Mutex<fastrand::Rng>,
    /// Calls injected by this run (for `max_calls`).
    injected: AtomicU64,
    /// Whether this run's end (time or call limit) was logged.
    pub(crate) ended: AtomicBool,
}

impl Running {
    /// A run of `config` set at `now` (epoch ns).
    pub(crate) fn new(config: DrillConfig, now: u64) -> Self {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let begin = config.delay.map(|d| now.saturating_add(nanos(d)));
        let start = match (config.start_nanos, begin) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let relative_end = config
            .duration
            .map(|d| start.unwrap_or(now).max(now).saturating_add(nanos(d)));
        let end = match (config.end_nanos, relative_end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let rng = match config.seed {
            Some(seed) => fastrand::Rng::with_seed(seed),
            None => fastrand::Rng::new(),
        };
        Running {
            config,
            start,
            end,
            rng: Mutex::new(rng),
            injected: AtomicU64::new(0),
            ended: AtomicBool::new(false),
        }
    }

    /// Whether the run is over at `now`: past its end, or its call limit used up.
    pub(crate) fn over(&self, now: u64) -> bool {
        self.end.is_some_and(|e| now >= e)
            || self
                .config
                .max_calls
                .is_some_and(|m| self.injected.load(Ordering::Relaxed) >= m)
    }

    fn started(&self, now: u64) -> bool {
        self.start.is_none_or(|s| now >= s)
    }
}

/// The drill slot of one instance: empty (no drill) or a running drill, and its counters.
#[derive(Debug)]
pub struct Drill {
    name: String,
    pub(crate) running: ArcSwapOption<Running>,
    errors: AtomicU64,
    latency: AtomicU64,
    hangs: AtomicU64,
    passed: AtomicU64,
}

/// What [`Drill::decide`] reports besides the injection: the run just ended.
pub(crate) struct Decision {
    pub(crate) injection: Injection,
    pub(crate) just_ended: Option<Arc<Running>>,
}

impl Drill {
    pub(crate) fn new(name: &str) -> Self {
        Drill {
            name: name.to_owned(),
            running: ArcSwapOption::empty(),
            errors: AtomicU64::new(0),
            latency: AtomicU64::new(0),
            hangs: AtomicU64::new(0),
            passed: AtomicU64::new(0),
        }
    }

    /// The instance's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The configuration of the drill set on this instance, running or not yet started or
    /// already over (`None`: no drill).
    pub fn config(&self) -> Option<DrillConfig> {
        self.running.load().as_ref().map(|r| r.config.clone())
    }

    /// Whether the drill injects at `now_nanos` (epoch ns): set, started, not past its end
    /// nor its call limit. Health reports an instance in this state as under drill.
    pub fn is_active(&self, now_nanos: u64) -> bool {
        self.running
            .load()
            .as_ref()
            .is_some_and(|r| r.started(now_nanos) && !r.over(now_nanos))
    }

    /// The counters.
    pub fn metrics(&self) -> DrillMetrics {
        DrillMetrics {
            injected_errors: self.errors.load(Ordering::Relaxed),
            injected_latency: self.latency.load(Ordering::Relaxed),
            injected_hangs: self.hangs.load(Ordering::Relaxed),
            passed: self.passed.load(Ordering::Relaxed),
        }
    }

    /// Decides what the drill does to a call at `now` and counts it.
    pub(crate) fn decide(&self, now: u64) -> Decision {
        let guard = self.running.load();
        let Some(run) = guard.as_ref() else {
            return Decision {
                injection: Injection::Pass,
                just_ended: None,
            };
        };
        let pass = |just_ended| {
            self.passed.fetch_add(1, Ordering::Relaxed);
            Decision {
                injection: Injection::Pass,
                just_ended,
            }
        };
        if !run.started(now) {
            return pass(None);
        }
        if run.over(now) {
            let first = !run.ended.swap(true, Ordering::AcqRel);
            return pass(first.then(|| Arc::clone(run)));
        }
        let (picked, delay) = {
            let mut rng = run.rng.lock().unwrap_or_else(|p| p.into_inner());
            // `f64()` is in [0, 1): 100 % picks every call, 0 % none.
            let picked = rng.f64() * 100.0 < run.config.percentage;
            let delay = match &run.config.fault {
                Fault::Latency(Latency::Fixed(d)) => *d,
                Fault::Latency(Latency::Uniform { min, max }) => {
                    let (lo, hi) = (min.as_nanos() as u64, max.as_nanos() as u64);
                    Duration::from_nanos(rng.u64(lo..=hi))
                }
                _ => Duration::ZERO,
            };
            (picked, delay)
        };
        if !picked {
            return pass(None);
        }
        if let Some(max) = run.config.max_calls {
            let taken = run
                .injected
                .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |n| {
                    (n < max).then_some(n + 1)
                });
            match taken {
                Err(_) => {
                    let first = !run.ended.swap(true, Ordering::AcqRel);
                    return pass(first.then(|| Arc::clone(run)));
                }
                Ok(n) if n + 1 == max => {
                    // The last injected call ends the run.
                    run.ended.store(true, Ordering::Release);
                    let injection = self.inject(&run.config.fault, delay);
                    return Decision {
                        injection,
                        just_ended: Some(Arc::clone(run)),
                    };
                }
                Ok(_) => {}
            }
        } else {
            run.injected.fetch_add(1, Ordering::Relaxed);
        }
        Decision {
            injection: self.inject(&run.config.fault, delay),
            just_ended: None,
        }
    }

    fn inject(&self, fault: &Fault, delay: Duration) -> Injection {
        match fault {
            Fault::Error(kind) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                Injection::Error(kind.clone())
            }
            Fault::Latency(_) => {
                self.latency.fetch_add(1, Ordering::Relaxed);
                Injection::Delay(delay)
            }
            Fault::Hang => {
                self.hangs.fetch_add(1, Ordering::Relaxed);
                Injection::Hang
            }
        }
    }
}
