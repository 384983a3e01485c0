//! [`TimeLimiter`]: one named time limiter, its config, counters and events, and the race
//! of a call against its timeout.

use std::any::Any;
use std::fmt;
use std::future::{poll_fn, Future, IntoFuture};
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::Poll;

use arc_swap::ArcSwap;

use super::config::TimeLimiterConfig;
use super::error::{TimeLimiterError, Timeout};
use super::events::{TimeLimiterEvent, TimeLimiterEventType};
use super::metrics::{Counters, TimeLimiterMetrics};
use crate::events::SubscriptionId;
use crate::instance_registry::RegistryInstance;
use crate::publisher::EventPublisher;
use crate::sleep::Sleep;
use crate::throwable::Throwable;

struct Inner {
    name: Arc<str>,
    config: ArcSwap<TimeLimiterConfig>,
    counters: Counters,
    events: EventPublisher<TimeLimiterEvent>,
}

/// One named time limiter (Resilience4j's `TimeLimiter`). Cheap to clone; clones share the
/// config, counters and subscribers.
///
/// ```
/// use breaker_core::timelimiter::{TimeLimiter, TimeLimiterConfig, TimeLimiterError};
/// use std::time::Duration;
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let limiter = TimeLimiter::new(
///     "backendA",
///     TimeLimiterConfig::builder().timeout_duration(Duration::from_millis(50)).build().unwrap(),
/// );
/// let slow = async {
///     std::future::pending::<()>().await;
///     Ok::<u32, std::io::Error>(1)
/// };
/// let r = limiter.call(slow).await;
/// assert!(matches!(r, Err(TimeLimiterError::Timeout(_))));
/// assert_eq!(
///     r.unwrap_err().to_string(),
///     "TimeLimiter 'backendA' recorded a timeout exception."
/// );
/// # }
/// ```
#[derive(Clone)]
pub struct TimeLimiter {
    inner: Arc<Inner>,
}

impl TimeLimiter {
    /// A time limiter named `name` with `config`.
    pub fn new(name: impl Into<Arc<str>>, config: TimeLimiterConfig) -> Self {
        Self::with_shared_config(name.into(), Arc::new(config))
    }

    /// A time limiter named `name` with Resilience4j's defaults (1 s).
    pub fn of_defaults(name: impl Into<Arc<str>>) -> Self {
        Self::new(name, TimeLimiterConfig::default())
    }

    fn with_shared_config(name: Arc<str>, config: Arc<TimeLimiterConfig>) -> Self {
        TimeLimiter {
            inner: Arc::new(Inner {
                name,
                config: ArcSwap::new(config),
                counters: Counters::default(),
                events: EventPublisher::default(),
            }),
        }
    }

    /// The time limiter's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The config calls start with now.
    pub fn config(&self) -> Arc<TimeLimiterConfig> {
        self.inner.config.load_full()
    }

    /// Replaces the config: calls that start afterwards use it; calls already running keep
    /// their timeout.
    pub fn replace_config(&self, config: TimeLimiterConfig) {
        self.inner.config.store(Arc::new(config));
    }

    /// The counters (what Resilience4j's Micrometer binder counts).
    pub fn metrics(&self) -> TimeLimiterMetrics {
        self.inner.counters.snapshot()
    }

    /// Calls `f` for every event, synchronously, on the task that makes the call. A
    /// subscriber that panics is logged and affects neither the call nor the other
    /// subscribers, as in Resilience4j.
    pub fn subscribe(
        &self,
        f: impl Fn(&TimeLimiterEvent) + Send + Sync + 'static,
    ) -> SubscriptionId {
        self.inner.events.subscribe(f)
    }

    /// Removes a subscriber; `false` if it was not subscribed.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        self.inner.events.unsubscribe(id)
    }

    /// The event publisher (for adapters that keep their own subscriptions).
    pub fn event_publisher(&self) -> &EventPublisher<TimeLimiterEvent> {
        &self.inner.events
    }

    /// Whether two handles are the same time limiter.
    pub fn ptr_eq(&self, other: &TimeLimiter) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Awaits `fut` for at most `timeoutDuration`, on the config's clock, counted from the
    /// end of `fut`'s first poll (as Resilience4j counts from the moment the supplier has
    /// returned its future). The config is read then too: a future that is ready at its
    /// first poll reads neither the config nor the clock.
    ///
    /// `Ok` in time publishes `SUCCESS`; an error in time publishes `ERROR` (or `TIMEOUT`
    /// when the error is itself a [`Timeout`], as an inner `TimeoutException` does in
    /// Resilience4j). When the time runs out first, `TIMEOUT` is published and `fut` is
    /// dropped, which cancels it (see the
    /// [module docs](crate::timelimiter#cancelrunningfuture)). A future that is ready at its
    /// first poll allocates nothing and arms no timer; one that has to wait arms one timer.
    ///
    /// # Errors
    /// [`TimeLimiterError::Timeout`] (`TimeLimiter '<name>' recorded a timeout exception.`)
    /// when the time ran out; [`TimeLimiterError::Inner`] with the call's own error.
    pub async fn call<F, T, E>(&self, fut: F) -> Result<T, TimeLimiterError<E>>
    where
        F: IntoFuture<Output = Result<T, E>>,
        E: Any + fmt::Display,
    {
        if crate::deadline::expired() {
            // breaker's deadlines: past it, the call is not made.
            return Err(self.timed_out(&self.inner.config.load_full()));
        }
        let mut fut = pin!(fut.into_future());
        // Ready at once: no timer, no config.
        let first = poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await;
        if let Poll::Ready(outcome) = first {
            return self.finish_ready(outcome);
        }
        let config = self.inner.config.load_full();
        match self.race(&config, &mut fut, true).await {
            Some(outcome) => self.finish(&config, outcome),
            None => Err(self.timed_out(&config)),
        }
        // `fut` is dropped here: a timed-out call is cancelled.
    }

    /// [`finish`](Self::finish) for a future that was ready at its first poll: the config
    /// is read only if an event has to be built.
    #[inline]
    fn finish_ready<T, E: Any + fmt::Display>(
        &self,
        outcome: Result<T, E>,
    ) -> Result<T, TimeLimiterError<E>> {
        if outcome.is_ok() && !self.inner.events.any() {
            self.inner.counters.count(TimeLimiterEventType::Success);
            return outcome.map_err(TimeLimiterError::Inner);
        }
        let config = self.inner.config.load_full();
        self.finish(&config, outcome)
    }

    /// Like [`call`](Self::call), but honours `cancelRunningFuture: false`: when the time
    /// runs out, `fut` is not dropped but spawned on the tokio runtime, where it runs to
    /// completion with its result discarded, as Resilience4j's `CompletionStage` path leaves
    /// the work running. With `cancelRunningFuture: true`, or outside a tokio runtime, it is
    /// dropped. Allocates the future on the heap (so that it can be handed to the runtime).
    ///
    /// # Errors
    /// As [`call`](Self::call).
    #[cfg(feature = "tokio")]
    pub async fn call_detached<F, T, E>(&self, fut: F) -> Result<T, TimeLimiterError<E>>
    where
        F: Future<Output = Result<T, E>> + Send + 'static,
        T: Send + 'static,
        E: Any + fmt::Display + Send + 'static,
    {
        let config = self.inner.config.load_full();
        let mut fut = Box::pin(fut);
        match self.race(&config, &mut fut, false).await {
            Some(outcome) => self.finish(&config, outcome),
            None => {
                let error = self.timed_out(&config);
                if !config.cancel_running_future {
                    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                        drop(runtime.spawn(fut));
                    }
                }
                Err(error)
            }
        }
    }

    /// Polls `fut` until it finishes (`Some`) or the timeout passes (`None`); the timer is
    /// armed only once `fut` has returned `Pending`. `pending`: `fut` has just returned
    /// `Pending` (its first poll), so the race starts with the timer.
    async fn race<P: Future + Unpin>(
        &self,
        config: &TimeLimiterConfig,
        fut: &mut P,
        mut pending: bool,
    ) -> Option<P::Output> {
        // Inside a deadline, the timeout never outlasts it (see `crate::deadline`).
        let timeout = crate::deadline::clamp(config.timeout_duration);
        let deadline = config
            .clock
            .now_nanos()
            .saturating_add(timeout.as_nanos().min(u64::MAX as u128) as u64);
        let mut timer: Option<Sleep> = None;
        poll_fn(|cx| {
            if !std::mem::take(&mut pending) {
                if let Poll::Ready(outcome) = Pin::new(&mut *fut).poll(cx) {
                    return Poll::Ready(Some(outcome));
                }
            }
            let timer = timer.get_or_insert_with(|| config.clock.sleep_until(deadline));
            Pin::new(timer).poll(cx).map(|()| None)
        })
        .await
    }

    fn finish<T, E: Any + fmt::Display>(
        &self,
        config: &TimeLimiterConfig,
        outcome: Result<T, E>,
    ) -> Result<T, TimeLimiterError<E>> {
        match outcome {
            Ok(v) => {
                self.record(config, TimeLimiterEventType::Success, None::<&E>);
                Ok(v)
            }
            Err(e) => {
                if (&e as &dyn Any).is::<Timeout>() {
                    self.record(config, TimeLimiterEventType::Timeout, None::<&E>);
                } else {
                    self.record(config, TimeLimiterEventType::Error, Some(&e));
                }
                Err(TimeLimiterError::Inner(e))
            }
        }
    }

    fn timed_out<E>(&self, config: &TimeLimiterConfig) -> TimeLimiterError<E> {
        self.record(config, TimeLimiterEventType::Timeout, None::<&String>);
        TimeLimiterError::Timeout(Timeout {
            name: self.inner.name.clone(),
            timeout: config.timeout_duration,
        })
    }

    fn record<E: fmt::Display>(
        &self,
        config: &TimeLimiterConfig,
        kind: TimeLimiterEventType,
        error: Option<&E>,
    ) {
        self.inner.counters.count(kind);
        if self.inner.events.any() {
            self.inner.events.publish(&TimeLimiterEvent {
                time_limiter_name: self.inner.name.clone(),
                event_type: kind,
                throwable: error.map(Throwable::of),
                creation_time_nanos: config.clock.now_nanos(),
            });
        }
    }
}

impl fmt::Debug for TimeLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimeLimiter")
            .field("name", &self.name())
            .field("metrics", &self.metrics())
            .finish_non_exhaustive()
    }
}

impl RegistryInstance for TimeLimiter {
    type Config = TimeLimiterConfig;
    type Event = TimeLimiterEvent;

    fn default_config() -> TimeLimiterConfig {
        TimeLimiterConfig::default()
    }
    fn create(name: &str, config: Arc<TimeLimiterConfig>) -> Self {
        TimeLimiter::with_shared_config(name.into(), config)
    }
    fn name(&self) -> &str {
        TimeLimiter::name(self)
    }
    fn config(&self) -> Arc<TimeLimiterConfig> {
        TimeLimiter::config(self)
    }
    fn replace_config(&self, config: Arc<TimeLimiterConfig>) {
        self.inner.config.store(config);
    }
    fn event_publisher(&self) -> &EventPublisher<TimeLimiterEvent> {
        TimeLimiter::event_publisher(self)
    }
}
