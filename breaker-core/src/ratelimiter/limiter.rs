//! [`RateLimiter`]: Resilience4j's `AtomicRateLimiter`.

use std::any::Any;
use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use arc_swap::ArcSwap;

use super::call::RateLimiterCall;
use super::config::{NullableDuration, RateLimiterConfig};
use super::cycle::{self, Cell, CycleState, Params};
use super::error::{RateLimiterError, RequestNotPermitted};
use super::events::{RateLimiterEvent, RateLimiterEventType};
use super::metrics::RateLimiterMetrics;
use super::params_cell::{ParamsCell, Published};
use super::shared::SharedLimit;
use crate::clock::{Clock, SystemClock};
use crate::error::ConfigError;
use crate::events::SubscriptionId;
use crate::publisher::EventPublisher;
use crate::sleep::Sleep;

/// A rate limiter: at most `limitForPeriod` permits per `limitRefreshPeriod`, with
/// Resilience4j's `AtomicRateLimiter` arithmetic reproduced exactly.
///
/// Cycles are counted from the limiter's creation (cycle `k` covers
/// `[k * period, (k + 1) * period)` after it); at the first use in a new cycle the
/// permissions grow by `limitForPeriod` per elapsed cycle, capped at `limitForPeriod` (idle
/// time stores no burst). A call that needs more permits than are left reserves permits of
/// later cycles, making the permissions negative, if the wait for them is at most
/// `timeoutDuration`; it then waits (by the limiter's [`Clock`], without blocking a thread)
/// and proceeds. A call whose wait would exceed the timeout reserves nothing and is refused
/// with [`RequestNotPermitted`].
///
/// Cloning is cheap and every clone is the same limiter. A permission is one 128-bit
/// compare-and-swap and allocates nothing (a call that has to wait allocates its timer).
///
/// ```
/// use std::time::Duration;
/// use breaker_core::ratelimiter::{RateLimiter, RateLimiterConfig};
/// let config = RateLimiterConfig::builder()
///     .limit_for_period(2)
///     .limit_refresh_period(Duration::from_secs(1))
///     .timeout_duration(Duration::ZERO)
///     .build()?;
/// let limiter = RateLimiter::new("search", config);
/// assert!(limiter.try_acquire_permission(1).is_ok());
/// assert!(limiter.try_acquire_permission(1).is_ok());
/// let refused = limiter.try_acquire_permission(1).unwrap_err();
/// assert_eq!(refused.to_string(), "RateLimiter 'search' does not permit further calls");
/// assert_eq!(limiter.metrics().available_permissions, 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct RateLimiter {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    name: Arc<str>,
    /// The name as a rejection carries it (inline when short: no reference count).
    reject_name: crate::names::Name,
    clock: Arc<dyn Clock>,
    /// The process-wide [`SystemClock`], read without dynamic dispatch; `None` for any other
    /// clock, which is read through `clock`.
    system: Option<SystemClock>,
    /// The clock's reading at creation (epoch ns): time zero of the cycles.
    start: u64,
    cell: Cell,
    /// What a permission reads of the config in force (no reference count, no lock).
    pub(super) params: ParamsCell,
    current: ArcSwap<Current>,
    waiting: AtomicU32,
    publisher: EventPublisher<RateLimiterEvent>,
    /// Serialises config changes (the hot path never takes it).
    changing: Mutex<()>,
    /// The store deciding the permissions of every process (issue #29), if any.
    pub(super) shared: OnceLock<Arc<dyn SharedLimit>>,
}

/// The config in force and the numbers the arithmetic reads from it.
struct Current {
    params: Params,
    config: Arc<RateLimiterConfig>,
}

/// Periods from which the limiter reads the clock's cached reading: its millisecond lag is
/// at most 1 % of a period, and only ever makes the limiter stricter (a new cycle's permits
/// show up to a millisecond late; a wait ends up to a millisecond later).
const COARSE_CLOCK_FROM: Duration = Duration::from_millis(100);

impl Current {
    fn published(&self) -> Published {
        Published {
            params: self.params,
            exact: self.config.exact_resilience4j,
            coarse_clock: self.config.limit_refresh_period >= COARSE_CLOCK_FROM,
            drains: self.config.drain_permissions_on_result.is_some(),
        }
    }

    fn new(config: Arc<RateLimiterConfig>, version: u32) -> Self {
        Current {
            params: Params {
                version,
                period: config.limit_refresh_period.as_nanos() as i64,
                limit: i64::from(config.limit_for_period),
                timeout: config.timeout_duration.as_nanos() as i64,
            },
            config,
        }
    }
}

