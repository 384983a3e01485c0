//! Rate limiter: Resilience4j's `AtomicRateLimiter`, with its config, events, metrics,
//! rejection error and registry.
//!
//! # The algorithm
//!
//! [`RateLimiter`] reproduces `AtomicRateLimiter.calculateNextState` exactly. With `P` =
//! `limitRefreshPeriod`, `L` = `limitForPeriod` and `t` the nanoseconds since the limiter was
//! created, the current cycle is `c = t / P`. At the first use in a new cycle the stored
//! permissions become `min(permissions + (c - storedCycle) * L, L)`: cycles are fixed to the
//! limiter's creation, and idle cycles store no more than `L`. A request for `n` permits
//! waits 0 if `permissions >= n`, else `(c + 1) * P - t` plus `ceilDiv(n - permissions - L,
//! L)` further cycles; if that wait is at most `timeoutDuration` the permits are reserved
//! (permissions may go negative: the available-permissions gauge then shows the debt of
//! later cycles) and the caller waits for them, by the limiter's [`Clock`](crate::Clock)
//! (tests use a [`ManualClock`](crate::ManualClock) and never sleep). Otherwise nothing is
//! reserved and the call is refused with [`RequestNotPermitted`] (`RateLimiter '<name>'
//! does not permit further calls`). Changing `limitForPeriod` keeps the permissions of the
//! current cycle; the new limit applies from the next refresh.
//!
//! A caller that stops waiting for a reserved permit (its future is dropped: a timeout, a
//! `select!`) publishes `FAILED_ACQUIRE`, and its permits stay consumed, as an interrupted
//! thread's do in Resilience4j: a reservation is a slot in a future cycle, and handing it
//! back from the middle of the queue would let the next caller share a cycle with the
//! waiters behind it.
//!
//! # Where this differs from Resilience4j
//!
//! - **A refused call fails at once.** Resilience4j decides the refusal up front (nothing is
//!   reserved, and nothing that happens during the wait can change the answer) but still
//!   parks the caller for the whole `timeoutDuration` before returning `false`. Here the
//!   refusal is immediate.
//! - **`drainPermissions` drains the current cycle.** Resilience4j asks for the permissions
//!   *stored* at the last update, after refreshing to the current cycle: after a cycle
//!   rollover it drains only part (10 per cycle, 7 used in cycle 0: a drain in cycle 1 leaves
//!   7), and with reservations outstanding it asks for a negative count and so *adds*
//!   permissions, wiping the debt (a later call is served in a cycle already promised to
//!   waiters, or more than `limitForPeriod` become available). Here a drain refreshes, sets
//!   the permissions left in the current cycle to 0 and keeps reservations.
//! - **`DRAINED` reports the permissions drained.** Resilience4j reports `min(stored, 0)`: 0
//!   whenever something was drained.
//! - A refused call's wait, the reservation wait and all cycle arithmetic use the limiter's
//!   clock at nanosecond precision; the default [`SystemClock`](crate::SystemClock) is read
//!   precisely here (not its cached millisecond reading).
//!
//! `RateLimiterConfig::builder().exact_resilience4j(true)` restores all three behaviours. The
//! conformance runner replays the vectors that record them (a refused acquire that waited,
//! a `DRAINED` event) in that mode.

mod call;
mod config;
mod cycle;
mod error;
mod events;
mod limiter;
mod metrics;
mod params_cell;
mod registry;
mod shared;

pub use crate::instance_registry::RegistryEntryEvent;
pub use call::RateLimiterCall;
pub use config::{
    DrainPredicate, NullableDuration, RateLimiterConfig, RateLimiterConfigBuilder,
    DEFAULT_LIMIT_FOR_PERIOD, DEFAULT_LIMIT_REFRESH_PERIOD, DEFAULT_TIMEOUT_DURATION,
};
pub use error::{RateLimiterError, RequestNotPermitted};
pub use events::{RateLimiterEvent, RateLimiterEventType};
pub use limiter::{AcquirePermission, RateLimiter};
pub use metrics::RateLimiterMetrics;
pub use registry::RateLimiterRegistry;
pub use shared::SharedLimit;
