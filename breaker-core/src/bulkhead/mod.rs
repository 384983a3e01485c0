//! Bulkheads: Resilience4j's semaphore `Bulkhead` and its `ThreadPoolBulkhead`, with their
//! configs, events, metrics, rejection error and registries.
//!
//! # Semaphore bulkhead
//!
//! [`Bulkhead`] admits at most `maxConcurrentCalls` calls at once. A call that finds it full
//! waits up to `maxWaitDuration` (whole ms, by the bulkhead's [`Clock`](crate::Clock), without
//! blocking a thread), then fails with [`BulkheadFullException`]
//! (`Bulkhead '<name>' is full and does not permit further calls`). Waiting calls are served
//! in arrival order; with `fairCallHandlingStrategyEnabled` (the default) nobody takes a
//! permit while anyone waits, without it a new call may take a free permit first. Events:
//! `CALL_PERMITTED` and `CALL_REJECTED` on acquire, `CALL_FINISHED` when an admitted call
//! ends. Every admitted call returns its permit exactly once ([`BulkheadPermit`]), on
//! success, error, panic or cancellation; a waiter that gives up or is dropped never
//! consumes a permit.
//!
//! [`Bulkhead::change_config`] is Resilience4j's `changeConfig`: the limit moves by the
//! difference between the new and the old `maxConcurrentCalls`; a decrease waits for enough
//! calls to finish (the old limit is reported and, when fair, nobody is admitted meanwhile),
//! without blocking the caller.
//!
//! # Thread-pool bulkhead on an async runtime
//!
//! [`ThreadPoolBulkhead`] maps Java's executor onto async tasks: `maxThreadPoolSize` calls
//! run at once, `queueCapacity` more wait in a FIFO queue, and a submission finding both
//! full is rejected at once with the same [`BulkheadFullException`]. `CALL_PERMITTED` is
//! published when a call starts running, as in Java. `coreThreadPoolSize` and
//! `keepAliveDuration` are validated with Resilience4j's messages and reported in the
//! metrics, but an async runtime has no idle threads to keep, so they do not change
//! admission (Java's executor runs only `coreThreadPoolSize` tasks until its queue is full;
//! here `maxThreadPoolSize` run whenever there are that many). See
//! [`ThreadPoolBulkheadConfig`].
//!
//! # Where this differs from Resilience4j
//!
//! - **A release without an acquire is ignored.** Resilience4j's semaphore has no
//!   bookkeeping: `onComplete()` or `releasePermission()` called more often than permits were
//!   taken (twice for one call, or for a rejected call) raises `availableConcurrentCalls`
//!   above `maxConcurrentCalls` for good, and `changeConfig` keeps the inflation. Here a
//!   permit is returned once by construction ([`BulkheadPermit`]), and the manual
//!   [`Bulkhead::on_complete`] / [`Bulkhead::release_permission`] return nothing (and
//!   publish nothing) when every permit is already back.
//! - **`changeConfig` never blocks its caller.** Resilience4j blocks the changing thread
//!   until a decrease gets its permits (and a second change waits behind the first); here
//!   the decrease completes by itself as calls finish, and a change made meanwhile replaces
//!   it, counted from the config still in force.
//! - A waiting call is a suspended task, not a blocked thread, and cannot be interrupted
//!   (Java's `AcquirePermissionCancelledException`); dropping its future is the way out.
//! - `ThreadPoolBulkheadConfig.from(base)` in Resilience4j mutates and returns `base`;
//!   [`ThreadPoolBulkheadConfig::to_builder`] copies.
//!
//! `BulkheadConfig::builder().exact_resilience4j(true)` restores the first behaviour (the
//! conformance vectors that complete calls holding no permit replay in that mode).

mod call;
mod config;
mod error;
mod events;
mod fleet;
mod metrics;
mod permit;
mod registry;
mod semaphore;
mod semaphore_bulkhead;
mod shared;
mod threadpool;
mod threadpool_config;

pub use crate::instance_registry::RegistryEntryEvent;
pub use call::BulkheadCall;
pub use config::{BulkheadConfig, BulkheadConfigBuilder, DEFAULT_MAX_CONCURRENT_CALLS};
pub use error::{BulkheadError, BulkheadFullException};
pub use events::{BulkheadEvent, BulkheadEventType};
pub use fleet::SharedConcurrency;
pub use metrics::{BulkheadMetrics, ThreadPoolBulkheadMetrics};
pub use permit::BulkheadPermit;
pub use registry::{BulkheadRegistry, ThreadPoolBulkheadRegistry};
pub use semaphore_bulkhead::{Acquire, Bulkhead};
pub use threadpool::ThreadPoolBulkhead;
pub use threadpool_config::{
    ThreadPoolBulkheadConfig, ThreadPoolBulkheadConfigBuilder, DEFAULT_KEEP_ALIVE_DURATION,
    DEFAULT_QUEUE_CAPACITY,
};
