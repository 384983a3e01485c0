//! [`Bulkhead`]: Resilience4j's `SemaphoreBulkhead`, a limit on concurrent calls.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use super::call::BulkheadCall;
use super::config::BulkheadConfig;
use super::error::{BulkheadError, BulkheadFullException};
use super::events::{BulkheadEvent, BulkheadEventType};
use super::fleet::SharedConcurrency;
use super::metrics::BulkheadMetrics;
use super::permit::BulkheadPermit;
use super::semaphore::{Admission, Semaphore, WaitPermit};
use super::shared::BulkheadCore;
use crate::events::SubscriptionId;
use crate::publisher::EventPublisher;
use crate::sleep::Sleep;

/// A semaphore bulkhead: at most `maxConcurrentCalls` calls in flight; a call that finds it
/// full waits up to `maxWaitDuration` for a permit, then is rejected with
/// [`BulkheadFullException`].
///
/// Cloning is cheap and every clone is the same bulkhead. Taking and returning a permit is
/// one compare-and-swap each and allocates nothing; only a call that has to wait takes the
/// queue's lock. Waiting calls are served in arrival order (with
/// `fairCallHandlingStrategyEnabled`, the default, nobody takes a permit past them); a
/// waiter that gives up or is dropped never consumes a permit.
///
/// ```
/// use breaker_core::bulkhead::{Bulkhead, BulkheadConfig};
/// let bulkhead = Bulkhead::new("inventory", BulkheadConfig::builder().max_concurrent_calls(1).build()?);
/// let permit = bulkhead.try_acquire_permission()?;
/// let rejected = bulkhead.try_acquire_permission().unwrap_err();
/// assert_eq!(rejected.to_string(), "Bulkhead 'inventory' is full and does not permit further calls");
/// drop(permit); // the call finished: CALL_FINISHED, permit returned
/// assert_eq!(bulkhead.metrics().available_concurrent_calls, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Bulkhead {
    inner: Arc<BulkheadCore<BulkheadConfig>>,
}

impl Bulkhead {
    /// A bulkhead named `name` with `config`'s limit free. Its clock and fairness are
    /// `config`'s for its whole life.
    pub fn new(name: impl Into<Arc<str>>, config: BulkheadConfig) -> Self {
        Self::with_shared_config(name.into(), Arc::new(config))
    }

    /// [`new`](Self::new) with a config shared with its registry.
    pub(crate) fn with_shared_config(name: Arc<str>, config: Arc<BulkheadConfig>) -> Self {
        let clock = config.clock.clone();
        let semaphore = Semaphore::new(
            u64::from(config.max_concurrent_calls),
            config.fair_call_handling_enabled,
            !config.exact_resilience4j,
            config,
        );
        Bulkhead {
            inner: Arc::new(BulkheadCore::new(name, clock, semaphore)),
        }
    }

    /// A bulkhead with Resilience4j's default config (25 calls, no wait).
    pub fn with_defaults(name: impl Into<Arc<str>>) -> Self {
        Self::new(name, BulkheadConfig::default())
    }

    /// The bulkhead's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The config in force.
    pub fn config(&self) -> Arc<BulkheadConfig> {
        self.inner.semaphore.config_full()
    }

    /// Whether two handles are the same bulkhead.
    pub fn ptr_eq(&self, other: &Bulkhead) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Takes a permit if one is free now, without waiting (Resilience4j's
    /// `tryAcquirePermission()` with `maxWaitDuration` 0). Publishes `CALL_PERMITTED` or
    /// `CALL_REJECTED`. One compare-and-swap; allocates nothing.
    ///
    /// # Errors
    /// [`BulkheadFullException`] when no permit is free, or (fair bulkhead) when calls or a
    /// limit decrease are already waiting.
    #[inline]
    pub fn try_acquire_permission(&self) -> Result<BulkheadPermit<'_>, BulkheadFullException> {
        if self.inner.semaphore.try_acquire() {
            self.confirmed()
        } else {
            Err(self.rejected())
        }
    }

