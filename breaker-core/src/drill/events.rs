//! A drill's events: started, stopped, ended, and each injected fault.

use super::config::DrillConfig;
use super::instance::Injection;
use crate::publisher::ModuleEvent;

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub enum DrillEventKind {
    /// A drill was set (by a file or at run time), with its config.
    Started(DrillConfig),
    /// The drill was removed (by a file or at run time).
    Stopped,
    /// The drill reached its end time or its call limit (reported by the first call after).
    Ended,
    /// A call got this fault (never [`Injection::Pass`]).
    Injected(Injection),
}

/// An event of one instance's drill (Resilience4j has none; breaker's own).
#[derive(Debug, Clone, PartialEq)]
pub struct DrillEvent {
    /// The drilled instance.
    pub name: String,
    /// When, in epoch ns on the registry's clock.
    pub at_nanos: u64,
    /// What happened.
    pub kind: DrillEventKind,
}

impl ModuleEvent for DrillEvent {
    fn instance_name(&self) -> &str {
        &self.name
    }

    fn type_name(&self) -> &'static str {
        match self.kind {
            DrillEventKind::Started(_) => "DRILL_STARTED",
            DrillEventKind::Stopped => "DRILL_STOPPED",
            DrillEventKind::Ended => "DRILL_ENDED",
            DrillEventKind::Injected(_) => "DRILL_INJECTED",
        }
    }
}
