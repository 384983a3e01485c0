//! Resilience4j's `CircuitBreaker`: everything that exists only for the circuit breaker.
//!
//! The config and its builder (`config`), the state machine (`machine`) over its sliding
//! windows (`window`, `fast_window`), the handle (`breaker`, `shared`, `permit`, `call`),
//! events, errors, metrics, states, timers and the `Registry`. The crate root re-exports the
//! public items under their old paths (`breaker_core::CircuitBreaker`, ...).

pub(crate) mod breaker;
pub(crate) mod call;
pub(crate) mod config;
pub(crate) mod config_builder;
pub(crate) mod error;
pub(crate) mod events;
pub(crate) mod fast_window;
pub(crate) mod machine;
pub(crate) mod metrics;
pub(crate) mod permit;
pub(crate) mod registry;
pub(crate) mod shared;
pub(crate) mod state;
#[cfg(feature = "tokio")]
pub(crate) mod timer;
pub(crate) mod window;