impl RateLimiter {
    /// A limiter named `name` starting now, by `config`'s clock, with a full cycle of
    /// permits. Its clock is `config`'s for its whole life.
    pub fn new(name: impl Into<Arc<str>>, config: RateLimiterConfig) -> Self {
        Self::with_shared_config(name.into(), Arc::new(config))
    }

    /// [`new`](Self::new) with a config shared with its registry.
    pub(crate) fn with_shared_config(name: Arc<str>, config: Arc<RateLimiterConfig>) -> Self {
        let clock = config.clock.clone();
        let system = SystemClock::is_shared(&clock).then(SystemClock::new);
        let start = clock.now_nanos();
        let limit = config.limit_for_period as i32;
        let current = Current::new(config, 0);
        RateLimiter {
            inner: Arc::new(Inner {
                reject_name: crate::names::Name::new(&name),
                name,
                clock,
                system,
                start,
                params: ParamsCell::new(current.published()),
                cell: Cell::new(CycleState {
                    cycle: 0,
                    permissions: limit,
                    version: 0,
                }),
                current: ArcSwap::from_pointee(current),
                waiting: AtomicU32::new(0),
                publisher: EventPublisher::default(),
                changing: Mutex::new(()),
                shared: OnceLock::new(),
            }),
        }
    }

    /// A limiter with Resilience4j's default config.
    pub fn with_defaults(name: impl Into<Arc<str>>) -> Self {
        Self::new(name, RateLimiterConfig::default())
    }

    /// The limiter's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The config in force.
    pub fn config(&self) -> Arc<RateLimiterConfig> {
        self.inner.current.load().config.clone()
    }

    /// Whether two handles are the same limiter.
    pub fn ptr_eq(&self, other: &RateLimiter) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Nanoseconds since creation, by the limiter's clock: its exact reading, or its cached
    /// one (see [`COARSE_CLOCK_FROM`]).
    #[inline]
    pub(super) fn now(&self, coarse: bool) -> i64 {
        let nanos = match (&self.inner.system, coarse) {
            (Some(system), true) => system.recent_nanos(),
            (Some(system), false) => system.now_nanos(),
            (None, true) => self.inner.clock.recent_nanos(),
            (None, false) => self.inner.clock.now_nanos(),
        };
        nanos.saturating_sub(self.inner.start) as i64
    }

    /// One atomic step: `f` computes the next state from the current one at the current
    /// time; retried until its compare-and-swap wins. A state left unchanged is not written.
    #[inline]
    fn update<R>(
        &self,
        mut f: impl FnMut(CycleState, &Params, i64) -> (CycleState, R),
    ) -> (R, i64, Published) {
        let mut spins = 0u32;
        loop {
            let current = self.inner.params.load();
            let s = self.inner.cell.load();
            if s.version != current.params.version {
                // A config change is between its two steps.
                spins += 1;
                if spins < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
                continue;
            }
            let now = self.now(current.coarse_clock);
            let (next, r) = f(s, &current.params, now);
            if next == s || self.inner.cell.compare_exchange(s, next).is_ok() {
                return (r, now, current);
            }
        }
    }

    /// Decides an acquisition of `permits` with `timeout` ns (Java's CAS loop in
    /// `acquirePermission` / `reservePermission`): `(wait ns, reserved, now)`.
    #[inline]
    fn decide(&self, permits: u32, timeout: Option<i64>) -> (i64, bool, i64, bool) {
        if let Some(store) = self.inner.shared.get() {
            return self.decide_shared(store.as_ref(), permits, timeout);
        }
        let permits = i64::from(permits);
        let ((wait, reserved), now, current) = self.update(|s, p, now| {
            let (next, wait, reserved) =
                cycle::next_state(s, p, now, permits, timeout.unwrap_or(p.timeout));
            (next, (wait, reserved))
        });
        (wait, reserved, now, current.exact)
    }

    /// Takes `permits` now if the current cycle has them, never waiting and never reserving
    /// later cycles (an acquire with a timeout of 0). Publishes `SUCCESSFUL_ACQUIRE` or
    /// `FAILED_ACQUIRE`. Allocates nothing.
    ///
    /// # Errors
    /// [`RequestNotPermitted`] when fewer than `permits` permissions are left.
    #[inline]
    pub fn try_acquire_permission(&self, permits: u32) -> Result<(), RequestNotPermitted> {
        let (_, reserved, _, _) = self.decide(permits, Some(0));
        self.finish(reserved, permits)
    }

