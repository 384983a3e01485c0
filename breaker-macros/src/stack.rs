//! Stacking: the five attributes on one fn make one composed call.
//!
//! Attributes run from the top, so the topmost resilience attribute sees the others as plain
//! attributes on the item (as `tracing-attributes` sees its siblings): it takes them off,
//! parses each one's arguments with that attribute's [`Spec`], and writes a single call of
//! the facade's `__private::stack` runtime, which nests the layers per call by the aspect
//! orders of the loaded config. A lone `#[circuit_breaker]` keeps its own expansion
//! (`expand.rs`); every other combination goes through here.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Ident, ItemFn, Pat};

use crate::args::{Args, Spec};
use crate::circuit_breaker::CircuitBreaker;
use crate::expand::{typed_return_edge, Context, Layer};
use crate::fallback::{self, ErrorParam};
use crate::item::{self, mentions_impl_trait, typed_args, Body, Protected, Receiver};
use crate::lifetimes::{is_static, non_static_params};
use crate::stack_checks::{error_span, io_error, rejections_arm, REJECTIONS};

/// One of the five attributes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// `#[retry]`.
    Retry,
    /// `#[circuit_breaker]`.
    CircuitBreaker,
    /// `#[rate_limiter]`.
    RateLimiter,
    /// `#[time_limiter]`.
    TimeLimiter,
    /// `#[bulkhead]`.
    Bulkhead,
}

impl Kind {
    const ALL: [Kind; 5] = [
        Kind::Retry,
        Kind::CircuitBreaker,
        Kind::RateLimiter,
        Kind::TimeLimiter,
        Kind::Bulkhead,
    ];

    /// The attribute's name, and the field of the runtime's `Layers` and `Fallbacks`.
    pub fn attribute(self) -> &'static str {
        match self {
            Kind::Retry => "retry",
            Kind::CircuitBreaker => "circuit_breaker",
            Kind::RateLimiter => "rate_limiter",
            Kind::TimeLimiter => "time_limiter",
            Kind::Bulkhead => "bulkhead",
        }
    }

    fn spec(self) -> &'static Spec {
        match self {
            Kind::Retry => &crate::retry::SPEC,
            Kind::CircuitBreaker => &crate::circuit_breaker::SPEC,
            Kind::RateLimiter => &crate::rate_limiter::SPEC,
            Kind::TimeLimiter => &crate::time_limiter::SPEC,
            Kind::Bulkhead => &crate::bulkhead::SPEC,
        }
    }

    /// Resilience4j's name of the layer's rejection, for messages.
    fn java(self) -> &'static str {
        match self {
            Kind::Retry => "@Retry",
            Kind::CircuitBreaker => "@CircuitBreaker",
            Kind::RateLimiter => "@RateLimiter",
            Kind::TimeLimiter => "@TimeLimiter",
            Kind::Bulkhead => "@Bulkhead",
        }
    }

    /// The attribute `attr` is, when it is one of ours: a single segment (`#[retry]`, as
    /// imported), or one of our names under the facade's path: `resilience4rs::retry`, the
    /// name the facade has in Cargo.toml (a renamed dependency), the `crate = "..."` path of
    /// the attribute being expanded (`ours`) or of `attr` itself. Anything else
    /// (`#[other_crate::retry]`, `#[my::bulkhead]`) is someone else's attribute and is left
    /// on the fn.
    fn of(attr: &Attribute, ours: &[String]) -> Option<Kind> {
        let path = attr.path();
        let kind = {
            let last = path.segments.last()?.ident.to_string();
            Kind::ALL.into_iter().find(|k| k.attribute() == last)?
        };
        if path.leading_colon.is_none() && path.segments.len() == 1 {
            return Some(kind);
        }
        let prefix = path_text(path.segments.iter().take(path.segments.len() - 1));
        let own_crate = || {
            let syn::Meta::List(list) = &attr.meta else {
                return None;
            };
            let args = Args::parse(list.tokens.clone(), attr.span(), kind.spec()).ok()?;
            args.krate.map(|k| path_text(k.segments.iter()))
        };
        let is_ours = prefix == crate::krate::FACADE
            || ours.contains(&prefix)
            || own_crate().is_some_and(|c| c == prefix);
        is_ours.then_some(kind)
    }
}

