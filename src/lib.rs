//! `breaker`: circuit breakers for async Rust that behave like Resilience4j's and read its
//! Spring Boot configuration unchanged.

pub use breaker_core::*;
