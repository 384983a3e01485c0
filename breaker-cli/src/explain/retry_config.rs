//! Where `explain` gets a [`RetryPlan`] from the files.
//!
//! WIRING PENDING: breaker-config does not load `resilience4j.retry` and
//! `resilience4j.timelimiter` yet (another branch is adding them). Until it does,
//! [`retry_plan`] returns `None` and `explain` only says whether the files hold a retry
//! section. To wire it: build the plan from the resolved retry instance named like the
//! circuit breaker (`maxAttempts`, `waitDuration`, the interval function Spring builds from
//! `enableExponentialBackoff` / `exponentialBackoffMultiplier` / `exponentialMaxWaitDuration`
//! / `enableRandomizedWait` / `randomizedWaitFactor`) and the time limiter's
//! `timeoutDuration` of the same name.

use breaker_config::Loaded;

use super::retry_budget::RetryPlan;

/// Whether the active documents hold any `resilience4j.<section>` key (`retry`,
/// `timelimiter`).
pub fn has_section(loaded: &Loaded, section: &str) -> bool {
    loaded.documents.iter().any(|d| {
        d.properties
            .iter()
            .any(|p| p.name.len() > 1 && p.name[0].is("resilience4j") && p.name[1].is(section))
    })
}

/// The retry (and time limiter) of the instance `name`, when the files configure one and
/// breaker-config can load it. WIRING PENDING: always `None` for now (see the module docs).
pub fn retry_plan(_loaded: &Loaded, _name: &str) -> Option<RetryPlan> {
    None
}