    /// Acquires `permits` (Resilience4j's `acquirePermission(permits)`; 1 for a call): at
    /// once if the current cycle has them, else reserving permits of later cycles if the
    /// wait is at most `timeoutDuration`, and waiting for them. Publishes
    /// `SUCCESSFUL_ACQUIRE` or `FAILED_ACQUIRE` when it resolves.
    ///
    /// Dropping the future while it waits publishes `FAILED_ACQUIRE`; the permits it
    /// reserved stay consumed, as for an interrupted thread in Resilience4j. (They are a
    /// time slot: handing them back would let the next caller take a slot of a cycle that
    /// later waiters already hold, admitting more than `limitForPeriod` in that cycle.)
    ///
    /// # Errors
    /// The future resolves to [`RequestNotPermitted`] when the wait would exceed the
    /// timeout: at once (in exact Resilience4j mode only after waiting the whole timeout,
    /// as Resilience4j does).
    pub fn acquire_permission(&self, permits: u32) -> AcquirePermission<'_> {
        AcquirePermission {
            limiter: self,
            permits,
            state: AcquireState::Start,
        }
    }

    /// Reserves `permits` without waiting (Resilience4j's `reservePermission(permits)`):
    /// `Ok(Duration::ZERO)` if they are available now, `Ok(wait)` if they were reserved for
    /// a later cycle (the caller must wait that long itself). Publishes `SUCCESSFUL_ACQUIRE`
    /// or `FAILED_ACQUIRE` at once.
    ///
    /// # Errors
    /// [`RequestNotPermitted`] (Resilience4j's `-1`) when the wait would exceed the timeout;
    /// nothing is reserved.
    pub fn reserve_permission(&self, permits: u32) -> Result<Duration, RequestNotPermitted> {
        let (wait, reserved, _, _) = self.decide(permits, None);
        self.finish(reserved, permits)
            .map(|()| Duration::from_nanos(wait as u64))
    }

    /// Drains the permissions left in the current cycle (Resilience4j's
    /// `drainPermissions()`), publishing `DRAINED` with the number drained. Reservations of
    /// later cycles stay. In exact Resilience4j mode it computes as Resilience4j does (see
    /// the module docs).
    pub fn drain_permissions(&self) {
        if let Some(store) = self.inner.shared.get() {
            store.drain(self);
        }
        let exact = self.inner.params.load().exact;
        let (drained, _, _) = self.update(|s, p, now| {
            if exact {
                cycle::drain_exact(s, p, now)
            } else {
                cycle::drain_fixed(s, p, now)
            }
        });
        self.publish(RateLimiterEventType::Drained, drained);
    }

    /// A call made with a permit of this limiter returned `value` (Resilience4j's
    /// `onResult`): drains if `drainPermissionsOnResult` says so.
    pub fn on_result(&self, value: &dyn Any) {
        self.drain_if_needed(Ok(value));
    }

    /// A call made with a permit of this limiter failed with `error` (`onError`): drains if
    /// `drainPermissionsOnResult` says so.
    pub fn on_error(&self, error: &dyn Any) {
        self.drain_if_needed(Err(error));
    }

    /// A call without a result succeeded (`onSuccess`): the predicate sees `Ok(&())`.
    pub fn on_success(&self) {
        self.drain_if_needed(Ok(&()));
    }

    #[inline]
    fn drain_if_needed(&self, outcome: Result<&dyn Any, &dyn Any>) {
        if self.inner.params.load().drains {
            self.drain_if_accepted(outcome);
        }
    }

    #[cold]
    fn drain_if_accepted(&self, outcome: Result<&dyn Any, &dyn Any>) {
        let drain = match &self.inner.current.load().config.drain_permissions_on_result {
            Some(predicate) => predicate(outcome),
            None => false,
        };
        if drain {
            self.drain_permissions();
        }
    }

    /// Runs `fut` once one permit is acquired (waiting as
    /// [`acquire_permission`](Self::acquire_permission) does), then hands its outcome to
    /// `drainPermissionsOnResult`.
    ///
    /// # Errors
    /// [`RateLimiterError::NotPermitted`] without polling `fut` when refused;
    /// [`RateLimiterError::Inner`] with the call's own error.
    #[inline]
    pub fn call<F, T, E>(&self, fut: F) -> RateLimiterCall<'_, F>
    where
        F: IntoFuture<Output = Result<T, E>>,
        T: Any,
        E: Any,
    {
        RateLimiterCall::new(self, 1, fut)
    }

    /// [`call`](Self::call) taking `permits` permits (Resilience4j's `permits` attribute).
    ///
    /// # Errors
    /// As [`call`](Self::call).
    #[inline]
    pub fn call_with_permits<F, T, E>(&self, permits: u32, fut: F) -> RateLimiterCall<'_, F>
    where
        F: IntoFuture<Output = Result<T, E>>,
        T: Any,
        E: Any,
    {
        RateLimiterCall::new(self, permits, fut)
    }

    /// The synchronous form of [`call`](Self::call): runs `f` if a permit is available now
    /// (it never waits or reserves).
    ///
    /// # Errors
    /// As [`call`](Self::call).
    pub fn call_sync<T: Any, E: Any>(
        &self,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, RateLimiterError<E>> {
        self.try_acquire_permission(1)?;
        let result = f();
        match &result {
            Ok(v) => self.on_result(v),
            Err(e) => self.on_error(e),
        }
        result.map_err(RateLimiterError::Inner)
    }

    /// Changes `timeoutDuration` (Resilience4j's `changeTimeoutDuration`) for acquisitions
    /// that start from now on; waiting calls keep theirs.
    ///
    /// # Errors
    /// The builder's [`ConfigError`]; nothing changes.
    pub fn change_timeout_duration(
        &self,
        timeout: impl NullableDuration,
    ) -> Result<(), ConfigError> {
        let config = self
            .config()
            .to_builder()
            .timeout_duration(timeout)
            .build()?;
        self.change_config(config);
        Ok(())
    }

    /// Changes `limitForPeriod` (Resilience4j's `changeLimitForPeriod`). The permissions of
    /// the current cycle stay as they are; the new limit is the refill and the cap from the
    /// next cycle on.
    ///
    /// # Errors
    /// The builder's [`ConfigError`] (`LimitForPeriod should be greater than 0`); nothing
    /// changes.
    pub fn change_limit_for_period(&self, limit: i64) -> Result<(), ConfigError> {
        let config = self.config().to_builder().limit_for_period(limit).build()?;
        self.change_config(config);
        Ok(())
    }

    /// Replaces the whole config in place (what a registry reload does), keeping the
    /// permissions: timeout and limit as [`change_timeout_duration`](Self::change_timeout_duration)
    /// and [`change_limit_for_period`](Self::change_limit_for_period); a new
    /// `limitRefreshPeriod` (which Resilience4j cannot change at run time) starts counting
    /// cycles of the new length from the limiter's creation, the current cycle keeping its
    /// permissions until the next one. The clock stays the one the limiter was created with.
    pub fn change_config(&self, config: RateLimiterConfig) {
        self.change_shared_config(Arc::new(config));
    }

    /// [`change_config`](Self::change_config) with a config shared with its registry.
    pub(crate) fn change_shared_config(&self, config: Arc<RateLimiterConfig>) {
        let _serial = self
            .inner
            .changing
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let old = self.inner.current.load_full();
        let version = old.params.version.wrapping_add(1);
        let next = Current::new(config, version);
        let period = next.params.period;
        let rebase = period != old.params.period;
        let published = next.published();
        self.inner.current.store(Arc::new(next));
        self.inner.params.store(published);
        loop {
            let s = self.inner.cell.load();
            let mut n = s;
            n.version = version;
            if rebase {
                n.cycle = self.now(published.coarse_clock) / period;
            }
            if self.inner.cell.compare_exchange(s, n).is_ok() {
                break;
            }
        }
    }

    /// The metrics for the current time, without reserving anything (Resilience4j's
    /// `getDetailedMetrics()`: `calculateNextState(1, -1)` on the current state).
    pub fn metrics(&self) -> RateLimiterMetrics {
        loop {
            let current = self.inner.params.load();
            let s = self.inner.cell.load();
            if s.version != current.params.version {
                std::thread::yield_now();
                continue;
            }
            let (next, wait, _) =
                cycle::next_state(s, &current.params, self.now(current.coarse_clock), 1, -1);
            return RateLimiterMetrics {
                available_permissions: next.permissions,
                number_of_waiting_threads: self.inner.waiting.load(Ordering::Relaxed),
                nanos_to_wait: wait,
                cycle: next.cycle,
            };
        }
    }

    /// Calls `f` for every event of this limiter, synchronously (Resilience4j's
    /// `getEventPublisher().onEvent`).
    pub fn subscribe(
        &self,
        f: impl Fn(&RateLimiterEvent) + Send + Sync + 'static,
    ) -> SubscriptionId {
        self.inner.publisher.subscribe(f)
    }

    /// Removes a subscriber; `false` if it was not subscribed.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        self.inner.publisher.unsubscribe(id)
    }

    /// The event publisher (for the registry's event buffer).
    pub(crate) fn event_publisher(&self) -> &EventPublisher<RateLimiterEvent> {
        &self.inner.publisher
    }

    #[inline]
    fn finish(&self, granted: bool, permits: u32) -> Result<(), RequestNotPermitted> {
        if granted {
            self.publish(RateLimiterEventType::SuccessfulAcquire, i64::from(permits));
            Ok(())
        } else {
            self.publish(RateLimiterEventType::FailedAcquire, i64::from(permits));
            Err(RequestNotPermitted {
                name: self.inner.reject_name.clone(),
            })
        }
    }

    #[inline]
    fn publish(&self, event_type: RateLimiterEventType, number_of_permits: i64) {
        if self.inner.publisher.any() {
            self.inner.publisher.publish(&RateLimiterEvent {
                rate_limiter_name: self.inner.name.clone(),
                event_type,
                number_of_permits,
                creation_time_nanos: self.inner.clock.recent_nanos(),
            });
        }
    }
}

