//! What an attribute was put on: classifying the item and analysing the fn's signature.
//! Shared by every attribute.
//!
//! Anything that is not an `async fn` with a body returning a `Result` is rejected here, with
//! the error on the token that is wrong (`const`, `fn`, `struct`, the `;` of a bodiless
//! declaration, the return type...).

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprAsync, FnArg, ForeignItem, GenericArgument, Item, ItemFn, Pat,
    PathArguments, ReturnType, Stmt, TraitItemFn, Type, TypeParamBound,
};

/// How the protected body reaches us.
pub enum Body {
    /// A plain `async fn`: its block is rewritten in place.
    Native,
    /// A method already expanded by `#[async_trait]` (which runs first, being on the impl):
    /// `fn ..(..) -> Pin<Box<dyn Future<Output = R> + ..>> { Box::pin(async move { .. }) }`.
    /// The `async move` block is the protected future as it stands.
    AsyncTrait(ExprAsync),
}

/// The kind of `self` the fn takes, which decides how a method fallback gets its receiver.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Receiver {
    /// `&self` (still usable after the protected call).
    Shared,
    /// `&mut self` (usable again after the protected call, unless the future owns it).
    Unique,
    /// `self`, `self: Arc<Self>`, `self: Box<Self>`...: cloned for the fallback.
    Owned(Owner),
}

/// What holds an owned receiver.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Owner {
    /// `self`.
    Value,
    /// `self: Box<Self>`.
    Box,
    /// `self: Rc<Self>`.
    Rc,
    /// `self: Arc<Self>`.
    Arc,
    /// `self: Pin<..>` or another smart pointer: passed on as it is.
    Other,
}

/// The annotated fn, analysed.
pub struct Protected {
    /// The fn as written (or as `#[async_trait]` left it), without its inner attributes.
    pub func: ItemFn,
    /// The inner attributes (`#![allow(..)]`) of its body, kept for the top of the new body.
    pub inner_attrs: Vec<Attribute>,
    /// Where the protected future comes from.
    pub body: Body,
    /// The receiver, if the fn is a method.
    pub receiver: Option<Receiver>,
    /// The `Result<T, E>` the fn's future resolves to.
    pub output: Type,
    /// `T` and `E`, as far as they can be seen in `output`.
    pub parts: ResultParts,
}

