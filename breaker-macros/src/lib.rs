//! `#[circuit_breaker]` (see issue #4).
