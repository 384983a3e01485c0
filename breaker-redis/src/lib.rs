//! One circuit breaker across replicas: breaker's state shared through Redis (issue #16).
//!
//! Attach a [`RedisStore`] to a [`CircuitBreaker`](breaker_core::CircuitBreaker) (or name
//! `store: redis` in the configuration, see [`attach_configured`]) and every process that
//! does the same for a breaker of the same name behaves as one breaker:
//!
//! * **Transitions are shared, windows are not.** Each process records its own calls in
//!   its own sliding window (no Redis request per call); the first process whose window
//!   trips opens the breaker for all. Detection therefore needs `minimumNumberOfCalls`
//!   calls in *one* process, not across all of them.
//! * **OPEN** carries one shared deadline (`open_until`, by Redis's clock): every process
//!   rejects until it, and [`CallNotPermitted::retry_after`](breaker_core::CallNotPermitted::retry_after)
//!   reports it. Another process applies an OPEN within
//!   [`RedisStoreOptions::propagation_bound`] (`refresh_interval + timeout`, 150 ms by
//!   default). A process that attaches while the shared state is OPEN rejects from its
//!   first call.
//! * **HALF_OPEN**: all processes together run at most
//!   `permittedNumberOfCallsInHalfOpenState` trial calls; each holds a lease in Redis
//!   that expires after [`RedisStoreOptions::trial_lease`], so a killed process does not
//!   strand its slot. The trial outcomes, counted in Redis, decide for everyone.
//! * **CLOSED** is shared too: a HALF_OPEN decided CLOSED, or a manual
//!   `transition_to_closed_state()` / `reset()`, closes the breaker everywhere.
//!   FORCED_OPEN, DISABLED and METRICS_ONLY stay local to the process that set them.
//! * **Keys expire** [`RedisStoreOptions::key_ttl`] after their last change.
//!
//! Faults: Redis unreachable, slow or restarted never fails a call. Only a HALF_OPEN trial
//! call waits on Redis, for its lease, at most `3 x timeout` (150 ms by default) from its
//! own start however many calls ask at once ([`call_path_bound`]); trips, trial outcomes
//! and manual transitions are written by a background thread and never waited for. A write
//! Redis runs more than `3 x timeout` after it was sent (Redis stopped, then continued) is
//! refused, so it can neither open a breaker the replicas have closed since nor stretch
//! an OPEN. After a failure the store is marked down (logged once, without credentials),
//! calls use local state alone, and a background thread reconnects every
//! `refresh_interval` and re-converges (a local OPEN Redis does not know is written back;
//! a newer shared state is applied).
//!
//! # Fleet-wide rate limiters and bulkheads (issue #29)
//!
//! [`RedisStore::attach_rate_limiter`] and [`RedisStore::attach_bulkhead`] (or
//! `store: redis` under `breaker.ratelimiter.instances.<name>` /
//! `breaker.bulkhead.instances.<name>`, see [`attach_configured_limits`]) share one limit
//! among every process attaching an instance of the same name: at most `limitForPeriod`
//! permits per `limitRefreshPeriod` (Resilience4j's `AtomicRateLimiter` arithmetic run
//! atomically in Redis, by Redis's clock, each permit granted once), at most
//! `maxConcurrentCalls` calls in flight (a killed process's permits come back within
//! [`RedisStoreOptions::replica_lease`]). Each permission is one Redis round trip, its
//! caller waiting at most [`call_path_bound`] (`3 x timeout`); without an answer it is
//! decided on the process's local share, `ceil(limit / replicas)`.

mod config;
mod fleet;
mod hook;
mod link;
mod options;
mod redact;
mod redis_clock;
mod scripts;
mod store;
mod worker;

pub use config::{attach_configured, attach_configured_limits, options_from, ConfiguredStores};
pub use options::RedisStoreOptions;
pub use redact::redact_url;
pub use store::{call_path_bound, RedisStore, StoreError};
