//! The instance of a layer beside the breaker (retry, time limiter, bulkhead, rate limiter)
//! that a stacked fn uses: looked up in its registry once per call site, or per call.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

use crate::args::Name;
use crate::expand::Context;
use crate::lifetimes::is_static_path;

/// Statements binding `handle` to a reference to the instance of a module beside the breaker:
/// `module::Ty` found with `__private::stack::lookup(registry, name)` in `registry = ...` or
/// the global module registries' `field`. A literal name in the global or a static registry
/// is looked up once per call site; anything else on every call.
pub fn module_instance(
    cx: &Context<'_>,
    handle: &Ident,
    module: &str,
    ty: &str,
    field: &str,
    lookup: &str,
) -> TokenStream {
    let krate = &cx.krate;
    let private = quote!(#krate::__private::stack);
    let (module, ty, field, lookup) = (
        Ident::new(module, Span::call_site()),
        Ident::new(ty, Span::call_site()),
        Ident::new(field, Span::call_site()),
        Ident::new(lookup, Span::call_site()),
    );
    let ty = quote!(#krate::#module::#ty);
    let name_value = match &cx.args.name {
        Name::Literal(lit) => quote!(#lit),
        Name::Expr(expr) => quote_spanned!(expr.span()=> &#expr),
    };
    let registry = cx.args.extra("registry");
    let per_call =
        registry.filter(|r| !is_static_path(r, &cx.bindings, &cx.protected.func.sig.generics));
    let reg = match registry {
        Some(r) => quote_spanned!(r.span()=> &#r),
        None => quote!(&#private::modules().#field),
    };
    let cell = Ident::new("__STACK_INSTANCE", Span::mixed_site());
    let owned = format_ident!("__stack_{}_owned", field, span = Span::mixed_site());
    match (per_call, &cx.args.name) {
        (None, Name::Literal(_)) => quote! {
            let #handle: &'static #ty = {
                static #cell: #private::Cell<#ty> = #private::Cell::new();
                #cell.get_or_init(|| #private::#lookup(#reg, #name_value))
            };
        },
        _ => quote! {
            let #owned: #ty = #private::#lookup(#reg, #name_value);
            let #handle: &#ty = &#owned;
        },
    }
}
