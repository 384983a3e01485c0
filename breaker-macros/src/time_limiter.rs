//! `#[time_limiter]`: the time-limiter layer of a stack (Resilience4j's `@TimeLimiter`). Its
//! instance comes from the global `TimeLimiterRegistry` (`resilience4j.timelimiter`) or
//! `registry = ...`; a timed-out call is dropped (cancelled) at its current `.await`.

use proc_macro2::TokenStream;
use syn::Ident;

use crate::args::Spec;
use crate::expand::Context;
use crate::instance::module_instance;

/// The attribute's arguments and names.
pub static SPEC: Spec = Spec {
    attribute: "time_limiter",
    extra_keys: &[("registry", "path::TO::TIME_LIMITER_REGISTRY")],
    config_section: "resilience4j.timelimiter.instances",
    example_name: "backendA",
};

/// Binds `handle` to `&TimeLimiter`.
pub fn instance(cx: &Context<'_>, handle: &Ident) -> syn::Result<TokenStream> {
    Ok(module_instance(
        cx,
        handle,
        "timelimiter",
        "TimeLimiter",
        "time_limiter",
        "time_limiter",
    ))
}