impl Protected {
    /// The fn again, its signature and outer attributes as written, with `body` (the
    /// protected call) as its block: boxed for a method `#[async_trait]` expanded, the
    /// inner attributes at the top. The new block keeps the original braces' span, so
    /// rustc's suggestions about the body (e.g. `async_fn_in_trait`'s desugaring) quote the
    /// user's code, not the attribute.
    pub fn with_body(&self, body: TokenStream) -> TokenStream {
        let func = &self.func;
        let attrs = &func.attrs;
        let vis = &func.vis;
        let sig = &func.sig;
        let inner_attrs = &self.inner_attrs;
        let body = match &self.body {
            Body::Native => body,
            Body::AsyncTrait(_) => quote::quote!(::std::boxed::Box::pin(async move { #body })),
        };
        let mut block = proc_macro2::Group::new(
            proc_macro2::Delimiter::Brace,
            quote::quote! {
                #(#inner_attrs)*
                #body
            },
        );
        block.set_span(func.block.brace_token.span.join());
        quote::quote! {
            #(#attrs)*
            #vis #sig #block
        }
    }
}

/// What the return type shows of `T` and `E`.
pub struct ResultParts {
    /// `T`, when visible (`Result<T, E>`, `io::Result<T>`).
    pub ok: Option<Type>,
    /// `E`, when visible (`Result<T, E>`; `io::Error` for `io::Result<T>`).
    pub err: Option<Type>,
    /// `E` as the user should write it in a fallback signature, for messages.
    pub err_text: String,
}

/// Parses the annotated item, or returns the error to show next to it.
pub fn analyse(item: TokenStream, attribute: &str) -> syn::Result<Protected> {
    let mut func = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(func) => func,
        Err(fn_err) => return Err(not_a_fn(item, fn_err, attribute)),
    };
    let sig = &func.sig;
    if let Some(constness) = &sig.constness {
        return Err(syn::Error::new(
            constness.span,
            format!(
                "`#[{attribute}]` cannot go on a `const fn`: remove `const` and write `async fn`"
            ),
        ));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(syn::Error::new_spanned(
            variadic,
            format!("`#[{attribute}]` does not support variadic fns"),
        ));
    }
    let (body, output) = if sig.asyncness.is_some() {
        let output = match &sig.output {
            ReturnType::Type(_, ty) => (**ty).clone(),
            ReturnType::Default => {
                return Err(syn::Error::new(
                    sig.paren_token.span.close(),
                    format!(
                        "`{}` must return a `Result`: write `-> Result<T, YourError>` after the \
                         arguments (`#[{attribute}]` records `Err` as a failure)",
                        sig.ident
                    ),
                ))
            }
        };
        (Body::Native, output)
    } else if let Some((block, output)) = async_trait_shape(&func) {
        (Body::AsyncTrait(block), output)
    } else if let Some(runtime) = runtime_attribute(&func) {
        return Err(syn::Error::new(
            func.sig.fn_token.span,
            format!(
                "`{runtime}` above `#[{attribute}]` has already turned `async fn {name}` into a \
                 blocking fn: attributes run from the top, so put `#[{attribute}(..)]` above \
                 `{runtime}`",
                name = func.sig.ident
            ),
        ));
    } else {
        return Err(syn::Error::new(
            sig.fn_token.span,
            format!(
                "`#[{attribute}]` protects async code: write `async fn {}(..)`",
                sig.ident
            ),
        ));
    };
    check_result_like(&output, attribute)?;
    let parts = result_parts(&output);
    let receiver = sig.receiver().map(|r| {
        if r.colon_token.is_none() {
            match (&r.reference, &r.mutability) {
                (Some(_), Some(_)) => Receiver::Unique,
                (Some(_), None) => Receiver::Shared,
                (None, _) => Receiver::Owned(Owner::Value),
            }
        } else {
            match &*r.ty {
                Type::Reference(re) if re.mutability.is_some() => Receiver::Unique,
                Type::Reference(_) => Receiver::Shared,
                Type::Path(p) if p.path.is_ident("Self") => Receiver::Owned(Owner::Value),
                Type::Path(p) => Receiver::Owned(
                    match p
                        .path
                        .segments
                        .last()
                        .map(|s| s.ident.to_string())
                        .as_deref()
                    {
                        Some("Box") => Owner::Box,
                        Some("Rc") => Owner::Rc,
                        Some("Arc") => Owner::Arc,
                        _ => Owner::Other,
                    },
                ),
                _ => Receiver::Owned(Owner::Other),
            }
        }
    });
    let (inner_attrs, outer): (Vec<Attribute>, Vec<Attribute>) = func
        .attrs
        .drain(..)
        .partition(|a| matches!(a.style, syn::AttrStyle::Inner(_)));
    func.attrs = outer;
    Ok(Protected {
        func,
        inner_attrs,
        body,
        receiver,
        output,
        parts,
    })
}

/// `#[tokio::test]` / `#[tokio::main]` (or another runtime's attribute) expanded above us:
/// a non-async fn whose body blocks on a runtime. Returns the attribute's likely name.
fn runtime_attribute(func: &ItemFn) -> Option<&'static str> {
    let body = quote::ToTokens::to_token_stream(&func.block);
    if !mentions_ident(&body, "block_on") {
        return None;
    }
    let is_test = func
        .attrs
        .iter()
        .any(|a| a.path().segments.last().is_some_and(|s| s.ident == "test"));
    Some(if is_test {
        "#[tokio::test]"
    } else {
        "#[tokio::main]"
    })
}

/// Whether `tokens` contain the identifier `name`, at any depth.
pub fn mentions_ident(tokens: &TokenStream, name: &str) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => mentions_ident(&g.stream(), name),
        _ => false,
    })
}

/// The error for an item that does not parse as a fn with a body.
fn not_a_fn(item: TokenStream, fn_err: syn::Error, attribute: &str) -> syn::Error {
    if let Ok(decl) = syn::parse2::<TraitItemFn>(item.clone()) {
        if decl.default.is_none() {
            let span = decl
                .semi_token
                .map(|s| s.span)
                .unwrap_or_else(|| decl.sig.ident.span());
            let name = &decl.sig.ident;
            let message = if decl.sig.asyncness.is_some() {
                format!(
                    "`#[{attribute}]` needs a fn body: put it on `async fn {name}` in each \
                     `impl` of the trait, not on the trait's declaration"
                )
            } else {
                format!(
                    "`#[{attribute}]` needs an `async fn` with a body, and `fn {name}` has none: \
                     a foreign fn in an `extern` block (or a trait's declaration) cannot be \
                     protected; call it from an `async fn` that returns a `Result` and put \
                     `#[{attribute}]` there"
                )
            };
            return syn::Error::new(span, message);
        }
    }
    if let Ok(foreign) = syn::parse2::<ForeignItem>(item.clone()) {
        let (span, what) = match &foreign {
            ForeignItem::Fn(f) => (f.semi_token.span, "a foreign fn"),
            ForeignItem::Static(s) => (s.static_token.span, "a foreign static"),
            ForeignItem::Type(t) => (t.type_token.span, "a foreign type"),
            _ => (foreign.span(), "this item"),
        };
        if !matches!(foreign, ForeignItem::Verbatim(_) | ForeignItem::Macro(_)) {
            return syn::Error::new(
                span,
                format!(
                    "`#[{attribute}]` cannot go on {what} in an `extern` block: call it from an \
                     `async fn` that returns a `Result` and put `#[{attribute}]` there"
                ),
            );
        }
    }
    let (span, what) = match syn::parse2::<Item>(item) {
        Ok(Item::Struct(i)) => (i.struct_token.span, "a struct"),
        Ok(Item::Enum(i)) => (i.enum_token.span, "an enum"),
        Ok(Item::Union(i)) => (i.union_token.span, "a union"),
        Ok(Item::Trait(i)) => (i.trait_token.span, "a trait"),
        Ok(Item::Impl(i)) => (i.impl_token.span, "an impl block"),
        Ok(Item::Mod(i)) => (i.mod_token.span, "a module"),
        Ok(Item::Const(i)) => (i.const_token.span, "a const"),
        Ok(Item::Static(i)) => (i.static_token.span, "a static"),
        Ok(Item::Type(i)) => (i.type_token.span, "a type alias"),
        Ok(Item::Use(i)) => (i.use_token.span, "a use declaration"),
        Ok(Item::ForeignMod(i)) => (i.abi.extern_token.span, "an `extern` block"),
        Ok(other) => (other.span(), "this item"),
        Err(_) => return fn_err,
    };
    syn::Error::new(
        span,
        format!(
            "`#[{attribute}]` goes on an `async fn` or async method, not on {what}: \
             annotate each fn to protect, e.g. \
             `#[{attribute}(name = \"backendA\")] async fn call(&self) -> Result<T, E>`"
        ),
    )
}

