//! `#[retry]`: the retry layer of a stack (Resilience4j's `@Retry`). Its instance comes from
//! the global `RetryRegistry` (`resilience4j.retry`) or `registry = ...`; the body runs once
//! per attempt, from fresh copies of the arguments.

use proc_macro2::TokenStream;
use syn::Ident;

use crate::args::Spec;
use crate::expand::Context;
use crate::instance::module_instance;

/// The attribute's arguments and names.
pub static SPEC: Spec = Spec {
    attribute: "retry",
    extra_keys: &[("registry", "path::TO::RETRY_REGISTRY")],
    config_section: "resilience4j.retry.instances",
    example_name: "backendA",
};

/// Binds `handle` to `&Retry`.
pub fn instance(cx: &Context<'_>, handle: &Ident) -> syn::Result<TokenStream> {
    Ok(module_instance(
        cx, handle, "retry", "Retry", "retry", "retry",
    ))
}
