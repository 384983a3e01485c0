//! The fallback's signature check: the local traits whose `#[diagnostic::on_unimplemented]`
//! messages spell out the signature the fallback must have, built from the protected fn's
//! signature (see [`super`] for how the call uses them).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::args::Fallback;
use crate::item::{Arg, Body, Owner, Protected, Receiver};
use crate::pretty::{escape_braces, tokens as pretty};
use syn::Ident;

/// What the layer tells the fallback about its error parameter.
pub struct ErrorParam<'a> {
    /// The parameter's type as the user writes it in the fallback: `CallError<PayError>`.
    pub written: String,
    /// The type's full path, for notes: `resilience4rs::CallError`.
    pub full_path: &'a str,
}

/// How the fallback is called.
pub(super) enum Form {
    /// A fn called with the arguments and the error (a path, or a name on a free fn).
    Free,
    /// A name on a method: a method of `Self` (given the receiver) or an associated fn.
    Method(Receiver),
}

/// The texts of the checks' messages.
pub(super) struct Messages {
    /// "the fallback `cached` must be `async fn cached(..) -> R`".
    message: String,
    /// The name as written, for labels.
    shown: String,
    /// What the arguments note says.
    arguments_note: String,
    /// What every other note says.
    note: String,
}

impl Messages {
    pub(super) fn new(
        fb: &Fallback,
        protected: &Protected,
        args: &[Arg],
        error: &ErrorParam<'_>,
        form: &Form,
    ) -> Self {
        let sig = &protected.func.sig;
        let shown = fb.display();
        let mut params: Vec<String> = Vec::new();
        // The receiver is shown for a fallback looked up on `Self`; a path elsewhere (a
        // module's fn) is shown without it, the note says it may take it.
        let on_self =
            fb.unqualified || (fb.path.segments.len() == 2 && fb.path.segments[0].ident == "Self");
        if let (Form::Method(_), Some(receiver), true) = (form, sig.receiver(), on_self) {
            let text = if receiver.colon_token.is_some() {
                format!(
                    "self: {}",
                    pretty(quote::ToTokens::to_token_stream(&receiver.ty))
                )
            } else {
                let reference = match &receiver.reference {
                    Some((_, Some(lifetime))) => format!("&{lifetime} "),
                    Some((_, None)) => "&".to_string(),
                    None => String::new(),
                };
                let mutability = if receiver.reference.is_some() && receiver.mutability.is_some() {
                    "mut "
                } else {
                    ""
                };
                format!("{reference}{mutability}self")
            };
            params.push(text);
        }
        params.extend(args.iter().map(|a| a.declared.clone()));
        params.push(format!("error: {}", error.written));
        let generics = own_generics(&sig.generics, matches!(protected.body, Body::AsyncTrait(_)));
        let where_clause = generics
            .where_clause
            .as_ref()
            .filter(|w| !w.predicates.is_empty())
            .map(|w| format!(" {}", pretty(quote::ToTokens::to_token_stream(w))))
            .unwrap_or_default();
        let generics = if generics.params.is_empty() {
            String::new()
        } else {
            let params = &generics.params;
            pretty(quote::quote!(<#params>))
        };
        let output = pretty(quote::ToTokens::to_token_stream(&protected.output));
        let signature = format!(
            "async fn {name}{generics}({params}) -> {output}{where_clause}",
            name = fb.fn_name(),
            params = params.join(", "),
        );
        let signature = if matches!(protected.body, Body::AsyncTrait(_)) {
            without_async_trait_lifetimes(&signature)
        } else {
            signature
        };
        let message = format!("the fallback `{shown}` must be `{signature}`");
        let common = format!(
            "a fallback takes the protected fn's arguments, then the error (`{}`) last, is \
             `async`, and returns the protected fn's return type",
            error.full_path
        );
        let arguments_note = match form {
            Form::Method(_) if fb.unqualified => format!(
                "{common}; `fallback = \"{shown}\"` on a method names a method of `Self` (or an \
                 associated fn without `self`): for a free fn, write `fallback = \"self::{shown}\"`"
            ),
            Form::Method(_) => {
                format!("{common}; on a method, the fallback may also take the receiver first")
            }
            Form::Free if fb.unqualified => format!(
                "{common}; `fallback = \"{shown}\"` names a fn in scope: for a method or \
                 associated fn of `Self`, write `fallback = \"Self::{shown}\"`"
            ),
            Form::Free => common.clone(),
        };
        Messages {
            message: escape_braces(&message),
            shown: escape_braces(&shown),
            arguments_note: escape_braces(&arguments_note),
            note: escape_braces(&common),
        }
    }
}

/// The local traits of the checks, and their impls for the arity (`count` = arguments plus
/// the error) and receiver at hand.
pub(super) fn check_items(
    m: &Messages,
    form: &Form,
    count: usize,
    krate: &TokenStream,
    at: Span,
) -> TokenStream {
    let fallback = quote_spanned!(at=> #krate::__private::fallback);
    let Messages {
        message,
        shown,
        arguments_note,
        note,
    } = m;
    let label_fn = format!("`{shown}` is not a fn");
    let label_args = format!("`{shown}` takes other arguments");
    let label_async = format!("`{shown}` is not `async`");
    let label_returns = format!("`{shown}` returns `{{Self}}`");
    let copy_message = format!(
        "the fallback `{shown}` gets its own copy of every argument, but `{{Self}}` is not `Clone`"
    );

    // `A1 .. An` for the arguments and the error.
    let params: Vec<Ident> = (1..=count)
        .map(|i| format_ident!("A{}", i, span = at))
        .collect();
    let values: Vec<Ident> = (1..=count)
        .map(|i| format_ident!("a{}", i, span = at))
        .collect();
    let impl_for = |takes: TokenStream,
                    passed: TokenStream,
                    generics: TokenStream,
                    convert: TokenStream| {
        quote_spanned! {at=>
            #[diagnostic::do_not_recommend]
            impl<#generics #(#params,)*> FallbackArguments
                for (#fallback::Takes<(#takes #(#params,)*)>, #fallback::Passed<(#passed #(#params,)*)>)
            {
                type Given = (#passed #(#params,)*);
                type Takes = (#takes #(#params,)*);
                type Ret<O> = O;
                #[inline(always)]
                fn __call<F, M>(self, f: F, given: Self::Given) -> Self::Ret<<F as #fallback::FnSig<M>>::Out>
                where
                    F: #fallback::FnSig<M, Args = Self::Takes>,
                {
                    #convert
                }
            }
        }
    };
    let plain = |takes_recv: TokenStream,
                 passed_recv: TokenStream,
                 generics: TokenStream,
                 recv_expr: Option<TokenStream>| {
        let convert = match recv_expr {
            Some(expr) => quote_spanned! {at=>
                let (r, #(#values,)*) = given;
                #fallback::FnSig::call_with(f, (#expr, #(#values,)*))
            },
            None if passed_recv.is_empty() => quote_spanned! {at=>
                #fallback::FnSig::call_with(f, given)
            },
            None => quote_spanned! {at=>
                let (_, #(#values,)*) = given;
                #fallback::FnSig::call_with(f, (#(#values,)*))
            },
        };
        impl_for(takes_recv, passed_recv, generics, convert)
    };

    let impls: TokenStream = match form {
        Form::Free => plain(quote!(), quote!(), quote!(), None),
        Form::Method(receiver) => {
            let (passed, generics, variants): (
                TokenStream,
                TokenStream,
                Vec<(TokenStream, TokenStream)>,
            ) = match receiver {
                Receiver::Shared => (
                    quote_spanned!(at=> &'r S,),
                    quote_spanned!(at=> 'r, S: ?Sized,),
                    vec![(quote_spanned!(at=> &'r S,), quote_spanned!(at=> r))],
                ),
                Receiver::Unique => (
                    quote_spanned!(at=> &'r mut S,),
                    quote_spanned!(at=> 'r, S: ?Sized,),
                    vec![
                        (quote_spanned!(at=> &'r mut S,), quote_spanned!(at=> r)),
                        (quote_spanned!(at=> &'r S,), quote_spanned!(at=> &*r)),
                    ],
                ),
                Receiver::Owned(owner) => {
                    let (held, mut variants) = match owner {
                        Owner::Value => (
                            quote_spanned!(at=> S),
                            vec![
                                (
                                    quote_spanned!(at=> &'r S,),
                                    quote_spanned!(at=> &*#fallback::borrow(r)),
                                ),
                                (
                                    quote_spanned!(at=> &'r mut S,),
                                    quote_spanned!(at=> #fallback::borrow(r)),
                                ),
                            ],
                        ),
                        Owner::Box => (
                            quote_spanned!(at=> ::std::boxed::Box<S>),
                            vec![
                                (
                                    quote_spanned!(at=> &'r S,),
                                    quote_spanned!(at=> &**#fallback::borrow(r)),
                                ),
                                (
                                    quote_spanned!(at=> &'r mut S,),
                                    quote_spanned!(at=> &mut **#fallback::borrow(r)),
                                ),
                            ],
                        ),
                        Owner::Rc => (
                            quote_spanned!(at=> ::std::rc::Rc<S>),
                            vec![(
                                quote_spanned!(at=> &'r S,),
                                quote_spanned!(at=> &**#fallback::borrow(r)),
                            )],
                        ),
                        Owner::Arc => (
                            quote_spanned!(at=> ::std::sync::Arc<S>),
                            vec![(
                                quote_spanned!(at=> &'r S,),
                                quote_spanned!(at=> &**#fallback::borrow(r)),
                            )],
                        ),
                        Owner::Other => (quote_spanned!(at=> S), Vec::new()),
                    };
                    variants.insert(
                        0,
                        (
                            quote_spanned!(at=> #held,),
                            quote_spanned!(at=> #fallback::take(r)),
                        ),
                    );
                    (
                        quote_spanned!(at=> &'r mut ::core::option::Option<#held>,),
                        quote_spanned!(at=> 'r, S,),
                        variants,
                    )
                }
            };
            let mut all = TokenStream::new();
            for (takes, expr) in variants {
                all.extend(plain(takes, passed.clone(), generics.clone(), Some(expr)));
            }
            // An associated fn without `self`.
            all.extend(plain(quote!(), passed, generics, None));
            all
        }
    };

    quote_spanned! {at=>
        #[diagnostic::on_unimplemented(message = #message, label = #label_fn, note = #note)]
        trait FallbackIsFn<M> {
            type Takes;
            fn __takes(&self) -> Self::Takes;
        }
        #[diagnostic::do_not_recommend]
        impl<F: #fallback::FnSig<M>, M> FallbackIsFn<M> for F {
            type Takes = #fallback::Takes<<F as #fallback::FnSig<M>>::Args>;
            #[inline(always)]
            fn __takes(&self) -> Self::Takes {
                #fallback::Takes::new()
            }
        }

        #[diagnostic::on_unimplemented(message = #message, label = #label_args, note = #arguments_note)]
        trait FallbackArguments: Sized {
            type Given;
            type Takes;
            type Ret<O>;
            fn __call<F, M>(self, f: F, given: Self::Given) -> Self::Ret<<F as #fallback::FnSig<M>>::Out>
            where
                F: #fallback::FnSig<M, Args = Self::Takes>;
        }
        #impls

        #[diagnostic::on_unimplemented(message = #message, label = #label_async, note = #note)]
        trait FallbackIsAsync {
            type Future: ::core::future::Future;
            fn __future(self) -> Self::Future;
        }
        #[diagnostic::do_not_recommend]
        impl<F: ::core::future::Future> FallbackIsAsync for #fallback::Async<F> {
            type Future = F;
            #[inline(always)]
            fn __future(self) -> F {
                self.0
            }
        }

        #[diagnostic::on_unimplemented(message = #message, label = #label_returns, note = #note)]
        trait FallbackReturns<R> {
            fn __same(self) -> R;
        }
        #[diagnostic::do_not_recommend]
        impl<T> FallbackReturns<T> for T {
            #[inline(always)]
            fn __same(self) -> T {
                self
            }
        }
        #[allow(dead_code)]
        trait FallbackOutput: Sized {
            #[inline(always)]
            fn __output<R>(self) -> R
            where
                Self: FallbackReturns<R>,
            {
                FallbackReturns::__same(self)
            }
        }
        impl<T> FallbackOutput for T {}

        #[diagnostic::on_unimplemented(
            message = #copy_message,
            label = "`{Self}` must implement `Clone`",
            note = "the protected call takes the arguments, so the fallback gets clones made before \
                    the call: derive or implement `Clone`, pass it as `Arc<..>` or `&..`, or drop \
                    the fallback"
        )]
        #[allow(dead_code)]
        trait FallbackArgument: Sized {
            fn __copy(&self) -> Self;
        }
        impl<T: ::core::clone::Clone> FallbackArgument for T {
            #[inline(always)]
            fn __copy(&self) -> Self {
                ::core::clone::Clone::clone(self)
            }
        }
    }
}

/// The fn's generics as the user wrote them: without the `'life0..` and `'async_trait`
/// lifetimes (and their where clauses) that `#[async_trait]` adds.
fn own_generics(generics: &syn::Generics, async_trait: bool) -> syn::Generics {
    let mut generics = generics.clone();
    if !async_trait {
        return generics;
    }
    let added = |name: &str| {
        name == "async_trait"
            || name
                .strip_prefix("life")
                .is_some_and(|n| n.parse::<u32>().is_ok())
    };
    generics.params = generics
        .params
        .into_iter()
        .filter(|p| !matches!(p, syn::GenericParam::Lifetime(l) if added(&l.lifetime.ident.to_string())))
        .collect();
    if let Some(w) = &mut generics.where_clause {
        w.predicates = w
            .predicates
            .clone()
            .into_iter()
            .filter(|p| {
                !crate::item::mentions_ident(&quote::ToTokens::to_token_stream(p), "async_trait")
            })
            .collect();
    }
    generics
}

/// `&'life0 self` -> `&self`: the lifetimes `#[async_trait]` adds, out of a message.
fn without_async_trait_lifetimes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("'life") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 5..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            out.push_str("'life");
            rest = after;
            continue;
        }
        rest = after[digits..]
            .strip_prefix(' ')
            .unwrap_or(&after[digits..]);
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn async_trait_lifetimes_are_dropped_from_messages() {
        assert_eq!(
            without_async_trait_lifetimes(
                "async fn f(&'life0 self, x: &'life1 str, y: &'lifetime u8)"
            ),
            "async fn f(&self, x: &str, y: &'lifetime u8)"
        );
    }
}