/// Recognises what `#[async_trait]` makes of an `async fn`.
fn async_trait_shape(func: &ItemFn) -> Option<(ExprAsync, Type)> {
    let ReturnType::Type(_, ty) = &func.sig.output else {
        return None;
    };
    let pinned = single_generic(ty, "Pin")?;
    let boxed = single_generic(pinned, "Box")?;
    let Type::TraitObject(obj) = boxed else {
        return None;
    };
    let output = obj.bounds.iter().find_map(|b| {
        let TypeParamBound::Trait(t) = b else {
            return None;
        };
        let seg = t.path.segments.last()?;
        if seg.ident != "Future" {
            return None;
        }
        let PathArguments::AngleBracketed(args) = &seg.arguments else {
            return None;
        };
        args.args.iter().find_map(|a| match a {
            GenericArgument::AssocType(at) if at.ident == "Output" => Some(at.ty.clone()),
            _ => None,
        })
    })?;
    let [Stmt::Expr(Expr::Call(call), None)] = func.block.stmts.as_slice() else {
        return None;
    };
    let Expr::Path(callee) = &*call.func else {
        return None;
    };
    if callee.path.segments.last()?.ident != "pin" || call.args.len() != 1 {
        return None;
    }
    match call.args.first()? {
        Expr::Async(block) if block.capture.is_some() => Some((block.clone(), output)),
        _ => None,
    }
}

/// `Name<T>` (by last path segment) -> `T`.
fn single_generic<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(p) = ty else { return None };
    let seg = p.path.segments.last()?;
    if seg.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &seg.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

/// Types that are visibly not a `Result`, whatever is in scope.
const NOT_RESULT: &[&str] = &[
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32",
    "f64", "bool", "char", "str", "String", "Option", "Vec", "Box", "Poll",
];

/// Rejects return types that can never be a `Result`; paths that might be (aliases such as
/// `io::Result<T>`) are left to the type system.
fn check_result_like(output: &Type, attribute: &str) -> syn::Result<()> {
    let bad = match output {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| NOT_RESULT.contains(&s.ident.to_string().as_str())),
        Type::Path(_) | Type::Macro(_) | Type::Verbatim(_) => false,
        Type::Paren(p) => return check_result_like(&p.elem, attribute),
        Type::Group(g) => return check_result_like(&g.elem, attribute),
        _ => true,
    };
    if bad {
        return Err(syn::Error::new_spanned(
            output,
            format!(
                "the protected fn must return a `Result`: write `-> Result<T, YourError>` \
                 (`#[{attribute}]` records `Err` as a failure and `Ok` as a success)"
            ),
        ));
    }
    Ok(())
}

