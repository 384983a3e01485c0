//! The shared kernel: pieces every resilience module (circuit breaker, retry, time limiter,
//! bulkhead, rate limiter) builds on — clocks and sleeping, error classification, interval
//! functions, Java number formatting, names, event publishing, the instance registry,
//! striped counters and the loom-switchable `sync` primitives. Nothing here depends on one
//! particular module.

pub(crate) mod classify;
pub(crate) mod clock;
pub(crate) mod error_chain;
pub(crate) mod instance;
pub(crate) mod instance_registry;
pub(crate) mod interval;
pub(crate) mod java;
pub(crate) mod keyed;
pub(crate) mod names;
pub(crate) mod publisher;
pub(crate) mod sleep;
pub(crate) mod striped;
pub(crate) mod sync;
pub(crate) mod throwable;
pub(crate) mod timer_thread;
