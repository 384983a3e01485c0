//! `#[bulkhead]`: the bulkhead layer of a stack (Resilience4j's `@Bulkhead`), semaphore by
//! default (`resilience4j.bulkhead`) or `type = "THREADPOOL"`
//! (`resilience4j.thread-pool-bulkhead`), as Java's `type = Bulkhead.Type.THREADPOOL`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit};

use crate::args::{ungroup, Spec};
use crate::expand::Context;
use crate::instance::module_instance;

/// The attribute's arguments and names.
pub static SPEC: Spec = Spec {
    attribute: "bulkhead",
    extra_keys: &[
        ("type", "\"THREADPOOL\""),
        ("registry", "path::TO::BULKHEAD_REGISTRY"),
    ],
    config_section: "resilience4j.bulkhead.instances",
    example_name: "backendA",
};

/// `type = ...`: which bulkhead.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Type {
    /// `SEMAPHORE` (the default).
    Semaphore,
    /// `THREADPOOL`.
    ThreadPool,
}

/// Reads `type = "THREADPOOL"` / `"SEMAPHORE"` (or a path ending in either, as Java's
/// `Bulkhead.Type.THREADPOOL`).
pub fn bulkhead_type(value: Option<&Expr>) -> syn::Result<Type> {
    let Some(value) = value else {
        return Ok(Type::Semaphore);
    };
    let (text, span) = match ungroup(value.clone()) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => (s.value(), s.span()),
        Expr::Path(p) if p.qself.is_none() => (
            p.path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default(),
            p.span(),
        ),
        other => (String::new(), other.span()),
    };
    match text.as_str() {
        "THREADPOOL" => Ok(Type::ThreadPool),
        "SEMAPHORE" => Ok(Type::Semaphore),
        t if t.eq_ignore_ascii_case("threadpool") || t.eq_ignore_ascii_case("thread_pool") => {
            Err(syn::Error::new(
                span,
                "write `type = \"THREADPOOL\"` (upper case, as Java's `Bulkhead.Type.THREADPOOL`)",
            ))
        }
        t if t.eq_ignore_ascii_case("semaphore") => Err(syn::Error::new(
            span,
            "write `type = \"SEMAPHORE\"` (upper case, as Java's `Bulkhead.Type.SEMAPHORE`)",
        )),
        _ => Err(syn::Error::new(
            span,
            "`type` is `\"SEMAPHORE\"` (the default, `resilience4j.bulkhead`) or \
             `\"THREADPOOL\"` (`resilience4j.thread-pool-bulkhead`)",
        )),
    }
}

/// Binds `handle` to a `BulkheadRef`.
pub fn instance(cx: &Context<'_>, handle: &Ident) -> syn::Result<TokenStream> {
    let kind = bulkhead_type(cx.args.extra("type"))?;
    let inner = Ident::new("__bulkhead_instance", proc_macro2::Span::mixed_site());
    let krate = &cx.krate;
    let private = quote!(#krate::__private::stack);
    Ok(match kind {
        Type::Semaphore => {
            let bind = module_instance(cx, &inner, "bulkhead", "Bulkhead", "bulkhead", "bulkhead");
            quote! {
                #bind
                let #handle = #private::BulkheadRef::Semaphore(#inner);
            }
        }
        Type::ThreadPool => {
            let bind = module_instance(
                cx,
                &inner,
                "bulkhead",
                "ThreadPoolBulkhead",
                "thread_pool_bulkhead",
                "thread_pool_bulkhead",
            );
            quote! {
                #bind
                let #handle = #private::BulkheadRef::ThreadPool(#inner);
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types() {
        let t = |tokens: proc_macro2::TokenStream| {
            bulkhead_type(Some(&syn::parse2::<Expr>(tokens).unwrap()))
        };
        assert_eq!(t(quote!("THREADPOOL")).unwrap(), Type::ThreadPool);
        assert_eq!(t(quote!(Type::SEMAPHORE)).unwrap(), Type::Semaphore);
        assert_eq!(bulkhead_type(None).unwrap(), Type::Semaphore);
        assert!(t(quote!("threadpool"))
            .unwrap_err()
            .to_string()
            .contains("upper case"));
        assert!(t(quote!("POOL"))
            .unwrap_err()
            .to_string()
            .contains("SEMAPHORE"));
    }
}
