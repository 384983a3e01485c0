//! The drills the attribute stack applies (issue #28): the global config's
//! `breaker.drill.instances`, or a registry the application sets.

use std::sync::OnceLock;

use breaker_core::drill::DrillRegistry;

static DRILLS: OnceLock<DrillRegistry> = OnceLock::new();

/// Makes `drills` the registry whose drills stacked attributes apply, for an application
/// that builds its registries itself ([`init`](crate::init)). Without it, the drills of the
/// global config's files ([`init_from_file`](crate::init_from_file),
/// `breaker.drill.instances.<name>.*`, kept current by live reload) apply.
///
/// # Errors
/// [`AlreadyInitialized`](crate::AlreadyInitialized) if a registry was set before.
pub fn init_drills(drills: DrillRegistry) -> Result<(), crate::AlreadyInitialized> {
    DRILLS.set(drills).map_err(|_| crate::AlreadyInitialized)
}

/// The drills stacked attributes apply: the one set by [`init_drills`], else the global
/// config's ([`LiveConfig::drills`](breaker_config::LiveConfig::drills)), else none. Never
/// loads the global files. Start or stop a drill at run time with
/// [`DrillRegistry::start`] / [`DrillRegistry::stop`] on it.
pub fn global_drills() -> Option<&'static DrillRegistry> {
    DRILLS
        .get()
        .or_else(|| crate::global_live_config().map(|l| l.drills()))
}
