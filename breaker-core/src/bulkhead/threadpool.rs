//! [`ThreadPoolBulkhead`]: Resilience4j's `FixedThreadPoolBulkhead` mapped onto an async
//! runtime.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::sync::Arc;

use super::error::{BulkheadError, BulkheadFullException};
use super::events::{BulkheadEvent, BulkheadEventType};
use super::metrics::ThreadPoolBulkheadMetrics;
use super::semaphore::{Admission, Semaphore, WaitPermit};
use super::shared::BulkheadCore;
use super::threadpool_config::ThreadPoolBulkheadConfig;
use crate::events::SubscriptionId;
use crate::publisher::EventPublisher;

/// A thread-pool bulkhead on an async runtime: at most `maxThreadPoolSize` calls run at
/// once, at most `queueCapacity` more wait in a FIFO queue to start, and a call submitted
/// when both are full is rejected at once, at submission, with [`BulkheadFullException`]
/// (Java's `submit` throws synchronously; it does not return a failed future).
///
/// Java runs each call on a dedicated pool thread; here the call runs in the caller's task,
/// so isolation is of concurrency, not of threads. Resilience4j's events keep their meaning:
/// `CALL_PERMITTED` when a call starts running (a queued call publishes nothing until then),
/// `CALL_FINISHED` when it ends (also on error, panic or cancellation), `CALL_REJECTED` at
/// submission. Capacity before rejection is `maxThreadPoolSize + queueCapacity`, as in
/// Java. Java's executor grows from `coreThreadPoolSize` to `maxThreadPoolSize` threads only
/// once the queue is full; an async task costs nothing idle, so here `maxThreadPoolSize`
/// calls run whenever there are that many (`coreThreadPoolSize` and `keepAliveDuration` are
/// validated and reported only).
///
/// ```
/// use breaker_core::bulkhead::{ThreadPoolBulkhead, ThreadPoolBulkheadConfig};
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let config = ThreadPoolBulkheadConfig::builder()
///     .max_thread_pool_size(1)
///     .core_thread_pool_size(1)
///     .queue_capacity(1)
///     .build()?;
/// let pool = ThreadPoolBulkhead::new("tp", config);
/// let first = pool.submit(async { 1 })?; // runs
/// let second = pool.submit(async { 2 })?; // queued
/// let third = pool.submit(async { 3 }).map(drop).unwrap_err();
/// assert_eq!(third.to_string(), "Bulkhead 'tp' is full and does not permit further calls");
/// assert_eq!(pool.metrics().queue_depth, 1);
/// assert_eq!(first.await + second.await, 3);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ThreadPoolBulkhead {
    inner: Arc<BulkheadCore<ThreadPoolBulkheadConfig>>,
}

impl ThreadPoolBulkhead {
    /// A thread-pool bulkhead named `name`. Its clock is `config`'s for its whole life.
    pub fn new(name: impl Into<Arc<str>>, config: ThreadPoolBulkheadConfig) -> Self {
        Self::with_shared_config(name.into(), Arc::new(config))
    }

    /// [`new`](Self::new) with a config shared with its registry.
    pub(crate) fn with_shared_config(
        name: Arc<str>,
        config: Arc<ThreadPoolBulkheadConfig>,
    ) -> Self {
        let clock = config.clock.clone();
        let semaphore = Semaphore::new(u64::from(config.max_thread_pool_size), true, true, config);
        ThreadPoolBulkhead {
            inner: Arc::new(BulkheadCore::new(name, clock, semaphore)),
        }
    }

    /// A thread-pool bulkhead with Resilience4j's default config.
    pub fn with_defaults(name: impl Into<Arc<str>>) -> Self {
        Self::new(name, ThreadPoolBulkheadConfig::default())
    }

    /// The bulkhead's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The config in force.
    pub fn config(&self) -> Arc<ThreadPoolBulkheadConfig> {
        self.inner.semaphore.config_full()
    }

    /// Whether two handles are the same bulkhead.
    pub fn ptr_eq(&self, other: &ThreadPoolBulkhead) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Submits `fut` (Resilience4j's `submit`): admits it now, to run at once if fewer than
    /// `maxThreadPoolSize` calls run, or queued behind the waiting calls if fewer than
    /// `queueCapacity` wait. The returned future waits for its turn, runs `fut`
    /// (`CALL_PERMITTED`), and gives the slot back when it ends (`CALL_FINISHED`). Dropping
    /// it before it starts leaves the queue and publishes nothing; dropping it while it runs
    /// counts as finished. Allocates nothing unless the call has to queue.
    ///
    /// # Errors
    /// [`BulkheadFullException`] at once (publishing `CALL_REJECTED`) when every slot runs
    /// and the queue is full.
    pub fn submit<'a, F>(
        &'a self,
        fut: F,
    ) -> Result<impl Future<Output = F::Output> + Send + 'a, BulkheadFullException>
    where
        F: IntoFuture,
        F::IntoFuture: Send + 'a,
    {
        let ticket = self.admit()?;
        let fut = fut.into_future();
        Ok(async move {
            let _running = ticket.start().await;
            fut.await
        })
    }

