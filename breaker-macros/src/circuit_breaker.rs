//! `#[circuit_breaker]`: the breaker layer. Finds the named breaker (cached per call site, or
//! per call when `registry = ...` depends on `self` or an argument), runs the protected future
//! through it, and turns a rejection without a fallback into the fn's error type.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

use crate::args::{Name, Spec};
use crate::expand::{Context, Layer};
use crate::item::mentions_impl_trait;
use crate::lifetimes::{is_static, is_static_path, non_static_params};

/// The `#[circuit_breaker]` layer.
pub struct CircuitBreaker;

static SPEC: Spec = Spec {
    attribute: "circuit_breaker",
    extra_keys: &[("registry", "path::TO::REGISTRY")],
    config_section: "resilience4j.circuitbreaker.instances",
    example_name: "backendA",
};

impl Layer for CircuitBreaker {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    fn instance(&self, cx: &Context<'_>, handle: &Ident) -> syn::Result<TokenStream> {
        let krate = &cx.krate;
        let private = quote!(#krate::__private::circuit_breaker);
        let cell = Ident::new("__BREAKER_INSTANCE", proc_macro2::Span::call_site());
        let owned = Ident::new("__breaker_owned", proc_macro2::Span::mixed_site());
        let name_value = match &cx.args.name {
            Name::Literal(lit) => quote!(#lit),
            Name::Expr(expr) => quote_spanned!(expr.span()=> &#expr),
        };
        let registry = cx.args.extra("registry");
        let per_call =
            registry.filter(|r| !is_static_path(r, &cx.bindings, &cx.protected.func.sig.generics));
        let cell_decl = quote! {
            static #cell: ::std::sync::OnceLock<#krate::CircuitBreaker> =
                ::std::sync::OnceLock::new();
        };
        if let Some(registry) = per_call {
            // `registry = self.registry`, `registry = &reg`...: evaluated for this call.
            return Ok(quote_spanned! {registry.span()=>
                let #owned: #krate::CircuitBreaker =
                    #private::from_registry(&#registry, #name_value);
                let #handle: &#krate::CircuitBreaker = &#owned;
            });
        }
        Ok(match &cx.args.name {
            // A literal name in the global or a static registry: one handle per call site.
            Name::Literal(_) => {
                let lookup = match registry {
                    Some(registry) => quote_spanned! {registry.span()=>
                        #private::from_registry(&#registry, #name_value)
                    },
                    None => quote!(#private::from_global(#name_value)),
                };
                quote! {
                    #cell_decl
                    let #handle: &'static #krate::CircuitBreaker = #cell.get_or_init(|| #lookup);
                }
            }
            // `name = BACKEND`, `name = Self::NAME`: the cached handle while the name is the
            // same, a lookup when it is not.
            Name::Expr(_) => {
                let registry = match registry {
                    Some(registry) => quote_spanned! {registry.span()=>
                        || -> &'static #krate::Registry { &#registry }
                    },
                    None => quote!(#private::global_registry),
                };
                let name = Ident::new("__breaker_name", proc_macro2::Span::mixed_site());
                quote! {
                    static #cell: #private::NamedCell = #private::NamedCell::new();
                    let #name: &str = #name_value;
                    let #owned = #private::named(&#cell, #name, #registry);
                    let #handle: &#krate::CircuitBreaker = &#owned;
                }
            }
        })
    }

    fn call(&self, cx: &Context<'_>, handle: &Ident, future: TokenStream) -> TokenStream {
        let protected = cx.protected;
        let krate = cx.krate_at(protected.output.span());
        let params = non_static_params(&protected.func.sig.generics);
        let ok_static = match &protected.parts.ok {
            Some(ok) => is_static(ok, &params),
            None => is_static(&protected.output, &params),
        };
        let err_static = match &protected.parts.err {
            Some(err) => is_static(err, &params),
            None => true,
        };
        let classifier = match (ok_static, err_static) {
            (true, true) => "by_type",
            (false, true) => "unnamed_ok",
            (true, false) => "unnamed_err",
            (false, false) => "unnamed",
        };
        let output = &protected.output;
        // Naming the return type puts "must return a `Result`" on the user's return type
        // token; a return type with `impl Trait` cannot be named, and is a `Result` to have
        // got this far.
        let checked = if mentions_impl_trait(output) {
            quote_spanned!(output.span()=> #krate::__private::Checked::new())
        } else {
            quote_spanned!(output.span()=> <#output as #krate::__private::ProtectedOutput>::checked())
        };
        // A missing `'static` (a generic parameter of the impl in the `Ok` type) is reported
        // on the `Ok` type.
        let at = match &protected.parts.ok {
            Some(ok) => ok.span(),
            None => output.span(),
        };
        let checked_var = Ident::new(
            "__layer_checked",
            proc_macro2::Span::mixed_site().located_at(at),
        );
        let classifier = Ident::new(classifier, at);
        let classify_krate = cx.krate_at(at);
        let (breaker, result) = (
            Ident::new("__layer_breaker", proc_macro2::Span::mixed_site()),
            Ident::new("__layer_result", proc_macro2::Span::mixed_site()),
        );
        // Written in place as the argument (not returned by a generic fn), so the `'static`
        // the classifier may need is required once, here, and the closure inlines.
        let classify = quote_spanned! {at=>
            |#breaker, #result| #classify_krate::__private::circuit_breaker::#classifier(#breaker, #result)
        };
        quote_spanned! {output.span()=>
            {
                let #checked_var = #checked;
                #krate::__private::circuit_breaker::call(#checked_var, #classify, #handle, #future)
            }
        }
    }

    fn fallback_error(&self, err_text: &str) -> String {
        format!("CallError<{err_text}>")
    }

    fn fallback_error_path(&self) -> &'static str {
        "resilience4rs::CallError"
    }

    fn without_fallback(&self, cx: &Context<'_>, outcome: &Ident) -> TokenStream {
        let protected = cx.protected;
        let krate = cx.krate_at(match &protected.parts.err {
            Some(err) => err.span(),
            None => protected.output.span(),
        });
        // Located on the error type, so a missing `From<CallNotPermitted>` is reported on
        // the user's own error type token.
        match &protected.parts.err {
            Some(err) if !mentions_impl_trait(err) => {
                quote_spanned! {err.span()=>
                    <#err as #krate::__private::circuit_breaker::WithoutFallback>::without_fallback(#outcome)
                }
            }
            _ => quote_spanned! {protected.output.span()=>
                #krate::__private::circuit_breaker::without_fallback(#outcome)
            },
        }
    }
}
