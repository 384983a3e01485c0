//! The meters of the other modules (integration spec §3.3-§3.7), all read at scrape time
//! from each instance's metrics: the retry's and the time limiter's counters are the
//! instance's own (monotonic) counts, set as absolute values, so no module costs anything
//! per call.

use breaker_core::bulkhead::{Bulkhead, ThreadPoolBulkhead};
use breaker_core::ratelimiter::RateLimiter;
use breaker_core::retry::Retry;
use breaker_core::timelimiter::TimeLimiter;
use metrics::{Counter, Gauge};

use crate::family::Meters;
use crate::names::{self, KIND};
use crate::register::{counter, gauge, Tags};

/// `resilience4j_retry_calls_total{kind}` (§3.3).
pub(crate) struct RetryMeters {
    retry: Retry,
    live: bool,
    /// successful_without_retry, successful_with_retry, failed_without_retry,
    /// failed_with_retry.
    calls: [Counter; 4],
}

impl Meters for RetryMeters {
    type Instance = Retry;

    fn register(retry: &Retry, tags: &Tags, live: bool) -> Self {
        RetryMeters {
            retry: retry.clone(),
            live,
            calls: [
                "successful_without_retry",
                "successful_with_retry",
                "failed_without_retry",
                "failed_with_retry",
            ]
            .map(|k| counter(names::RETRY_CALLS, &tags.with(KIND, k))),
        }
    }
    fn live(&self) -> bool {
        self.live
    }
    fn instance(&self) -> &Retry {
        &self.retry
    }
    fn refresh(&self) {
        let m = self.retry.metrics();
        self.calls[0].absolute(m.number_of_successful_calls_without_retry_attempt);
        self.calls[1].absolute(m.number_of_successful_calls_with_retry_attempt);
        self.calls[2].absolute(m.number_of_failed_calls_without_retry_attempt);
        self.calls[3].absolute(m.number_of_failed_calls_with_retry_attempt);
    }
}

/// `resilience4j_timelimiter_calls_total{kind}` (§3.7).
pub(crate) struct TimeLimiterMeters {
    limiter: TimeLimiter,
    live: bool,
    /// successful, failed, timeout.
    calls: [Counter; 3],
}

impl Meters for TimeLimiterMeters {
    type Instance = TimeLimiter;

    fn register(limiter: &TimeLimiter, tags: &Tags, live: bool) -> Self {
        TimeLimiterMeters {
            limiter: limiter.clone(),
            live,
            calls: ["successful", "failed", "timeout"]
                .map(|k| counter(names::TL_CALLS, &tags.with(KIND, k))),
        }
    }
    fn live(&self) -> bool {
        self.live
    }
    fn instance(&self) -> &TimeLimiter {
        &self.limiter
    }
    fn refresh(&self) {
        let m = self.limiter.metrics();
        self.calls[0].absolute(m.number_of_successful_calls);
        self.calls[1].absolute(m.number_of_failed_calls);
        self.calls[2].absolute(m.number_of_timeout_calls);
    }
}

/// `resilience4j_bulkhead_available_concurrent_calls`, `..._max_allowed_concurrent_calls`
/// (§3.4).
pub(crate) struct BulkheadMeters {
    bulkhead: Bulkhead,
    live: bool,
    available: Gauge,
    max_allowed: Gauge,
}

impl Meters for BulkheadMeters {
    type Instance = Bulkhead;

    fn register(bulkhead: &Bulkhead, tags: &Tags, live: bool) -> Self {
        BulkheadMeters {
            bulkhead: bulkhead.clone(),
            live,
            available: gauge(names::BH_AVAILABLE, tags),
            max_allowed: gauge(names::BH_MAX_ALLOWED, tags),
        }
    }
    fn live(&self) -> bool {
        self.live
    }
    fn instance(&self) -> &Bulkhead {
        &self.bulkhead
    }
    fn refresh(&self) {
        let m = self.bulkhead.metrics();
        self.available.set(m.available_concurrent_calls);
        self.max_allowed.set(m.max_allowed_concurrent_calls);
    }
}

/// The seven thread-pool gauges, under the shared `resilience4j.bulkhead` prefix (§3.5).
pub(crate) struct ThreadPoolBulkheadMeters {
    pool: ThreadPoolBulkhead,
    live: bool,
    /// queue depth, queue capacity, thread pool size, max thread pool size, core thread
    /// pool size, active thread count, available thread count.
    gauges: [Gauge; 7],
}

impl Meters for ThreadPoolBulkheadMeters {
    type Instance = ThreadPoolBulkhead;

    fn register(pool: &ThreadPoolBulkhead, tags: &Tags, live: bool) -> Self {
        ThreadPoolBulkheadMeters {
            pool: pool.clone(),
            live,
            gauges: [
                names::TP_QUEUE_DEPTH,
                names::TP_QUEUE_CAPACITY,
                names::TP_THREAD_POOL_SIZE,
                names::TP_MAX_THREAD_POOL_SIZE,
                names::TP_CORE_THREAD_POOL_SIZE,
                names::TP_ACTIVE_THREAD_COUNT,
                names::TP_AVAILABLE_THREAD_COUNT,
            ]
            .map(|n| gauge(n, tags)),
        }
    }
    fn live(&self) -> bool {
        self.live
    }
    fn instance(&self) -> &ThreadPoolBulkhead {
        &self.pool
    }
    fn refresh(&self) {
        let m = self.pool.metrics();
        let values = [
            m.queue_depth,
            m.queue_capacity,
            m.thread_pool_size,
            m.maximum_thread_pool_size,
            m.core_thread_pool_size,
            m.active_thread_count,
            m.available_thread_count,
        ];
        for (g, v) in self.gauges.iter().zip(values) {
            g.set(v);
        }
    }
}

/// `resilience4j_ratelimiter_available_permissions`, `..._waiting_threads` (§3.6).
pub(crate) struct RateLimiterMeters {
    limiter: RateLimiter,
    live: bool,
    available: Gauge,
    waiting: Gauge,
}

impl Meters for RateLimiterMeters {
    type Instance = RateLimiter;

    fn register(limiter: &RateLimiter, tags: &Tags, live: bool) -> Self {
        RateLimiterMeters {
            limiter: limiter.clone(),
            live,
            available: gauge(names::RL_AVAILABLE_PERMISSIONS, tags),
            waiting: gauge(names::RL_WAITING_THREADS, tags),
        }
    }
    fn live(&self) -> bool {
        self.live
    }
    fn instance(&self) -> &RateLimiter {
        &self.limiter
    }
    fn refresh(&self) {
        let m = self.limiter.metrics();
        self.available.set(m.available_permissions);
        self.waiting.set(m.number_of_waiting_threads);
    }
}
