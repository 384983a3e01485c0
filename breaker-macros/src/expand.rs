//! Code generation shared by every attribute: the fn keeps its signature; its body is
//! rewritten in place to run through the layer, with the fallback (if any) around it.
//!
//! What differs between attributes (how the instance is found, how a future runs through
//! it, what a failure without a fallback becomes) is a [`Layer`]; everything else is here.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

use crate::args::{Args, Spec};
use crate::fallback::{self, ErrorParam};
use crate::item::{self, mentions_impl_trait, typed_args, Body, Protected};

/// What an annotated fn needs to know while its attribute's layer writes its part.
pub struct Context<'a> {
    /// The path to the facade crate.
    pub krate: TokenStream,
    /// The attribute's arguments.
    pub args: &'a Args,
    /// The annotated fn.
    pub protected: &'a Protected,
    /// The names the fn's arguments bind, `self` included.
    pub bindings: Vec<Ident>,
}

impl Context<'_> {
    /// The path to the facade, located at `span` (so an error in the expression it starts
    /// lands there), unless the user wrote it with `crate = ...` (then errors about it belong
    /// on what they wrote).
    pub fn krate_at(&self, span: Span) -> TokenStream {
        if self.args.krate.is_some() {
            return self.krate.clone();
        }
        self.krate
            .clone()
            .into_iter()
            .map(|mut t| {
                t.set_span(t.span().located_at(span));
                t
            })
            .collect()
    }
}

/// One attribute's layer: the parts of the expansion that are its own.
pub trait Layer {
    /// The attribute's arguments and names.
    fn spec(&self) -> &'static Spec;

    /// Statements that bind `handle` to a reference to the layer's instance.
    fn instance(&self, cx: &Context<'_>, handle: &Ident) -> syn::Result<TokenStream>;

    /// A future that runs `future` (whose output is the fn's return type `R`) through
    /// `handle`, resolving to `R::Outcome<LayerError<R::Err>>`.
    fn call(&self, cx: &Context<'_>, handle: &Ident, future: TokenStream) -> TokenStream;

    /// The fallback's error parameter, given the written error type: `CallError<PayError>`.
    fn fallback_error(&self, err_text: &str) -> String;

    /// The error parameter's full path, for notes: `resilience4rs::CallError`.
    fn fallback_error_path(&self) -> &'static str;

    /// An expression turning `outcome` into the fn's return type when there is no fallback.
    fn without_fallback(&self, cx: &Context<'_>, outcome: &Ident) -> TokenStream;
}

/// The attribute's entry point: parses, analyses and expands, or reports the one error
/// next to the unchanged item.
///
/// `file` is the source file the attribute is in, when known, for [`crate::hints`].
pub fn attribute(
    layer: &impl Layer,
    attr: TokenStream,
    item: TokenStream,
    file: Option<&std::path::Path>,
) -> TokenStream {
    let spec = layer.spec();
    let result = Args::parse(attr, Span::call_site(), spec).and_then(|args| {
        let protected = item::analyse(item.clone(), spec.attribute)?;
        if let Some(fb) = &args.fallback {
            fallback::check_namespace(fb, &protected, file)?;
        }
        let krate = crate::krate::facade(args.krate.as_ref())?;
        expand(layer, &args, protected, krate)
    });
    match result {
        Ok(tokens) => tokens,
        Err(error) => crate::diag::with_item(error, item),
    }
}

fn expand(
    layer: &impl Layer,
    args: &Args,
    mut protected: Protected,
    krate: TokenStream,
) -> syn::Result<TokenStream> {
    let handle = Ident::new("__layer_instance", Span::mixed_site());
    let outcome = Ident::new("__layer_outcome", Span::mixed_site());
    let err = Ident::new("__layer_error", Span::mixed_site());

    // Only a fallback needs the arguments after the call; without one, leave patterns alone.
    let typed = match &args.fallback {
        Some(_) => typed_args(&mut protected.func),
        None => Vec::new(),
    };
    let rebinds: TokenStream = typed
        .iter()
        .filter_map(|a| {
            let pat = a.rebind.as_ref()?;
            let ident = &a.ident;
            Some(quote!(let #pat = #ident;))
        })
        .collect();

    let cx = Context {
        bindings: item::bindings(&protected.func),
        krate,
        args,
        protected: &protected,
    };
    let instance = layer.instance(&cx, &handle)?;

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
    let call = layer.call(&cx, &handle, future);

    let (items, save, finish) = match &args.fallback {
        Some(fb) => {
            let error = ErrorParam {
                written: layer.fallback_error(&protected.parts.err_text),
                full_path: layer.fallback_error_path(),
            };
            let plan = fallback::plan(fb, &protected, &typed, &err, &error, &cx.krate, None)?;
            let call = plan.call;
            let finish = quote! {
                match #outcome {
                    ::core::result::Result::Ok(value) => ::core::result::Result::Ok(value),
                    ::core::result::Result::Err(#err) => #call,
                }
            };
            (plan.items, plan.save, finish)
        }
        None => (
            TokenStream::new(),
            TokenStream::new(),
            layer.without_fallback(&cx, &outcome),
        ),
    };

    let body = quote! {
        #items
        #instance
        #save
        #rebinds
        let #outcome = #call.await;
        #finish
    };

    Ok(protected.with_body(body))
}

/// A never-taken `return` of the declared type, so `?` and `return` inside the body are typed
/// against the fn's return type rather than left to inference.
pub fn typed_return_edge(protected: &Protected) -> TokenStream {
    let output = &protected.output;
    if mentions_impl_trait(output) {
        return TokenStream::new();
    }
    let typed = Ident::new("__layer_typed_return", Span::mixed_site());
    quote_spanned! {output.span()=>
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
