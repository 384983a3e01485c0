//! Nothing here: the package exists for its tests, which depend on `resilience4rs` renamed to
//! `r4` (see `tests/renamed.rs`).
