//! Bulkhead metrics: Resilience4j's `Bulkhead.Metrics` and `ThreadPoolBulkhead.Metrics`.

/// A semaphore bulkhead's metrics (`Bulkhead.Metrics`), read at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkheadMetrics {
    /// `getAvailableConcurrentCalls()`: free permits. In exact Resilience4j mode a release
    /// without an acquire can raise it above the limit.
    pub available_concurrent_calls: u32,
    /// `getMaxAllowedConcurrentCalls()`: `maxConcurrentCalls` of the config in force (while a
    /// decrease waits for calls to finish, still the old limit).
    pub max_allowed_concurrent_calls: u32,
}

/// A thread-pool bulkhead's metrics (`ThreadPoolBulkhead.Metrics`), read at one instant.
///
/// The pool is a concurrency limit of `maxThreadPoolSize` running calls plus a queue of
/// `queueCapacity` calls waiting to run (see [`ThreadPoolBulkhead`](super::ThreadPoolBulkhead)):
/// "threads" are running calls here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadPoolBulkheadMetrics {
    /// `getCoreThreadPoolSize()`: the configured `coreThreadPoolSize`.
    pub core_thread_pool_size: u32,
    /// `getMaximumThreadPoolSize()`: the configured `maxThreadPoolSize`, the limit of
    /// running calls.
    pub maximum_thread_pool_size: u32,
    /// `getThreadPoolSize()`: calls running now (an async pool keeps no idle threads).
    pub thread_pool_size: u32,
    /// `getActiveThreadCount()`: calls running now.
    pub active_thread_count: u32,
    /// `getAvailableThreadCount()`: `maxThreadPoolSize` minus the running calls.
    pub available_thread_count: u32,
    /// `getQueueDepth()`: calls waiting to run.
    pub queue_depth: u32,
    /// `getRemainingQueueCapacity()`: `queueCapacity` minus the waiting calls.
    pub remaining_queue_capacity: u32,
    /// `getQueueCapacity()`: the configured `queueCapacity`.
    pub queue_capacity: u32,
}
