//! Code generation: the fn keeps its signature; its body is rewritten in place to run through
//! the breaker (see the crate docs for an example expansion).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

use crate::args::Args;
use crate::fallback;
use crate::item::{mentions_impl_trait, typed_args, Body, Protected};

/// Expands the annotated fn.
pub fn expand(args: Args, mut protected: Protected) -> syn::Result<TokenStream> {
    let cell = Ident::new("__BREAKER_INSTANCE", Span::call_site());
    let breaker = Ident::new("__breaker_instance", Span::mixed_site());
    let outcome = Ident::new("__breaker_outcome", Span::mixed_site());
    let err = Ident::new("__breaker_error", Span::mixed_site());
    let name = &args.name;

    // Only a fallback needs the arguments after the call; without one, leave patterns alone.
    let typed = match &args.fallback {
        Some(_) => typed_args(&mut protected.func),
        None => Vec::new(),
    };
    let rebinds = typed.iter().filter_map(|a| {
        let pat = a.rebind.as_ref()?;
        let ident = &a.ident;
        Some(quote!(let #pat = #ident;))
    });
    let rebinds: TokenStream = rebinds.collect();

    let lookup = match &args.registry {
        Some(registry) => quote_spanned! {registry.span()=>
            ::resilience4rs::__private::from_registry(&#registry, #name)
        },
        None => quote!(::resilience4rs::__private::from_global(#name)),
    };

    let future = match &protected.body {
        Body::Native => {
            // The statements are spliced (not the block) so a one-expression body does not
            // trip `unused_braces` in the user's crate.
            let stmts = &protected.func.block.stmts;
            let fake_return = typed_return_edge(&protected);
            quote! {
                async {
                    #fake_return
                    #(#stmts)*
                }
            }
        }
        Body::AsyncTrait(inner) => quote!(#inner),
    };

    let (save, finish) = match &args.fallback {
        Some(fb) => {
            let plan = fallback::plan(fb, &protected, &typed, &err)?;
            let call = plan.call;
            let finish = quote! {
                match #outcome {
                    ::core::result::Result::Ok(value) => ::core::result::Result::Ok(value),
                    ::core::result::Result::Err(#err) => #call,
                }
            };
            (plan.save, finish)
        }
        None => {
            // Naming `E` in the turbofish puts a missing `From<CallNotPermitted>` on the
            // user's own error type token.
            let finish = match &protected.error_ty {
                Some(error_ty) if !mentions_impl_trait(error_ty) => {
                    quote_spanned! {error_ty.span()=>
                        ::resilience4rs::__private::without_fallback::<_, #error_ty>(#outcome)
                    }
                }
                _ => quote_spanned! {protected.output.span()=>
                    ::resilience4rs::__private::without_fallback(#outcome)
                },
            };
            (TokenStream::new(), finish)
        }
    };

    let check_output = {
        let output = &protected.output;
        if mentions_impl_trait(output) {
            TokenStream::new()
        } else {
            quote_spanned! {output.span()=>
                ::resilience4rs::__private::protected_output::<#output>();
            }
        }
    };

    let body = quote! {
        #check_output
        static #cell: ::std::sync::OnceLock<::resilience4rs::CircuitBreaker> =
            ::std::sync::OnceLock::new();
        let #breaker: &'static ::resilience4rs::CircuitBreaker =
            #cell.get_or_init(|| #lookup);
        #save
        #rebinds
        let #outcome = #breaker.call(#future).await;
        #finish
    };

    let func = &protected.func;
    let attrs = &func.attrs;
    let vis = &func.vis;
    let sig = &func.sig;
    let body = match protected.body {
        Body::Native => body,
        Body::AsyncTrait(_) => quote!(::std::boxed::Box::pin(async move { #body })),
    };
    Ok(quote! {
        #(#attrs)*
        #vis #sig {
            #body
        }
    })
}

/// A never-taken `return` of the declared type, so `?` and `return` inside the body are typed
/// against the fn's return type rather than left to inference.
fn typed_return_edge(protected: &Protected) -> TokenStream {
    let output = &protected.output;
    if mentions_impl_trait(output) {
        return TokenStream::new();
    }
    let typed = Ident::new("__breaker_typed_return", Span::mixed_site());
    quote! {
        #[allow(
            unreachable_code,
            clippy::diverging_sub_expression,
            clippy::needless_return,
            clippy::unreachable
        )]
        if false {
            let #typed: #output = ::core::unreachable!();
            return #typed;
        }
    }
}
