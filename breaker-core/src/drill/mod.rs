//! Drills: fault injection, innermost in the stack, to prove the fallbacks work before a real
//! outage does (issue #28). Resilience4j has nothing of the kind (Spring teams add Chaos
//! Monkey for Spring Boot); this is breaker's own feature, off by default.
//!
//! A [`DrillRegistry`] holds per instance name a [`DrillConfig`]: a [`Fault`] (an error, one
//! of the stack's [`Rejection`]s, extra [`Latency`] fixed or uniform, or a hang), the share
//! of calls it hits (0-100 %), an optional window `[start, end)` on the registry's
//! [`Clock`](crate::Clock) and an optional limit of calls. [`DrillRegistry::call`] is the
//! core API's wrapper: put it innermost, around the dependency call, so every layer outside
//! sees the fault as it would see the dependency's.
//!
//! With no drill set anywhere, the attribute stack's check is one relaxed atomic load
//! ([`any_configured`]).

mod config;
mod events;
mod instance;
mod registry;
pub mod rejections;
#[cfg(test)]
mod tests;

pub use config::{DrillConfig, DrillConfigError, DrillErrorKind, Fault, Latency, Rejection};
pub use events::{DrillEvent, DrillEventKind};
pub use instance::{Drill, DrillMetrics, InjectedError, Injection};
pub use registry::{any_configured, DrillRegistry};