impl fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimiter")
            .field("name", &self.inner.name)
            .field("metrics", &self.metrics())
            .finish()
    }
}

/// The future of [`RateLimiter::acquire_permission`].
#[must_use = "futures do nothing unless polled"]
pub struct AcquirePermission<'a> {
    limiter: &'a RateLimiter,
    permits: u32,
    state: AcquireState,
}

enum AcquireState {
    Start,
    /// Counted in `numberOfWaitingThreads` until it resolves.
    Waiting {
        sleep: Sleep,
        /// Permits were reserved: granted at the end of the wait. Otherwise (exact mode)
        /// refused then.
        granted: bool,
    },
    Done,
}

impl Future for AcquirePermission<'_> {
    type Output = Result<(), RequestNotPermitted>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let limiter = this.limiter;
        match &mut this.state {
            AcquireState::Start => {
                // Inside a deadline, `timeoutDuration` never beyond the time left; past it,
                // refused at once (breaker's deadlines).
                let left = crate::deadline::remaining();
                let cap = left.map(|left| {
                    let timeout = limiter.inner.params.load().params.timeout;
                    timeout.min(left.as_nanos().min(i64::MAX as u128) as i64)
                });
                if left.is_some_and(|left| left.is_zero()) {
                    this.state = AcquireState::Done;
                    return Poll::Ready(limiter.finish(false, this.permits));
                }
                let (wait, reserved, now, exact) = limiter.decide(this.permits, cap);
                let pause = if reserved {
                    wait
                } else if exact {
                    // Resilience4j parks for the whole timeout before refusing.
                    limiter.inner.params.load().params.timeout
                } else {
                    0
                };
                if pause <= 0 {
                    this.state = AcquireState::Done;
                    return Poll::Ready(limiter.finish(reserved, this.permits));
                }
                let deadline = now.saturating_add(pause);
                limiter.inner.waiting.fetch_add(1, Ordering::Relaxed);
                this.state = AcquireState::Waiting {
                    sleep: limiter
                        .inner
                        .clock
                        .sleep_until(limiter.inner.start.saturating_add(deadline as u64)),
                    granted: reserved,
                };
                Pin::new(this).poll(cx)
            }
            AcquireState::Waiting { sleep, granted, .. } => {
                if Pin::new(sleep).poll(cx).is_pending() {
                    return Poll::Pending;
                }
                let granted = *granted;
                this.state = AcquireState::Done;
                limiter.inner.waiting.fetch_sub(1, Ordering::Relaxed);
                Poll::Ready(limiter.finish(granted, this.permits))
            }
            AcquireState::Done => panic!("AcquirePermission polled after completion"),
        }
    }
}

impl Drop for AcquirePermission<'_> {
    fn drop(&mut self) {
        if let AcquireState::Waiting { .. } = self.state {
            let limiter = self.limiter;
            limiter.inner.waiting.fetch_sub(1, Ordering::Relaxed);
            limiter.publish(RateLimiterEventType::FailedAcquire, i64::from(self.permits));
        }
    }
}
