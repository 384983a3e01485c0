//! The circuit-breaker core of `breaker`: Resilience4j's state machine, reproduced exactly.
//!
//! # Map of the crate
//!
//! | folder | what it holds | Resilience4j module |
//! |---|---|---|
//! | `src/circuitbreaker/` | the circuit breaker: config, state machine, sliding windows, permits, events, errors, metrics, `Registry` (re-exported at the root: [`CircuitBreaker`], [`Registry`], ...) | `resilience4j-circuitbreaker` |
//! | `src/retry/` | [`retry`]: `Retry`, its config, events, errors, metrics, registry | `resilience4j-retry` |
//! | `src/timelimiter/` | [`timelimiter`]: `TimeLimiter` | `resilience4j-timelimiter` |
//! | `src/bulkhead/` | [`bulkhead`]: the semaphore `Bulkhead` and the `ThreadPoolBulkhead` | `resilience4j-bulkhead` |
//! | `src/ratelimiter/` | [`ratelimiter`]: the `AtomicRateLimiter` | `resilience4j-ratelimiter` |
//! | `src/kernel/` | the shared kernel every module uses: clocks and sleeping ([`Clock`], [`Sleep`]), error classification ([`ErrorCatalog`], [`Throwable`]), [`IntervalFunction`], Java number formatting, names, the event publisher ([`EventPublisher`], [`RecentEvents`]), [`InstanceRegistry`], striped counters, loom-switchable `sync` | `resilience4j-core` |
//! | `src/trace.rs` | [`trace`]: `tracing` spans and events for every module | (none) |
//!
//! Each module folder has the same shape: `mod.rs`, `config.rs`, the instance, `events.rs`,
//! `error.rs`, `metrics.rs`, `registry.rs`. A few shared items are still defined in
//! `circuitbreaker/` files and used by the kernel and every module: [`CallError`],
//! [`ConfigError`], [`SignedDuration`], [`SubscriptionId`], [`RegistryError`].
//!
//! # Quick start
//!
//! ```
//! use breaker_core::{CallError, CircuitBreakerConfig, Registry};
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = Registry::with_default_config(
//!     CircuitBreakerConfig::builder()
//!         .sliding_window_size(10)
//!         .minimum_number_of_calls(5)
//!         .build()
//!         .unwrap(),
//! );
//! let payments = registry.circuit_breaker("paymentService");
//! let r: Result<u32, CallError<std::io::Error>> = payments.call(async { Ok(42) }).await;
//! assert_eq!(r.unwrap(), 42);
//! # }
//! ```
//!
//! Beside the circuit breaker: [`retry`] (Resilience4j's Retry), [`timelimiter`]
//! (TimeLimiter), [`bulkhead`] (the semaphore `Bulkhead` and the `ThreadPoolBulkhead`) and
//! [`ratelimiter`] (its `AtomicRateLimiter`), each with its config builder, events, metrics,
//! errors and registry.
//!
//! Their registries (`RetryRegistry`, `TimeLimiterRegistry`, `BulkheadRegistry`,
//! `ThreadPoolBulkheadRegistry`, `RateLimiterRegistry`) are one type, [`InstanceRegistry`],
//! shaped like the breaker's [`Registry`]: a default config (`configs.default`), named
//! configs, get-or-create by name (`retry(name)`, `time_limiter(name)`, `bulkhead(name)`,
//! `rate_limiter(name)`), live config changes that keep each instance's state, `apply` for a
//! whole reload, `eventConsumerBufferSize` buffers, and [`RegistryEntryEvent`]s (Added,
//! Replaced, Removed). Unknown config names fail with [`RegistryError`].
//!
//! # What is exact
//!
//! Rates are computed in `f32` as `failed * 100.0 / total` and compared with `>=`; the
//! effective minimum number of calls is `min(minimumNumberOfCalls, slidingWindowSize)` for
//! count windows and HALF_OPEN, unclamped for time windows; rates are evaluated only when an
//! outcome is recorded; OPEN -> HALF_OPEN happens lazily, strictly after the wait; late
//! completions apply to whatever state is current (in HALF_OPEN only in exact Resilience4j
//! mode, see below); events follow Resilience4j's order and publishing rule. The
//! repository's conformance suite replays vectors recorded from the real Resilience4j state
//! machine and checks every step.
//!
//! # Where this differs from Resilience4j, on purpose
//!
//! - **Only a HALF_OPEN state's own trial calls decide it.** Every [`Permit`] knows the state
//!   episode that admitted it ([`Permit::episode`]). A late call (admitted while CLOSED, or by
//!   an earlier HALF_OPEN state) that finishes during a HALF_OPEN state publishes its event
//!   but is not recorded there, does not decide it, and frees no trial permission, nor does
//!   its [`Permit::release`]; so HALF_OPEN never has more than
//!   `permittedNumberOfCallsInHalfOpenState` of its own trial calls in flight. Resilience4j
//!   counts it as a trial result and hands HALF_OPEN a permission it never took. CLOSED, OPEN
//!   and METRICS_ONLY record late outcomes as Resilience4j does. Exact Resilience4j mode:
//!   [`CircuitBreakerConfigBuilder::exact_resilience4j`].
//! - **Subscribers see a breaker's events in the order it produced them**, one at a time and
//!   never under the state lock (Resilience4j calls its consumers on every calling thread at
//!   once, so two threads' events can cross). No operation waits for another thread's
//!   subscribers: while one thread delivers, the others' events join a queue it delivers
//!   before it stops, so such an event may arrive after its operation returned (an
//!   operation with nobody else delivering returns once its events are delivered); a
//!   subscriber may call back into the breaker (its own events follow the one being
//!   delivered). Every operation
//!   reads the clock once it holds the lock, so waiting for the lock never starts an OPEN wait
//!   early nor stamps events out of order.
//! - **A cancelled or panicking call never strands a half-open permit.** A [`Permit`]
//!   dropped without an outcome hands its HALF_OPEN permission back (if the HALF_OPEN state
//!   that granted it is still current); a panic records a failure. In Java an `Error` thrown
//!   through a decorator leaks the permit and can leave the breaker in HALF_OPEN for good.
//! - **`reset()` cancels pending timers.** Resilience4j leaves a `maxWaitDurationInHalfOpenState`
//!   timer armed, which later moves the freshly reset breaker to OPEN by itself.
//! - **OPEN entered from FORCED_OPEN or DISABLED starts a fresh window.** Resilience4j hands
//!   OPEN the zero-size window of those states and a late result then throws
//!   `ArithmeticException`.
//! - The default [`SystemClock`] hands out a reading cached by a background thread every
//!   millisecond, so durations, deadlines and window buckets are exact to about 1 ms (see
//!   [`SystemClock::precise`] for exact readings).
//! - Setting an exception list on a builder made from a base config replaces the base's
//!   list, as Resilience4j's Spring layer does (plain `from(base)` in Java ORs them).
//!
//! # Replacing a config
//!
//! [`CircuitBreaker::replace_config`] (and the [`Registry`] methods built on it) change a
//! live breaker: thresholds, waits and classification apply from the next call; the state is
//! kept (an OPEN breaker stays OPEN until its current wait ends; the next wait uses the new
//! config). CLOSED and METRICS_ONLY keep their window when its type and size are unchanged,
//! and start a fresh, empty one otherwise. HALF_OPEN keeps its trial window unless
//! `permittedNumberOfCallsInHalfOpenState` changed. OPEN keeps the window that tripped it.
//!
//! # Timers
//!
//! `maxWaitDurationInHalfOpenState` and `automaticTransitionFromOpenToHalfOpenEnabled` fire
//! on the next operation after their deadline (any permission request, outcome, state or
//! metrics read, or [`CircuitBreaker::poll_timers`]), with the clock reading the deadline.
//! With the `tokio` feature and inside a runtime they also fire on their own.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod bulkhead;
mod circuitbreaker;
pub mod deadline;
pub mod drill;
mod kernel;
pub mod ratelimiter;
pub mod retry;
pub mod timelimiter;
pub mod trace;

// Crate-root aliases of the inner modules, so in-crate paths such as `crate::clock::Clock`
// or `crate::config::SignedDuration` name the same items wherever a file lives.
#[cfg(feature = "tokio")]
use circuitbreaker::timer;
use circuitbreaker::{
    breaker, call, config, config_builder, error, events, fast_window, machine, metrics, permit,
    registry, shared, state, window,
};
use kernel::{
    classify, clock, error_chain, instance, instance_registry, interval, java, keyed, names,
    publisher, sleep, striped, sync, throwable, timer_thread,
};

pub use breaker::{CircuitBreaker, SharedState, WeakCircuitBreaker};
pub use call::BoxedCall;
pub use classify::{ErrorCatalog, Outcome};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{defaults, CircuitBreakerConfig, SignedDuration, SlidingWindowType};
pub use config_builder::CircuitBreakerConfigBuilder;
pub use error::{CallError, CallNotPermitted, ConfigError, IllegalStateTransition};
pub use events::{
    CircuitBreakerEvent, EventBuffer, EventKind, EventType, SubscriptionId,
    DEFAULT_EVENT_CONSUMER_BUFFER_SIZE,
};
pub use instance::InstanceSettings;
pub use instance_registry::{
    InstanceRegistry, InstanceRegistryEvent, RegistryEntryEvent, RegistryInstance,
};
pub use interval::{
    IntervalFunction, RandomSource, ThreadRandom, DEFAULT_MULTIPLIER, DEFAULT_RANDOMIZATION_FACTOR,
};
pub use java::{java_double, java_duration_millis, java_float};
pub use keyed::{KeyLimits, Keyed};
pub use metrics::Metrics;
pub use permit::Permit;
pub use publisher::{EventPublisher, ModuleEvent, RecentEvents};
pub use registry::{Registry, RegistryError, RegistryEvent, DEFAULT_CONFIG_NAME};
pub use shared::{SharedView, TrialEnd, TrialGrant};
pub use sleep::Sleep;
pub use state::{State, UnknownState};
pub use throwable::Throwable;