/// `a::b::c` for the segments (a leading `::` is not part of it; arguments ignored).
fn path_text<'a>(segments: impl Iterator<Item = &'a syn::PathSegment>) -> String {
    segments
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// The facade's paths the attribute being expanded knows: its name in Cargo.toml, and its
/// own `crate = "..."` path.
fn our_paths(kind: Kind, attr: &TokenStream) -> Vec<String> {
    let mut ours = Vec::new();
    if let Ok(proc_macro_crate::FoundCrate::Name(name)) =
        proc_macro_crate::crate_name(crate::krate::FACADE)
    {
        ours.push(name);
    }
    if let Ok(Args {
        krate: Some(path), ..
    }) = Args::parse(attr.clone(), Span::call_site(), kind.spec())
    {
        ours.push(path_text(path.segments.iter()));
    }
    ours
}

/// The entry point of every attribute.
pub fn attribute(
    kind: Kind,
    attr: TokenStream,
    item: TokenStream,
    file: Option<&std::path::Path>,
) -> TokenStream {
    let Ok(mut func) = syn::parse2::<ItemFn>(item.clone()) else {
        // Not a fn: the attribute's own analysis says what is wrong.
        return single(kind, attr, item, file);
    };
    let ours = our_paths(kind, &attr);
    let mut siblings: Vec<(Kind, Attribute)> = Vec::new();
    func.attrs.retain(|a| match Kind::of(a, &ours) {
        Some(k) if matches!(a.style, syn::AttrStyle::Outer) => {
            siblings.push((k, a.clone()));
            false
        }
        _ => true,
    });
    if siblings.is_empty() && kind == Kind::CircuitBreaker {
        return single(kind, attr, item, file);
    }
    let stripped = quote::ToTokens::to_token_stream(&func);
    match stacked(kind, attr, &siblings, stripped.clone(), file) {
        Ok(tokens) => tokens,
        Err(error) => {
            // The fn is emitted as written, without the siblings: naming their paths in it
            // keeps their imports used, so the error is all the user sees.
            for (_, a) in siblings.iter().rev() {
                let path = a.path();
                func.block.stmts.insert(
                    0,
                    syn::parse_quote!(#[allow(unused_imports)] use #path as _;),
                );
            }
            crate::diag::with_item(error, quote::ToTokens::to_token_stream(&func))
        }
    }
}

/// A lone `#[circuit_breaker]`, or an item that is not a fn.
fn single(
    kind: Kind,
    attr: TokenStream,
    item: TokenStream,
    file: Option<&std::path::Path>,
) -> TokenStream {
    if kind == Kind::CircuitBreaker {
        return crate::expand::attribute(&CircuitBreaker, attr, item, file);
    }
    let error = Args::parse(attr, Span::call_site(), kind.spec())
        .and_then(|_| item::analyse(item.clone(), kind.attribute()).map(|_| ()))
        .err();
    match error {
        Some(error) => crate::diag::with_item(error, item),
        None => item,
    }
}

fn stacked(
    kind: Kind,
    attr: TokenStream,
    siblings: &[(Kind, Attribute)],
    item: TokenStream,
    file: Option<&std::path::Path>,
) -> syn::Result<TokenStream> {
    let mut layers = vec![(kind, Args::parse(attr, Span::call_site(), kind.spec())?)];
    for (k, a) in siblings {
        if let Some((first, _)) = layers.iter().find(|(l, _)| l == k) {
            return Err(syn::Error::new(
                a.span(),
                format!(
                    "`#[{name}]` is given twice on this fn: a fn has one {what} (Resilience4j \
                     applies one `{java}` per method); remove one",
                    name = first.attribute(),
                    what = first.attribute().replace('_', " "),
                    java = first.java(),
                ),
            ));
        }
        let tokens = match &a.meta {
            syn::Meta::List(list) => list.tokens.clone(),
            _ => TokenStream::new(),
        };
        layers.push((*k, Args::parse(tokens, a.span(), k.spec())?));
    }
    let protected = item::analyse(item, kind.attribute())?;
    // The attributes taken off the item are not expanded by rustc: naming their paths keeps
    // their imports used.
    let paths = siblings.iter().map(|(_, a)| a.path());
    let uses = quote! {
        #(
            #[allow(unused_imports)]
            use #paths as _;
        )*
    };
    for (_, args) in &layers {
        if let Some(fb) = &args.fallback {
            fallback::check_namespace(fb, &protected, file)?;
        }
    }
    let given = layers.iter().find_map(|(_, a)| a.krate.as_ref());
    let (krate, uses) = match given {
        // Every path of the expansion goes through one import of the given path, so a wrong
        // path is one error, on the user's `crate = "..."` (rustc reports an unresolved
        // import once and stays quiet about the names it would have brought).
        Some(path) => {
            let at = path.span();
            let alias = Ident::new("__resilience4rs", Span::mixed_site().located_at(at));
            let import = quote_spanned! {at=>
                #[allow(unused_imports)]
                use #path as #alias;
            };
            let import = quote!(#import #uses);
            (quote!(#alias), import)
        }
        None => (crate::krate::facade(None)?, uses),
    };
    expand(&layers, protected, krate, uses)
}

fn expand(
    layers: &[(Kind, Args)],
    mut protected: Protected,
    krate: TokenStream,
    uses: TokenStream,
) -> syn::Result<TokenStream> {
    let names: Vec<String> = layers
        .iter()
        .map(|(k, _)| format!("#[{}]", k.attribute()))
        .collect();
    let shown = names.join(" ");
    match protected.receiver {
        None | Some(Receiver::Shared) => {}
        Some(_) => {
            let at = protected
                .func
                .sig
                .receiver()
                .map(|r| r.span())
                .unwrap_or_else(Span::call_site);
            return Err(syn::Error::new(
                at,
                format!(
                    "{shown} can only go on free fns and `&self` methods (the layers, their \
                     fallbacks and every retry share the call): take `&self` and keep mutable \
                     state behind a `Mutex`, or use `#[circuit_breaker]` alone"
                ),
            ));
        }
    }
    let has = |k: Kind| layers.iter().any(|(l, _)| *l == k);
    let repeat = has(Kind::Retry);
    let any_fallback = layers.iter().any(|(_, a)| a.fallback.is_some());
    let typed = if repeat || any_fallback {
        typed_args(&mut protected.func)
    } else {
        Vec::new()
    };
    if repeat {
        // Every attempt binds fresh copies; the fn's own bindings are only copied from.
        for input in protected.func.sig.inputs.iter_mut() {
            if let syn::FnArg::Typed(t) = input {
                if let Pat::Ident(pi) = &mut *t.pat {
                    pi.mutability = None;
                }
            }
        }
    }
    let rebinds: TokenStream = typed
        .iter()
        .filter_map(|a| {
            let pat = a.rebind.as_ref()?;
            let ident = &a.ident;
            Some(quote!(let #pat = #ident;))
        })
        .collect();
    let private = quote!(#krate::__private::stack);
    let bindings = item::bindings(&protected.func);

    // The instances.
    let mut handles = TokenStream::new();
    let mut layer_fields = TokenStream::new();
    for (kind, args) in layers {
        let cx = Context {
            krate: krate.clone(),
            args,
            protected: &protected,
            bindings: bindings.clone(),
        };
        let handle = Ident::new(&format!("__stack_{}", kind.attribute()), Span::mixed_site());
        handles.extend(match kind {
            Kind::CircuitBreaker => CircuitBreaker.instance(&cx, &handle)?,
            Kind::Retry => crate::retry::instance(&cx, &handle)?,
            Kind::TimeLimiter => crate::time_limiter::instance(&cx, &handle)?,
            Kind::RateLimiter => crate::rate_limiter::instance(&cx, &handle)?,
            Kind::Bulkhead => crate::bulkhead::instance(&cx, &handle)?,
        });
        let field = Ident::new(kind.attribute(), Span::call_site());
        layer_fields.extend(quote!(#field: ::core::option::Option::Some(#handle),));
    }
    for kind in Kind::ALL {
        if !has(kind) {
            let field = Ident::new(kind.attribute(), Span::call_site());
            layer_fields.extend(quote!(#field: ::core::option::Option::None,));
        }
    }

    // The fallbacks, each built before the body takes the arguments.
    let err = Ident::new("__layer_error", Span::mixed_site());
    let err_ty = match &protected.parts.err {
        Some(e) if !mentions_impl_trait(e) => quote!(#krate::StackError<#e>),
        _ => quote!(#krate::StackError<_>),
    };
    let copy = Ident::new("StackArgument", Span::mixed_site());
    let copy_message = match (repeat, any_fallback) {
        (true, true) => "`#[retry]` runs the fn again for every attempt, and a fallback runs with its own copy of every argument, but `{Self}` is not `Clone`",
        (true, false) => "`#[retry]` runs the fn again for every attempt, each with its own copy of every argument, but `{Self}` is not `Clone`",
        _ => "a fallback runs with its own copy of every argument (taken before the call), but `{Self}` is not `Clone`",
    };
    let copy_trait = if repeat || any_fallback {
        quote! {
            #[diagnostic::on_unimplemented(
                message = #copy_message,
                label = "`{Self}` must implement `Clone`",
                note = "derive or implement `Clone`, or pass it as `Arc<..>` or `&..`"
            )]
            trait #copy: Sized {
                fn __copy(&self) -> Self;
            }
            impl<T: ::core::clone::Clone> #copy for T {
                #[inline(always)]
                fn __copy(&self) -> Self {
                    ::core::clone::Clone::clone(self)
                }
            }
        }
    } else {
        TokenStream::new()
    };
    let mut fallback_stmts = TokenStream::new();
    let mut fallback_fields = TokenStream::new();
    for kind in Kind::ALL {
        let field = Ident::new(kind.attribute(), Span::call_site());
        let fb = layers
            .iter()
            .find(|(k, _)| *k == kind)
            .and_then(|(_, a)| a.fallback.as_ref());
        let Some(fb) = fb else {
            fallback_fields.extend(quote!(#field: #private::none(),));
            continue;
        };
        let error = ErrorParam {
            written: format!("StackError<{}>", protected.parts.err_text),
            full_path: "resilience4rs::StackError (a stacked fn's fallbacks all take it)",
        };
        let plan = fallback::plan(fb, &protected, &typed, &err, &error, &krate, Some(&copy))?;
        let var = format_ident!(
            "__stack_fallback_{}",
            kind.attribute(),
            span = Span::mixed_site()
        );
        let (items, save, copies, rest) = (plan.items, plan.save, plan.copies, plan.rest);
        fallback_stmts.extend(quote! {
            let #var = {
                #items
                #save
                move |#err: #err_ty| {
                    #copies
                    async move { #rest }
                }
            };
        });
        fallback_fields.extend(quote!(#field: ::core::option::Option::Some(#var),));
    }

    // The body.
    let body_future = match &protected.body {
        Body::Native => {
            let stmts = &protected.func.block.stmts;
            let fake_return = typed_return_edge(&protected);
            let mv = if repeat { quote!(move) } else { quote!() };
            quote! {
                async #mv {
                    #fake_return
                    #(#stmts)*
                }
            }
        }
        Body::AsyncTrait(inner) => quote!(#inner),
    };
    let (top_rebinds, body) = if repeat {
        let copies = typed.iter().map(|a| {
            let ident = &a.ident;
            let ty_span = a.ty.span();
            let call = quote_spanned!(ty_span=> #copy::__copy(&#ident));
            quote! {
                #[allow(unused_mut)]
                let mut #ident = #call;
            }
        });
        (
            TokenStream::new(),
            quote! {
                #private::Repeat({
                    move || {
                        #(#copies)*
                        #rebinds
                        #body_future
                    }
                })
            },
        )
    } else {
        (rebinds, quote!(#private::once(#body_future)))
    };

    // What reaches the top: the fn's own error, or the rejection of a layer no fallback
    // answers, which the fn's error type must carry.
    let err_at = error_span(protected.parts.err.as_ref(), &protected.output);
    let answered = |kind: Kind| {
        !has(kind)
            || layers
                .iter()
                .any(|(k, a)| *k == kind && a.fallback.is_some())
    };
    let mut arms = TokenStream::new();
    let mut unanswered = Vec::new();
    for rejection in REJECTIONS {
        let kind = Kind::ALL
            .into_iter()
            .find(|k| k.attribute() == rejection.attribute)
            .expect("a rejection's attribute");
        if answered(kind) {
            let (name, variant) = (
                kind.java(),
                Ident::new(rejection.variant, Span::call_site()),
            );
            arms.extend(quote! {
                ::core::result::Result::Err(#krate::StackError::#variant(_)) => #private::answered(#name),
            });
        } else {
            unanswered.push(rejection);
        }
    }
    io_error(protected.parts.err.as_ref(), err_at, &unanswered)?;
    let retry_answered = layers
        .iter()
        .any(|(k, a)| *k == Kind::Retry && a.fallback.is_some());
    arms.extend(if repeat && !retry_answered {
        let x = Ident::new("__rejection", Span::mixed_site());
        quote! {
            ::core::result::Result::Err(#krate::StackError::WaitInterval(#x)) =>
                #private::wait_interval_failed(#x),
        }
    } else {
        quote! {
            ::core::result::Result::Err(#krate::StackError::WaitInterval(_)) => #private::answered("@Retry"),
        }
    });
    arms.extend(rejections_arm(&krate, &unanswered, err_at));

    let output = &protected.output;
    let (value_fn, classify_value_fn) = ok_classification(&protected, &krate);
    let checked = if mentions_impl_trait(output) {
        quote_spanned!(output.span()=> #krate::__private::Checked::new())
    } else {
        quote_spanned!(output.span()=> <#output as #krate::__private::ProtectedOutput>::checked())
    };
    let result = Ident::new("__stack_result", Span::mixed_site());
    let typed_result = if mentions_impl_trait(output) {
        quote!(let #result = )
    } else {
        quote!(let #result: #output = )
    };
    let (stack, outcome, value, e) = (
        Ident::new("__stack", Span::mixed_site()),
        Ident::new("__stack_outcome", Span::mixed_site()),
        Ident::new("__stack_value", Span::mixed_site()),
        Ident::new("__stack_inner", Span::mixed_site()),
    );
    // A fn whose every layer names its own `registry = ...` never uses the global config, so
    // it must not load the global files to learn the nesting (a stray application.yml could
    // break it): the global order if one was set, else Spring Boot 3's default.
    // A fn with one layer has no nesting to read: its runtime entry runs that layer alone.
    let order = if layers.len() == 1 {
        quote!(#krate::StackOrder::DEFAULT)
    } else if layers.iter().all(|(_, a)| a.extra("registry").is_some()) {
        quote!(#private::order_if_set())
    } else {
        quote!(#private::order())
    };
    let entry = match layers {
        [(only, _)] => format_ident!("only_{}", only.attribute()),
        _ => format_ident!("call"),
    };
    let body = quote! {
        #uses
        #copy_trait
        #handles
        #fallback_stmts
        #top_rebinds
        let #stack = #private::Stack {
            order: #order,
            value: #value_fn,
            classify_value: #classify_value_fn,
            layers: #private::Layers { #layer_fields },
            body: #body,
            fallbacks: #private::Fallbacks { #fallback_fields },
        };
        let #outcome = #private::#entry(#checked, &#stack).await;
        #typed_result match #outcome {
            ::core::result::Result::Ok(#value) => ::core::result::Result::Ok(#value),
            ::core::result::Result::Err(#krate::StackError::Inner(#e)) => ::core::result::Result::Err(#e),
            #arms
        };
        #result
    };
    Ok(protected.with_body(body))
}

/// What the layers' result predicates see of an `Ok` value. A `'static` `Ok` type is seen as
/// itself (`recordResult`, `retryOnResult` by type). One that borrows (`&str`, `Cow<'a, str>`,
/// a generic `T` without a `'static` bound) cannot be the type a predicate was registered for:
/// as for a lone `#[circuit_breaker]`, its values are successes and predicates see a value of
/// a type of the expansion's own, which none names.
fn ok_classification(protected: &Protected, krate: &TokenStream) -> (TokenStream, TokenStream) {
    let params = non_static_params(&protected.func.sig.generics);
    let ok_static = match &protected.parts.ok {
        Some(ok) => is_static(ok, &params),
        None => is_static(&protected.output, &params),
    };
    let private = quote!(#krate::__private::stack);
    if ok_static {
        return (quote!(#private::as_any), quote!(#private::classify_value));
    }
    let unnamed = Ident::new("StackUnnamedValue", Span::mixed_site());
    (
        quote!({
            struct #unnamed;
            |_| -> &dyn ::core::any::Any { &#unnamed }
        }),
        quote!(|_, _| #krate::Outcome::Success),
    )
}

#[cfg(test)]
mod tests;