    /// Runs `fut` through the bulkhead, as [`submit`](Self::submit) then awaiting it; unlike
    /// `submit`, `fut` need not be `Send` (the call runs in the caller's task).
    ///
    /// # Errors
    /// [`BulkheadError::Full`] when rejected at submission; [`BulkheadError::Inner`] with the
    /// call's own error.
    pub async fn call<F, T, E>(&self, fut: F) -> Result<T, BulkheadError<E>>
    where
        F: IntoFuture<Output = Result<T, E>>,
    {
        // A free slot: run at once, as `submit` would, without its queue ticket.
        if self.inner.semaphore.try_acquire() {
            self.publish(BulkheadEventType::CallPermitted);
            let _running = Running { pool: self };
            return fut.await.map_err(BulkheadError::Inner);
        }
        let ticket = self.admit()?;
        let fut = fut.into_future();
        let _running = ticket.start().await;
        fut.await.map_err(BulkheadError::Inner)
    }

    fn admit(&self) -> Result<Ticket<'_>, BulkheadFullException> {
        let semaphore = &self.inner.semaphore;
        if semaphore.try_acquire() {
            return Ok(Ticket {
                pool: self,
                wait: None,
                holds_permit: true,
            });
        }
        let capacity = semaphore.config().queue_capacity as usize;
        match semaphore.acquire_or_enqueue(Some(capacity)) {
            Admission::Granted => Ok(Ticket {
                pool: self,
                wait: None,
                holds_permit: true,
            }),
            Admission::Queued(waiter) => Ok(Ticket {
                pool: self,
                wait: Some(WaitPermit::new(semaphore, waiter)),
                holds_permit: false,
            }),
            Admission::Full => {
                self.publish(BulkheadEventType::CallRejected);
                Err(BulkheadFullException {
                    name: self.inner.reject_name.clone(),
                })
            }
        }
    }

    /// Replaces the config: `maxThreadPoolSize` changes as a semaphore bulkhead's limit does
    /// (an increase starts queued calls at once; a decrease waits for running calls to
    /// finish); `queueCapacity` bounds later submissions (calls already queued stay).
    /// Resilience4j's thread-pool bulkhead cannot be reconfigured; this is what a reload
    /// of the file does here.
    pub fn change_config(&self, config: ThreadPoolBulkheadConfig) {
        self.change_shared_config(Arc::new(config));
    }

    /// [`change_config`](Self::change_config) with a config shared with its registry.
    pub(crate) fn change_shared_config(&self, config: Arc<ThreadPoolBulkheadConfig>) {
        self.inner
            .change_config(config, |c| c.max_thread_pool_size, true);
    }

    /// The metrics (`getMetrics()`).
    pub fn metrics(&self) -> ThreadPoolBulkheadMetrics {
        let config = self.inner.semaphore.config();
        let queued = self.inner.semaphore.queued_calls() as u32;
        let free = self.inner.semaphore.available() as u32;
        let running = config.max_thread_pool_size.saturating_sub(free);
        ThreadPoolBulkheadMetrics {
            core_thread_pool_size: config.core_thread_pool_size,
            maximum_thread_pool_size: config.max_thread_pool_size,
            thread_pool_size: running,
            active_thread_count: running,
            available_thread_count: config.max_thread_pool_size - running,
            queue_depth: queued,
            remaining_queue_capacity: config.queue_capacity.saturating_sub(queued),
            queue_capacity: config.queue_capacity,
        }
    }

    /// Calls `f` for every event of this bulkhead, synchronously.
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

    #[inline]
    fn publish(&self, event_type: BulkheadEventType) {
        self.inner.publish(event_type);
    }
}

impl fmt::Debug for ThreadPoolBulkhead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPoolBulkhead")
            .field("name", &self.inner.name)
            .field("metrics", &self.metrics())
            .finish()
    }
}

/// An admitted submission: a running slot, or a place in the queue.
struct Ticket<'a> {
    pool: &'a ThreadPoolBulkhead,
    wait: Option<WaitPermit<'a, ThreadPoolBulkheadConfig>>,
    /// The slot is ours but the call has not started: dropping returns it silently.
    holds_permit: bool,
}

impl<'a> Ticket<'a> {
    /// Waits for a running slot, then starts the call.
    async fn start(mut self) -> Running<'a> {
        if let Some(wait) = &mut self.wait {
            wait.await;
            self.wait = None;
        }
        self.holds_permit = false;
        self.pool.publish(BulkheadEventType::CallPermitted);
        Running { pool: self.pool }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        // A queued ticket's WaitPermit leaves the queue by itself when dropped.
        if self.holds_permit {
            self.pool.inner.semaphore.release(1);
        }
    }
}

/// A running call's slot: returned, with `CALL_FINISHED`, when the call ends in any way.
struct Running<'a> {
    pool: &'a ThreadPoolBulkhead,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.pool.inner.semaphore.release(1);
        self.pool.publish(BulkheadEventType::CallFinished);
    }
}