    /// Takes a permit, waiting up to `maxWaitDuration` (by the bulkhead's clock) for one
    /// (Resilience4j's `acquirePermission()`, without blocking a thread). Waiting calls are
    /// served in arrival order; dropping the future leaves the queue without consuming a
    /// permit.
    ///
    /// # Errors
    /// The future resolves to [`BulkheadFullException`] when no permit came within the wait.
    pub fn acquire_permission(&self) -> Acquire<'_> {
        Acquire {
            bulkhead: self,
            state: AcquireState::Start,
        }
    }

    /// Runs `fut` holding a permit (waiting up to `maxWaitDuration` for one), and returns the
    /// permit when it ends: on success, error, panic or when the returned future is dropped
    /// (`CALL_FINISHED` in every case, as Resilience4j's decorators' `finally`).
    ///
    /// # Errors
    /// [`BulkheadError::Full`] without polling `fut` when no permit came in time;
    /// [`BulkheadError::Inner`] with the call's own error.
    #[inline]
    pub fn call<F, T, E>(&self, fut: F) -> BulkheadCall<'_, F>
    where
        F: IntoFuture<Output = Result<T, E>>,
    {
        BulkheadCall::new(self, fut)
    }

    /// The synchronous form of [`call`](Self::call): runs `f` if a permit is free now (it
    /// never waits, so `maxWaitDuration` does not apply).
    ///
    /// # Errors
    /// As [`call`](Self::call).
    pub fn call_sync<T, E>(&self, f: impl FnOnce() -> Result<T, E>) -> Result<T, BulkheadError<E>> {
        let permit = self.try_acquire_permission()?;
        let result = f();
        permit.on_complete();
        result.map_err(BulkheadError::Inner)
    }

    /// Replaces the config (Resilience4j's `changeConfig`). `maxConcurrentCalls` changes by
    /// the difference between the new and the old limit: an increase frees permits at once;
    /// a decrease takes permits back as calls finish, and until it has them all
    /// `max_allowed_concurrent_calls` reports the old limit, the old config stays in force
    /// and (fair bulkhead) no new call is admitted. It never blocks the caller: see
    /// [`is_config_change_pending`](Self::is_config_change_pending). A change made while a
    /// decrease still waits replaces it. `maxWaitDuration` applies to calls that start
    /// waiting afterwards. Fairness and the clock stay those the bulkhead was created with.
    pub fn change_config(&self, config: BulkheadConfig) {
        self.change_shared_config(Arc::new(config));
    }

    /// [`change_config`](Self::change_config) with a config shared with its registry.
    pub(crate) fn change_shared_config(&self, config: Arc<BulkheadConfig>) {
        let guard = !config.exact_resilience4j;
        self.inner
            .change_config(config, |c| c.max_concurrent_calls, guard);
    }

    /// Whether a decrease of `maxConcurrentCalls` is still waiting for calls to finish.
    pub fn is_config_change_pending(&self) -> bool {
        self.inner.semaphore.is_shrink_pending()
    }

    /// The metrics (`getMetrics()`).
    pub fn metrics(&self) -> BulkheadMetrics {
        BulkheadMetrics {
            available_concurrent_calls: self.inner.semaphore.available() as u32,
            max_allowed_concurrent_calls: self.inner.semaphore.config().max_concurrent_calls,
        }
    }

    /// Resilience4j's `onComplete()` for a permit detached with [`BulkheadPermit::forget`]:
    /// returns one permit and publishes `CALL_FINISHED`.
    ///
    /// Resilience4j does not check that a permit is out, so completing more often than
    /// permits were taken raises the capacity above `maxConcurrentCalls` for good; that is
    /// what exact Resilience4j mode does. By default a completion with every permit already
    /// back changes nothing and publishes nothing.
    pub fn on_complete(&self) {
        if self.inner.semaphore.release(1) {
            self.released_fleet();
            self.publish(BulkheadEventType::CallFinished);
        }
    }

    /// Resilience4j's `releasePermission()` for a permit detached with
    /// [`BulkheadPermit::forget`]: returns one permit, publishes nothing. Guarded as
    /// [`on_complete`](Self::on_complete).
    pub fn release_permission(&self) {
        if self.inner.semaphore.release(1) {
            self.released_fleet();
        }
    }

    /// Calls `f` for every event of this bulkhead, synchronously (Resilience4j's
    /// `getEventPublisher().onEvent`).
    pub fn subscribe(&self, f: impl Fn(&BulkheadEvent) + Send + Sync + 'static) -> SubscriptionId {
        self.inner.publisher.subscribe(f)
    }

    /// Removes a subscriber; `false` if it was not subscribed.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        self.inner.publisher.unsubscribe(id)
    }

    /// The event publisher (for the registry's event buffer).
    pub(crate) fn event_publisher(&self) -> &EventPublisher<BulkheadEvent> {
        &self.inner.publisher
    }

    /// A permit if one is free now (publishing `CALL_PERMITTED`); `None` (publishing
    /// nothing) otherwise, for [`BulkheadCall`] to wait or reject through [`Acquire`], which
    /// tries once more and publishes the outcome.
    #[inline]
    pub(crate) fn try_acquire_now(&self) -> Option<BulkheadPermit<'_>> {
        // Past a deadline in scope, [`Acquire`] rejects the call (breaker's deadlines).
        if !crate::deadline::expired() && self.inner.semaphore.try_acquire() {
            Some(self.permitted())
        } else {
            None
        }
    }

    #[inline]
    pub(crate) fn release_one(&self, finished: bool) {
        let returned = self.inner.semaphore.release(1);
        if returned {
            self.released_fleet();
        }
        if finished && returned {
            self.publish(BulkheadEventType::CallFinished);
        }
    }

    pub(super) fn fleet_cell(&self) -> &OnceLock<Arc<dyn SharedConcurrency>> {
        &self.inner.fleet
    }

    /// A permit taken locally, confirmed by the fleet's store if one is attached (issue
    /// #29): refused there, the local permit goes back and the call is rejected.
    #[inline]
    fn confirmed(&self) -> Result<BulkheadPermit<'_>, BulkheadFullException> {
        match self.inner.fleet.get() {
            None => Ok(self.permitted()),
            Some(store) => self.confirm_shared(store.as_ref()),
        }
    }

    #[cold]
    fn confirm_shared(
        &self,
        store: &dyn SharedConcurrency,
    ) -> Result<BulkheadPermit<'_>, BulkheadFullException> {
        if store.acquire(self) {
            Ok(self.permitted())
        } else {
            self.inner.semaphore.release(1);
            Err(self.rejected())
        }
    }

    #[inline]
    fn released_fleet(&self) {
        if let Some(store) = self.inner.fleet.get() {
            store.release(self);
        }
    }

    #[inline]
    fn permitted(&self) -> BulkheadPermit<'_> {
        self.publish(BulkheadEventType::CallPermitted);
        BulkheadPermit::new(self)
    }

    #[inline]
    fn rejected(&self) -> BulkheadFullException {
        self.publish(BulkheadEventType::CallRejected);
        BulkheadFullException {
            name: self.inner.reject_name.clone(),
        }
    }

    #[inline]
    fn publish(&self, event_type: BulkheadEventType) {
        self.inner.publish(event_type);
    }
}

