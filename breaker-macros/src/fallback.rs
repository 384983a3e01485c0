//! The fallback: what is saved before the protected call, and the call made after a failure.
//!
//! The fallback is checked by the type system, not by us: we generate a call that only compiles
//! when the fallback exists, takes the protected fn's arguments plus `CallError<E>`, is async
//! and returns the protected fn's return type. Every token of that call carries the span of the
//! `fallback = "..."` string, so rustc's errors land on it.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;

use crate::args::Fallback;
use crate::item::{mentions_impl_trait, Arg, Body, Protected, Receiver};

/// Code around the protected call that implements the fallback.
pub struct Plan {
    /// Statements run before the protected future is built: copies of the arguments.
    pub save: TokenStream,
    /// An expression, with `err` (a `CallError<E>`) in scope, that evaluates to the fn's output.
    pub call: TokenStream,
}

/// Builds the fallback plan for `protected`, whose typed arguments are `args`.
pub fn plan(fb: &Fallback, protected: &Protected, args: &[Arg], err: &Ident) -> syn::Result<Plan> {
    let span = fb.span();
    let saved_args = Ident::new("__breaker_fallback_args", Span::mixed_site());
    let saved_self = Ident::new("__breaker_fallback_self", Span::mixed_site());

    let method = match (fb.path.get_ident(), protected.receiver) {
        (Some(method), Some(receiver)) => Some((method.clone(), receiver)),
        _ => None,
    };
    let mut save = TokenStream::new();
    let receiver_expr = match &method {
        None => None,
        Some((_, Receiver::Shared)) => Some(quote!(self)),
        Some((_, Receiver::Unique)) if matches!(protected.body, Body::Native) => Some(quote!(self)),
        Some((_, Receiver::Unique)) => {
            return Err(syn::Error::new(
                span,
                "with `#[async_trait]`, the boxed future owns `&mut self`, so a method fallback \
                 cannot get it back: take `&self`, or name an associated fn that does not take \
                 `self`, e.g. `fallback = \"Self::fallback_fn\"`",
            ))
        }
        Some((_, Receiver::Owned)) => {
            let self_token = protected
                .func
                .sig
                .receiver()
                .map(|r| r.self_token.span)
                .unwrap_or(span);
            save.extend(quote_spanned! {self_token=>
                let #saved_self = ::resilience4rs::__private::fallback_arg(&self);
            });
            Some(quote!(#saved_self))
        }
    };

    let copies = args.iter().map(|arg| {
        let ident = &arg.ident;
        let ty_span = syn::spanned::Spanned::span(&arg.ty);
        quote_spanned! {ty_span=> ::resilience4rs::__private::fallback_arg(&#ident), }
    });
    save.extend(quote! { let #saved_args = ( #(#copies)* ); });

    let idents: Vec<&Ident> = args.iter().map(|a| &a.ident).collect();
    // The arguments of the fallback call resolve as before but are *located* on the
    // `fallback = "..."` string, so "wrong arguments" errors (and rustc's suggestions) point
    // at the fallback, not at the protected fn's parameters.
    let located = |ident: &Ident| {
        let mut ident = ident.clone();
        ident.set_span(ident.span().located_at(span));
        ident
    };
    let passed: Vec<Ident> = idents.iter().map(|i| located(i)).collect();
    let err = located(err);
    let invoke = match (&method, &receiver_expr) {
        (Some((name, _)), Some(recv)) => {
            quote_spanned! {span=> #recv.#name( #(#passed,)* #err ) }
        }
        _ => {
            let path = &fb.path;
            quote_spanned! {span=> #path( #(#passed,)* #err ) }
        }
    };
    let output = if mentions_impl_trait(&protected.output) {
        quote!(_)
    } else {
        let out = &protected.output;
        quote!(#out)
    };
    let call = quote_spanned! {span=>
        {
            let ( #(#idents,)* ) = #saved_args;
            ::resilience4rs::__private::fallback::<#output, _>(#invoke).await
        }
    };
    Ok(Plan { save, call })
}
