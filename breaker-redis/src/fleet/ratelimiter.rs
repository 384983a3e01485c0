//! [`SharedRate`]: a rate limiter's permits decided in Redis for every process (the
//! [`SharedLimit`] hook of `breaker-core`).
//!
//! Every acquisition is one `RATE` script run (Resilience4j's `AtomicRateLimiter`
//! arithmetic on the shared state, by Redis's clock; see `scripts.rs`), its caller waiting
//! at most `3 x timeout`. Without an answer the call is decided by a local limiter of
//! `ceil(limitForPeriod / replicas)` per period.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use breaker_core::ratelimiter::{RateLimiter, SharedLimit};

use super::scripts::{FleetReply, FleetRequest, FleetScript};
use super::{deadline, local_share, ms, request, Member};
use crate::store::StoreInner;

pub(crate) struct SharedRate {
    store: Weak<StoreInner>,
    keys: [String; 2],
    /// Processes using the limiter, as Redis last counted them (0: never answered).
    replicas: AtomicU32,
    /// The local limiter used while Redis does not answer, and the share it was built with.
    fallback: Mutex<Option<(u32, u32, RateLimiter)>>,
}

impl SharedRate {
    pub(crate) fn new(store: &Arc<StoreInner>, name: &str) -> Arc<SharedRate> {
        Arc::new(SharedRate {
            store: Arc::downgrade(store),
            keys: super::keys(store, "rl", name),
            replicas: AtomicU32::new(0),
            fallback: Mutex::new(None),
        })
    }

    /// The processes Redis last counted as using this limiter (0 before its first answer).
    pub(crate) fn replicas(&self) -> u32 {
        self.replicas.load(Ordering::Relaxed)
    }

    /// Decides on this process's share of the limit.
    fn local(&self, limiter: &RateLimiter, permits: u32, timeout: Duration) -> Option<Duration> {
        let config = limiter.config();
        let share = local_share(config.limit_for_period(), self.replicas());
        let mut slot = self.fallback.lock().unwrap_or_else(|e| e.into_inner());
        let stale = slot
            .as_ref()
            .is_none_or(|(s, l, _)| *s != share || *l != config.limit_for_period());
        if stale {
            let local = config
                .to_builder()
                .limit_for_period(i64::from(share))
                .build()
                .ok()?;
            *slot = Some((
                share,
                config.limit_for_period(),
                RateLimiter::new(limiter.name().to_string(), local),
            ));
        }
        let (_, _, local) = slot.as_ref().expect("set above");
        if timeout.is_zero() {
            local
                .try_acquire_permission(permits)
                .ok()
                .map(|()| Duration::ZERO)
        } else {
            local.reserve_permission(permits).ok()
        }
    }

    fn noted(&self, r: &FleetReply) {
        self.replicas.store(r.replicas.max(1), Ordering::Relaxed);
    }
}

impl SharedLimit for SharedRate {
    fn acquire(&self, limiter: &RateLimiter, permits: u32, timeout: Duration) -> Option<Duration> {
        if let Some(s) = self.store.upgrade().filter(|s| s.is_up()) {
            let config = limiter.config();
            let period = ms(config.limit_refresh_period()).max(1);
            let request = request(
                &s,
                FleetScript::Rate,
                &self.keys,
                &[&period, &config.limit_for_period(), &permits, &ms(timeout)],
            );
            // A grant whose caller stopped waiting stays consumed: it is a slot of a cycle
            // (handing it back could give one cycle more than limitForPeriod).
            if let Some(r) = s.fleet().ask(request, deadline(&s), |_| {}) {
                self.noted(&r);
                return (r.a == 1).then(|| Duration::from_millis(r.b.max(0) as u64));
            }
        }
        self.local(limiter, permits, timeout)
    }

    fn drain(&self, limiter: &RateLimiter) {
        if let Some(s) = self.store.upgrade().filter(|s| s.is_up()) {
            let config = limiter.config();
            let period = ms(config.limit_refresh_period()).max(1);
            let r = request(
                &s,
                FleetScript::Drain,
                &self.keys,
                &[&period, &config.limit_for_period()],
            );
            s.fleet().send(r, |_| {});
        }
        if let Some((_, _, local)) = &*self.fallback.lock().unwrap_or_else(|e| e.into_inner()) {
            local.drain_permissions();
        }
    }
}

impl Member for SharedRate {
    fn beat(&self) -> FleetRequest {
        let s = self.store.upgrade().expect("beats come from the store");
        request(&s, FleetScript::Beat, &self.keys, &[&-1, &0])
    }

    fn beat_failed(&self, _request: &FleetRequest) {}

    fn on_beat(&self, reply: FleetReply) {
        self.noted(&reply);
    }
}
