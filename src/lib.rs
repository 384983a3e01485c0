#![doc = include_str!("../README.md")]

pub use breaker_core::*;

#[doc(hidden)]
pub mod __private;
mod global;

pub use breaker_macros::circuit_breaker;
pub use global::{global, init, AlreadyInitialized, CONFIG_ENV, DEFAULT_CONFIG_FILE};
