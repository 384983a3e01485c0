//! The fallback, shared by every attribute: what is saved before the protected call, the call
//! made after a failure, and the checks that turn every mistake in the fallback's signature
//! into one error that spells out the signature it must have.
//!
//! The fallback is checked by the type system: the expansion resolves its path to a fn item
//! and feeds it to traits local to the expansion (their `#[diagnostic::on_unimplemented]`
//! messages are built in `fallback/signature.rs`, from the protected fn's signature), on top of the facade's
//! `__private::fallback` machinery (see there for why each step is shaped as it is). Every
//! token of the check is located on the `fallback = "..."` argument, with the macro's own
//! hygiene, so the error lands there and rustc does not offer rewrites of the attribute.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;

use crate::args::Fallback;
use crate::item::{mentions_impl_trait, Arg, Body, Protected, Receiver};

mod signature;

pub use signature::ErrorParam;
use signature::{check_items, Form, Messages};

/// Code around the protected call that implements the fallback.
pub struct Plan {
    /// Items (the local check traits) for the top of the new body.
    pub items: TokenStream,
    /// Statements run before the protected future is built: copies of the arguments.
    pub save: TokenStream,
    /// An expression, with `err` (the layer's error) in scope, that evaluates to the fn's
    /// output.
    pub call: TokenStream,
    /// For a fallback called more than once (a stacked layer's): statements binding the
    /// arguments to fresh copies of the saved ones.
    pub copies: TokenStream,
    /// `call` after the arguments are bound: statements ending in the fn's output, to run
    /// in an `async` block after `copies`.
    pub rest: TokenStream,
}

/// Builds the fallback plan for `protected`, whose typed arguments are `args`.
pub fn plan(
    fb: &Fallback,
    protected: &Protected,
    args: &[Arg],
    err: &Ident,
    error: &ErrorParam<'_>,
    krate: &TokenStream,
    copy_with: Option<&Ident>,
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
    // A stack copies arguments for its retry too: one check (`copy_with`) for every copy,
    // each spanned on the argument's type, reports a missing `Clone` once.
    let copy = match copy_with {
        Some(ident) => ident.clone(),
        None => local("FallbackArgument"),
    };
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
    // Spelled as `save`'s copies (`&*order` over `&order`, both spanned on the argument), so a
    // missing `Clone` is one error, not one per copy.
    let fresh = args.iter().map(|arg| {
        let ty_span = syn::spanned::Spanned::span(&arg.ty);
        let ident = &arg.ident;
        quote_spanned! {ty_span=> #copy::__copy(&*#ident), }
    });
    let copies = quote_spanned! {at=>
        let ( #(ref #idents,)* ) = #saved_args;
        let ( #(#idents,)* ) = ( #(#fresh)* );
    };
    let rest = quote_spanned! {at=>
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
    };
    let call = quote_spanned! {at=>
        {
            let ( #(#idents,)* ) = #saved_args;
            #rest
        }
    };
    Ok(Plan {
        items,
        save,
        call,
        copies,
        rest,
    })
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
