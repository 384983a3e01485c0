//! `#[rate_limiter]`: the rate-limiter layer of a stack (Resilience4j's `@RateLimiter`, one
//! permit per call as in Spring Boot 3). Its instance comes from the global
//! `RateLimiterRegistry` (`resilience4j.ratelimiter`) or `registry = ...`.

use proc_macro2::TokenStream;
use syn::Ident;

use crate::args::Spec;
use crate::expand::Context;
use crate::instance::module_instance;

/// The attribute's arguments and names.
pub static SPEC: Spec = Spec {
    attribute: "rate_limiter",
    extra_keys: &[("registry", "path::TO::RATE_LIMITER_REGISTRY")],
    config_section: "resilience4j.ratelimiter.instances",
    example_name: "backendA",
};

/// Binds `handle` to `&RateLimiter`.
pub fn instance(cx: &Context<'_>, handle: &Ident) -> syn::Result<TokenStream> {
    Ok(module_instance(
        cx,
        handle,
        "ratelimiter",
        "RateLimiter",
        "rate_limiter",
        "rate_limiter",
    ))
}