/// `T` and `E` as far as `output` shows them.
fn result_parts(output: &Type) -> ResultParts {
    let unknown = ResultParts {
        ok: None,
        err: None,
        err_text: "E".to_string(),
    };
    let Type::Path(p) = strip(output) else {
        return unknown;
    };
    let Some(seg) = p.path.segments.last() else {
        return unknown;
    };
    let types: Vec<&Type> = match &seg.arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let text = |t: &Type| crate::pretty::tokens(quote::ToTokens::to_token_stream(t));
    let in_io =
        p.path.segments.len() >= 2 && p.path.segments[p.path.segments.len() - 2].ident == "io";
    match (seg.ident.to_string().as_str(), types.as_slice()) {
        ("Result", [ok, err]) => ResultParts {
            ok: Some((*ok).clone()),
            err: Some((*err).clone()),
            err_text: text(err),
        },
        ("Result", [ok]) if in_io => ResultParts {
            ok: Some((*ok).clone()),
            err: Some(syn::parse_quote_spanned!(seg.ident.span()=> ::std::io::Error)),
            err_text: "std::io::Error".to_string(),
        },
        ("Result", [ok]) => ResultParts {
            ok: Some((*ok).clone()),
            err: None,
            err_text: format!("<the error type of `{}`>", text(output)),
        },
        _ => ResultParts {
            err_text: format!("<the error type of `{}`>", text(output)),
            ..unknown
        },
    }
}

fn strip(ty: &Type) -> &Type {
    match ty {
        Type::Paren(p) => strip(&p.elem),
        Type::Group(g) => strip(&g.elem),
        other => other,
    }
}

/// Whether a type mentions `impl Trait` (which cannot be named in a `let` or a turbofish),
/// at any depth.
pub fn mentions_impl_trait(ty: &Type) -> bool {
    mentions_ident(&quote::ToTokens::to_token_stream(ty), "impl")
}

/// A typed argument of the fn, as the fallback will receive it.
pub struct Arg {
    /// The variable holding the argument's value (the original name, or a generated one
    /// when the argument was a pattern).
    pub ident: syn::Ident,
    /// The argument's type, for spanning "needs Clone" errors.
    pub ty: Type,
    /// `let <pattern> = <ident>;` to restore the user's pattern bindings, if renamed.
    pub rebind: Option<Pat>,
    /// The argument as a fallback signature should declare it: `amount: u64`.
    pub declared: String,
}

/// Collects the typed arguments; pattern arguments are renamed (in `func`) so that their whole
/// value can be handed to the fallback.
pub fn typed_args(func: &mut ItemFn) -> Vec<Arg> {
    let mut out = Vec::new();
    for (index, input) in func.sig.inputs.iter_mut().enumerate() {
        let FnArg::Typed(pat_ty) = input else {
            continue;
        };
        let ty = (*pat_ty.ty).clone();
        let ty_text = crate::pretty::tokens(quote::ToTokens::to_token_stream(&ty));
        match &*pat_ty.pat {
            Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => out.push(Arg {
                ident: pi.ident.clone(),
                declared: format!("{}: {ty_text}", pi.ident),
                ty,
                rebind: None,
            }),
            pattern => {
                let declared = match pattern {
                    Pat::Wild(_) => format!("_: {ty_text}"),
                    other => format!(
                        "{}: {ty_text}",
                        crate::pretty::tokens(quote::ToTokens::to_token_stream(other))
                    ),
                };
                let ident = syn::Ident::new(&format!("__breaker_arg{index}"), Span::mixed_site());
                let original = std::mem::replace(
                    &mut *pat_ty.pat,
                    Pat::Ident(syn::PatIdent {
                        attrs: Vec::new(),
                        by_ref: None,
                        mutability: None,
                        ident: ident.clone(),
                        subpat: None,
                    }),
                );
                out.push(Arg {
                    ident,
                    ty,
                    rebind: Some(original),
                    declared,
                });
            }
        }
    }
    out
}

/// The names the fn's arguments bind (`self` included), for telling an expression that
/// depends on them from one that does not.
pub fn bindings(func: &ItemFn) -> Vec<syn::Ident> {
    let mut names = Vec::new();
    for input in &func.sig.inputs {
        match input {
            FnArg::Receiver(r) => names.push(syn::Ident::new("self", r.self_token.span)),
            FnArg::Typed(t) => pattern_bindings(&t.pat, &mut names),
        }
    }
    names
}

fn pattern_bindings(pat: &Pat, names: &mut Vec<syn::Ident>) {
    match pat {
        Pat::Ident(p) => {
            names.push(p.ident.clone());
            if let Some((_, sub)) = &p.subpat {
                pattern_bindings(sub, names);
            }
        }
        Pat::Tuple(t) => t.elems.iter().for_each(|p| pattern_bindings(p, names)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|p| pattern_bindings(p, names)),
        Pat::Struct(s) => s
            .fields
            .iter()
            .for_each(|f| pattern_bindings(&f.pat, names)),
        Pat::Slice(s) => s.elems.iter().for_each(|p| pattern_bindings(p, names)),
        Pat::Reference(r) => pattern_bindings(&r.pat, names),
        Pat::Type(t) => pattern_bindings(&t.pat, names),
        Pat::Paren(p) => pattern_bindings(&p.pat, names),
        Pat::Or(o) => o.cases.iter().for_each(|p| pattern_bindings(p, names)),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