impl fmt::Debug for Bulkhead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bulkhead")
            .field("name", &self.inner.name)
            .field("metrics", &self.metrics())
            .finish()
    }
}

/// The future of [`Bulkhead::acquire_permission`].
#[must_use = "futures do nothing unless polled"]
pub struct Acquire<'a> {
    bulkhead: &'a Bulkhead,
    state: AcquireState<'a>,
}

enum AcquireState<'a> {
    Start,
    Waiting {
        wait: WaitPermit<'a, BulkheadConfig>,
        sleep: Sleep,
    },
    Done,
}

impl<'a> Future for Acquire<'a> {
    type Output = Result<BulkheadPermit<'a>, BulkheadFullException>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let bulkhead = this.bulkhead;
        let semaphore = &bulkhead.inner.semaphore;
        match &mut this.state {
            AcquireState::Start => {
                if crate::deadline::expired() {
                    // breaker's deadlines: past it, the call is not made.
                    this.state = AcquireState::Done;
                    return Poll::Ready(Err(bulkhead.rejected()));
                }
                if semaphore.try_acquire() {
                    this.state = AcquireState::Done;
                    return Poll::Ready(bulkhead.confirmed());
                }
                // Inside a deadline, never beyond the time left.
                let max_wait = crate::deadline::clamp(semaphore.config().max_wait_duration());
                if max_wait.is_zero() {
                    this.state = AcquireState::Done;
                    return Poll::Ready(Err(bulkhead.rejected()));
                }
                match semaphore.acquire_or_enqueue(None) {
                    Admission::Granted => {
                        this.state = AcquireState::Done;
                        Poll::Ready(bulkhead.confirmed())
                    }
                    Admission::Full => {
                        this.state = AcquireState::Done;
                        Poll::Ready(Err(bulkhead.rejected()))
                    }
                    Admission::Queued(waiter) => {
                        this.state = AcquireState::Waiting {
                            wait: WaitPermit::new(semaphore, waiter),
                            sleep: bulkhead.inner.clock.sleep(max_wait),
                        };
                        Pin::new(this).poll(cx)
                    }
                }
            }
            AcquireState::Waiting { wait, sleep } => {
                if Pin::new(&mut *wait).poll(cx).is_ready() {
                    this.state = AcquireState::Done;
                    return Poll::Ready(bulkhead.confirmed());
                }
                if Pin::new(sleep).poll(cx).is_ready() {
                    let granted = wait.give_up();
                    this.state = AcquireState::Done;
                    return Poll::Ready(if granted {
                        bulkhead.confirmed()
                    } else {
                        Err(bulkhead.rejected())
                    });
                }
                Poll::Pending
            }
            AcquireState::Done => panic!("Acquire polled after completion"),
        }
    }
}
