//! [`SharedLimit`]: the hook through which a store outside the process (the `breaker-redis`
//! crate, issue #29) makes the rate limiters of many processes share one
//! `limitForPeriod` per `limitRefreshPeriod`.
//!
//! A limiter without a store (the default) pays one "is a store attached" load per
//! permission and never calls into this module. With a store, every acquisition is decided
//! by the store ([`SharedLimit::acquire`]) instead of the limiter's own cycle state: the
//! store runs Resilience4j's `AtomicRateLimiter` arithmetic on state all processes share,
//! and answers with the wait before the permits may be used (0: now), or a refusal.
//! Events, the waiting of [`acquire_permission`](super::RateLimiter::acquire_permission)
//! and the errors stay the limiter's.

use std::sync::Arc;
use std::time::Duration;

use super::limiter::RateLimiter;

/// A store deciding a [`RateLimiter`]'s permissions for every process sharing it.
///
/// Implementations must answer within their own stated bound (they may wait on the network
/// that long) and must answer something: when the store cannot be asked, they decide on a
/// local share of the limit themselves.
pub trait SharedLimit: Send + Sync + 'static {
    /// Decides an acquisition of `permits` for `limiter` (whose config is in force:
    /// `limitForPeriod`, `limitRefreshPeriod`), reserving permits of later cycles when they
    /// come within `timeout` (`Duration::ZERO`: only permits of the current cycle, as
    /// `try_acquire_permission`). `Some(wait)`: granted, usable after `wait`; `None`:
    /// refused, nothing reserved.
    fn acquire(&self, limiter: &RateLimiter, permits: u32, timeout: Duration) -> Option<Duration>;

    /// `drainPermissions()` on the shared state (the permissions left in the current cycle
    /// become 0 for every process). Best effort; never waits.
    fn drain(&self, limiter: &RateLimiter);
}

impl RateLimiter {
    /// `decide` by the attached store: `(wait ns, granted, now, exact mode)`.
    #[cold]
    pub(super) fn decide_shared(
        &self,
        store: &dyn SharedLimit,
        permits: u32,
        timeout: Option<i64>,
    ) -> (i64, bool, i64, bool) {
        let current = self.inner.params.load();
        let timeout = timeout.unwrap_or(current.params.timeout).max(0) as u64;
        let granted = store.acquire(self, permits, Duration::from_nanos(timeout));
        let now = self.now(false);
        match granted {
            Some(wait) => (wait.as_nanos() as i64, true, now, current.exact),
            None => (0, false, now, current.exact),
        }
    }

    fn shared_cell(&self) -> &std::sync::OnceLock<Arc<dyn SharedLimit>> {
        &self.inner.shared
    }

    /// Lets `store` decide this limiter's permissions from now on (see [`SharedLimit`]).
    /// A limiter has at most one store for its whole life.
    ///
    /// # Errors
    /// `Err(store)` back when a store is already attached.
    pub fn attach_shared_limit(
        &self,
        store: Arc<dyn SharedLimit>,
    ) -> Result<(), Arc<dyn SharedLimit>> {
        self.shared_cell().set(store)
    }

    /// Whether a store decides this limiter's permissions.
    pub fn has_shared_limit(&self) -> bool {
        self.shared_cell().get().is_some()
    }
}
