//! Meter names, descriptions and tag keys, as Resilience4j's Micrometer binders register them
//! (integration spec §3). Names are Micrometer's dotted names with the Prometheus suffix
//! (`.total` for counters, `.seconds` for the timer) already in them, so
//! `metrics-exporter-prometheus` prints Resilience4j's series names whether or not its
//! recommended naming is on, and other exporters see the same words.

/// Tag key of the instance name (`TagNames.NAME`).
pub const NAME: &str = "name";
/// Tag key of the outcome kind (`TagNames.KIND`).
pub const KIND: &str = "kind";
/// Tag key of the circuit breaker's state gauge.
pub const STATE: &str = "state";

/// `resilience4j_circuitbreaker_state{name,state}`: 1 for the current state, 0 for the
/// five others.
pub const CB_STATE: &str = "resilience4j.circuitbreaker.state";
/// `resilience4j_circuitbreaker_buffered_calls{kind="failed"|"successful",name}`.
pub const CB_BUFFERED_CALLS: &str = "resilience4j.circuitbreaker.buffered.calls";
/// `resilience4j_circuitbreaker_slow_calls{kind="successful"|"failed",name}`.
pub const CB_SLOW_CALLS: &str = "resilience4j.circuitbreaker.slow.calls";
/// `resilience4j_circuitbreaker_failure_rate{name}`: percent, -1 below the minimum calls.
pub const CB_FAILURE_RATE: &str = "resilience4j.circuitbreaker.failure.rate";
/// `resilience4j_circuitbreaker_slow_call_rate{name}`: percent, -1 below the minimum calls.
pub const CB_SLOW_CALL_RATE: &str = "resilience4j.circuitbreaker.slow.call.rate";
/// `resilience4j_circuitbreaker_calls_seconds{kind="successful"|"failed"|"ignored",name}`:
/// the call durations in seconds (`_count`, `_sum`; a summary or, with
/// `percentiles-histogram`, a histogram).
pub const CB_CALLS: &str = "resilience4j.circuitbreaker.calls.seconds";
/// `resilience4j_circuitbreaker_calls_seconds_max{kind,name}`: the longest call of the last
/// two minutes or so (Micrometer's `TimeWindowMax`).
pub const CB_CALLS_MAX: &str = "resilience4j.circuitbreaker.calls.seconds.max";
/// `resilience4j_circuitbreaker_not_permitted_calls_total{kind="not_permitted",name}`.
pub const CB_NOT_PERMITTED_CALLS: &str = "resilience4j.circuitbreaker.not.permitted.calls.total";

/// `resilience4j_retry_calls_total{kind,name}`, kinds `successful_without_retry`,
/// `successful_with_retry`, `failed_without_retry`, `failed_with_retry`.
pub const RETRY_CALLS: &str = "resilience4j.retry.calls.total";

/// `resilience4j_timelimiter_calls_total{kind="successful"|"failed"|"timeout",name}`.
pub const TL_CALLS: &str = "resilience4j.timelimiter.calls.total";

/// `resilience4j_bulkhead_available_concurrent_calls{name}`.
pub const BH_AVAILABLE: &str = "resilience4j.bulkhead.available.concurrent.calls";
/// `resilience4j_bulkhead_max_allowed_concurrent_calls{name}`.
pub const BH_MAX_ALLOWED: &str = "resilience4j.bulkhead.max.allowed.concurrent.calls";

/// `resilience4j_bulkhead_queue_depth{name}` (thread-pool bulkhead).
pub const TP_QUEUE_DEPTH: &str = "resilience4j.bulkhead.queue.depth";
/// `resilience4j_bulkhead_queue_capacity{name}`.
pub const TP_QUEUE_CAPACITY: &str = "resilience4j.bulkhead.queue.capacity";
/// `resilience4j_bulkhead_thread_pool_size{name}`.
pub const TP_THREAD_POOL_SIZE: &str = "resilience4j.bulkhead.thread.pool.size";
/// `resilience4j_bulkhead_max_thread_pool_size{name}`.
pub const TP_MAX_THREAD_POOL_SIZE: &str = "resilience4j.bulkhead.max.thread.pool.size";
/// `resilience4j_bulkhead_core_thread_pool_size{name}`.
pub const TP_CORE_THREAD_POOL_SIZE: &str = "resilience4j.bulkhead.core.thread.pool.size";
/// `resilience4j_bulkhead_active_thread_count{name}`.
pub const TP_ACTIVE_THREAD_COUNT: &str = "resilience4j.bulkhead.active.thread.count";
/// `resilience4j_bulkhead_available_thread_count{name}`.
pub const TP_AVAILABLE_THREAD_COUNT: &str = "resilience4j.bulkhead.available.thread.count";

/// `resilience4j_ratelimiter_available_permissions{name}` (may be negative: reservations).
pub const RL_AVAILABLE_PERMISSIONS: &str = "resilience4j.ratelimiter.available.permissions";
/// `resilience4j_ratelimiter_waiting_threads{name}` (an underscore in Micrometer's name too).
pub const RL_WAITING_THREADS: &str = "resilience4j.ratelimiter.waiting_threads";

/// Every meter with its `# HELP` text: Micrometer's description of the first meter
/// registered under the name.
pub const DESCRIPTIONS: [(&str, &str); 21] = [
    (CB_STATE, "The states of the circuit breaker"),
    (
        CB_BUFFERED_CALLS,
        "The number of buffered failed calls stored in the ring buffer",
    ),
    (
        CB_SLOW_CALLS,
        "The number of slow successful which were slower than a certain threshold",
    ),
    (CB_FAILURE_RATE, "The failure rate of the circuit breaker"),
    (CB_SLOW_CALL_RATE, "The slow call of the circuit breaker"),
    (CB_CALLS, "Total number of successful calls"),
    (CB_CALLS_MAX, "Total number of successful calls"),
    (
        CB_NOT_PERMITTED_CALLS,
        "Total number of not permitted calls",
    ),
    (
        RETRY_CALLS,
        "The number of successful calls without a retry attempt",
    ),
    (TL_CALLS, "The number of successful calls"),
    (BH_AVAILABLE, "The number of available permissions"),
    (
        BH_MAX_ALLOWED,
        "The maximum number of available permissions",
    ),
    (TP_QUEUE_DEPTH, "The queue depth"),
    (TP_QUEUE_CAPACITY, "The queue capacity"),
    (TP_THREAD_POOL_SIZE, "The thread pool size"),
    (TP_MAX_THREAD_POOL_SIZE, "The maximum thread pool size"),
    (TP_CORE_THREAD_POOL_SIZE, "The core thread pool size"),
    (TP_ACTIVE_THREAD_COUNT, "The number of active threads"),
    (TP_AVAILABLE_THREAD_COUNT, "The number of available threads"),
    (
        RL_AVAILABLE_PERMISSIONS,
        "The number of available permissions",
    ),
    (RL_WAITING_THREADS, "The number of waiting threads"),
];
