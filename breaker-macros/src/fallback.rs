//! The fallback, shared by every attribute: what is saved before the protected call, the call
//! made after a failure, and the checks that turn every mistake in the fallback's signature
//! into one error that spells out the signature it must have.
//!
//! The fallback is checked by the type system: the expansion resolves its path to a fn item
//! and feeds it to traits local to the expansion (their `#[diagnostic::on_unimplemented]`
//! messages are built here, from the protected fn's signature), on top of the facade's
//! `__private::fallback` machinery (see there for why each step is shaped as it is). Every
//! token of the check is located on the `fallback = "..."` argument, with the macro's own
//! hygiene, so the error lands there and rustc does not offer rewrites of the attribute.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;

use crate::args::Fallback;
use crate::item::{mentions_impl_trait, Arg, Body, Owner, Protected, Receiver};
use crate::pretty::{escape_braces, tokens as pretty};

/// What the layer tells the fallback about its error parameter.
pub struct ErrorParam<'a> {
    /// The parameter's type as the user writes it in the fallback: `CallError<PayError>`.
    pub written: String,
    /// The type's full path, for notes: `resilience4rs::CallError`.
    pub full_path: &'a str,
}

/// Code around the protected call that implements the fallback.
pub struct Plan {
    /// Items (the local check traits) for the top of the new body.
    pub items: TokenStream,
    /// Statements run before the protected future is built: copies of the arguments.
    pub save: TokenStream,
    /// An expression, with `err` (the layer's error) in scope, that evaluates to the fn's
    /// output.
    pub call: TokenStream,
}

/// How the fallback is called.
enum Form {
    /// A fn called with the arguments and the error (a path, or a name on a free fn).
    Free,
    /// A name on a method: a method of `Self` (given the receiver) or an associated fn.
    Method(Receiver),
}

/// Builds the fallback plan for `protected`, whose typed arguments are `args`.
pub fn plan(
    fb: &Fallback,
    protected: &Protected,
    args: &[Arg],
    err: &Ident,
    error: &ErrorParam<'_>,
    krate: &TokenStream,
) -> syn::Result<Plan> {
    let at = Span::call_site().located_at(fb.span);
    let local = |name: &str| Ident::new(name, Span::mixed_site().located_at(fb.span));

    // On a method, the fallback may take the receiver first (a method of `Self` or of a
    // trait, `"name"`, `"Self::name"`, `"Trait::name"`) or not (an associated or free fn);
    // its arity says which. (Under `#[async_trait]`, `&mut self` is gone into the boxed
    // future, so a path there is called without it.)
    let unique_async_trait = protected.receiver == Some(Receiver::Unique)
        && matches!(protected.body, Body::AsyncTrait(_));
    let form = match protected.receiver {
        Some(receiver) if fb.unqualified || !unique_async_trait => Form::Method(receiver),
        _ => Form::Free,
    };
    if let (Form::Method(Receiver::Unique), Body::AsyncTrait(_)) = (&form, &protected.body) {
        return Err(syn::Error::new(
            fb.span,
            "with `#[async_trait]`, the boxed future owns `&mut self`, so a method fallback \
             cannot get it back: take `&self`, or name an associated fn that does not take \
             `self`, e.g. `fallback = \"Self::fallback_fn\"`",
        ));
    }

    let messages = Messages::new(fb, protected, args, error, &form);
    let items = check_items(&messages, &form, args.len() + 1, krate, at);

    // Copies for the fallback, taken before the protected call.
    let copy = local("FallbackArgument");
    let saved_args = local("__fallback_args");
    let saved_self = local("__fallback_self");
    let copies = args.iter().map(|arg| {
        let ident = &arg.ident;
        let ty_span = syn::spanned::Spanned::span(&arg.ty);
        quote_spanned! {ty_span=> #copy::__copy(&#ident), }
    });
    let mut save = quote! { let #saved_args = ( #(#copies)* ); };
    if let Form::Method(Receiver::Owned(_)) = form {
        let self_span = protected
            .func
            .sig
            .receiver()
            .map(|r| r.self_token.span)
            .unwrap_or(fb.span);
        let self_token = quote_spanned!(self_span=> self);
        save.extend(quote_spanned! {self_span=>
            let #saved_self = #copy::__copy(&#self_token);
        });
    }

    // The call.
    let idents: Vec<&Ident> = args.iter().map(|a| &a.ident).collect();
    let slot = local("__fallback_slot");
    let (receiver_setup, receiver_given) = match &form {
        Form::Free => (TokenStream::new(), TokenStream::new()),
        Form::Method(Receiver::Shared | Receiver::Unique) => {
            (TokenStream::new(), quote_spanned!(at=> self,))
        }
        Form::Method(Receiver::Owned(_)) => (
            quote_spanned! {at=>
                let mut #slot = ::core::option::Option::Some(#saved_self);
            },
            quote_spanned!(at=> &mut #slot,),
        ),
    };
    let path = match &form {
        Form::Method(_) if fb.unqualified => {
            let name = &fb.path;
            quote_spanned!(at=> Self::#name)
        }
        _ => {
            let path = &fb.path;
            quote_spanned!(at=> #path)
        }
    };
    let (function, given, pair, out, kind, future, value) = (
        local("__fallback_fn"),
        local("__fallback_given"),
        local("__fallback_pair"),
        local("__fallback_out"),
        local("__fallback_kind"),
        local("__fallback_future"),
        local("__fallback_value"),
    );
    let err = {
        let mut err = err.clone();
        err.set_span(err.span().located_at(fb.span));
        err
    };
    let (takes, arguments, is_async, output) = (
        local("FallbackIsFn"),
        local("FallbackArguments"),
        local("FallbackIsAsync"),
        local("FallbackOutput"),
    );
    let finish = if mentions_impl_trait(&protected.output) {
        quote_spanned!(at=> #value)
    } else {
        let ty = &protected.output;
        quote_spanned!(at=> #output::__output::<#ty>(#value))
    };
    let call = quote_spanned! {at=>
        {
            let ( #(#idents,)* ) = #saved_args;
            #receiver_setup
            let #function = #path;
            let #given = ( #receiver_given #(#idents,)* #err, );
            let #pair = (#takes::__takes(&#function), #krate::__private::fallback::passed(&#given));
            let #out = #arguments::__call(#pair, #function, #given);
            #[allow(unused_imports)]
            use #krate::__private::fallback::{ProbeAsync as _, ProbeOther as _};
            let #kind = (&&#krate::__private::fallback::Probe(&#out)).fallback_kind();
            let #future = #is_async::__future(#kind.wrap(#out));
            let #value = #future.await;
            #finish
        }
    };
    Ok(Plan { items, save, call })
}

/// Reports a fallback named in the wrong namespace when the file shows it (see
/// [`crate::hints`]): a free fn named on a method, an associated fn named on a fn without
/// `self`.
pub fn check_namespace(
    fb: &Fallback,
    protected: &Protected,
    file: Option<&std::path::Path>,
) -> syn::Result<()> {
    let (Some(file), true) = (file, fb.unqualified) else {
        return Ok(());
    };
    let Some(index) = crate::hints::index(file) else {
        return Ok(());
    };
    let name = fb.fn_name();
    let protected_name = protected.func.sig.ident.to_string();
    let method = protected.receiver.is_some();
    match index.mixup(&name, &protected_name, method) {
        None => Ok(()),
        Some(crate::hints::Mixup::FreeFnOnMethod) => Err(syn::Error::new(
            fb.span,
            format!(
                "`{name}` is a free fn, but on a method `fallback = \"{name}\"` names a method or \
                 associated fn of `Self`: write `fallback = \"self::{name}\"` for the free fn (or \
                 `fallback = \"Self::{name}\"` for a method of `Self` defined in another file)"
            ),
        )),
        Some(crate::hints::Mixup::AssociatedFnOnFreeFn) => Err(syn::Error::new(
            fb.span,
            format!(
                "`{name}` is an associated fn or method of an impl, but on a fn without `self` \
                 `fallback = \"{name}\"` names a fn in scope: write `fallback = \"Self::{name}\"`"
            ),
        )),
    }
}

/// The texts of the checks' messages.
struct Messages {
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
    fn new(
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
fn check_items(
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
