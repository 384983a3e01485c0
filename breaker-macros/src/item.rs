//! What the attribute was put on: classifying the item and analysing the fn's signature.
//!
//! Anything that is not an `async fn` with a body returning a `Result` is rejected here, with
//! the error on the token that is wrong (`const`, `fn`, `struct`, the `;` of a bodiless trait
//! method, the return type...).

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{
    Expr, ExprAsync, FnArg, GenericArgument, Item, ItemFn, Pat, PathArguments, ReturnType, Stmt,
    TraitItemFn, Type, TypeParamBound,
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
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Receiver {
    /// `&self` (still usable after the protected call).
    Shared,
    /// `&mut self` (usable again after the protected call, unless the future owns it).
    Unique,
    /// `self`, `self: Arc<Self>`, `self: Box<Self>`...: cloned for the fallback.
    Owned,
}

/// The annotated fn, analysed.
pub struct Protected {
    /// The fn as written (or as `#[async_trait]` left it).
    pub func: ItemFn,
    /// Where the protected future comes from.
    pub body: Body,
    /// The receiver, if the fn is a method.
    pub receiver: Option<Receiver>,
    /// The `Result<T, E>` the fn's future resolves to.
    pub output: Type,
    /// The error type `E` when `output` is visibly `Result<T, E>`: errors about it point here.
    pub error_ty: Option<Type>,
}

/// Parses the annotated item, or returns the error to show next to it.
pub fn analyse(item: TokenStream) -> syn::Result<Protected> {
    let func = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(func) => func,
        Err(fn_err) => return Err(not_a_fn(item, fn_err)),
    };
    let sig = &func.sig;
    if let Some(constness) = &sig.constness {
        return Err(syn::Error::new(
            constness.span,
            "`#[circuit_breaker]` cannot go on a `const fn`: remove `const` and write `async fn`",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(syn::Error::new_spanned(
            variadic,
            "`#[circuit_breaker]` does not support variadic fns",
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
                         arguments (the breaker records `Err` as a failure)",
                        sig.ident
                    ),
                ))
            }
        };
        (Body::Native, output)
    } else if let Some((block, output)) = async_trait_shape(&func) {
        (Body::AsyncTrait(block), output)
    } else {
        return Err(syn::Error::new(
            sig.fn_token.span,
            format!(
                "`#[circuit_breaker]` protects async code: write `async fn {}(..)`",
                sig.ident
            ),
        ));
    };
    check_result_like(&output)?;
    let error_ty = result_error_type(&output);
    let receiver = sig.receiver().map(|r| {
        if r.colon_token.is_none() {
            match (&r.reference, &r.mutability) {
                (Some(_), Some(_)) => Receiver::Unique,
                (Some(_), None) => Receiver::Shared,
                (None, _) => Receiver::Owned,
            }
        } else {
            match &*r.ty {
                Type::Reference(re) if re.mutability.is_some() => Receiver::Unique,
                Type::Reference(_) => Receiver::Shared,
                _ => Receiver::Owned,
            }
        }
    });
    Ok(Protected {
        func,
        body,
        receiver,
        output,
        error_ty,
    })
}

/// The error for an item that does not parse as a fn with a body.
fn not_a_fn(item: TokenStream, fn_err: syn::Error) -> syn::Error {
    if let Ok(decl) = syn::parse2::<TraitItemFn>(item.clone()) {
        if decl.default.is_none() {
            let span = decl
                .semi_token
                .map(|s| s.span)
                .unwrap_or_else(|| decl.sig.ident.span());
            return syn::Error::new(
                span,
                format!(
                    "`#[circuit_breaker]` needs a fn body: put it on `async fn {}` in each \
                     `impl` of the trait, not on the trait's declaration",
                    decl.sig.ident
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
        Ok(other) => (other.span(), "this item"),
        Err(_) => return fn_err,
    };
    syn::Error::new(
        span,
        format!(
            "`#[circuit_breaker]` goes on an `async fn` or async method, not on {what}: \
             annotate each method to protect, e.g. \
             `#[circuit_breaker(name = \"backendA\")] async fn call(&self) -> Result<T, E>`"
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
fn check_result_like(output: &Type) -> syn::Result<()> {
    let bad = match output {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| NOT_RESULT.contains(&s.ident.to_string().as_str())),
        Type::Path(_) | Type::Macro(_) | Type::Verbatim(_) => false,
        Type::Paren(p) => return check_result_like(&p.elem),
        Type::Group(g) => return check_result_like(&g.elem),
        _ => true,
    };
    if bad {
        return Err(syn::Error::new_spanned(
            output,
            "the protected fn must return a `Result`: write `-> Result<T, YourError>` (the \
             breaker records `Err` as a failure and `Ok` as a success)",
        ));
    }
    Ok(())
}

/// `E` in a visible `Result<T, E>`.
fn result_error_type(output: &Type) -> Option<Type> {
    let Type::Path(p) = output else { return None };
    let seg = p.path.segments.last()?;
    if seg.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &seg.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    let (_ok, err) = (types.next()?, types.next()?);
    Some(err.clone())
}

/// Whether a type mentions `impl Trait` (which cannot be named in a `let`).
pub fn mentions_impl_trait(ty: &Type) -> bool {
    use quote::ToTokens;
    ty.to_token_stream()
        .into_iter()
        .any(|t| matches!(&t, proc_macro2::TokenTree::Ident(i) if i == "impl"))
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
        match &*pat_ty.pat {
            Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => out.push(Arg {
                ident: pi.ident.clone(),
                ty,
                rebind: None,
            }),
            _ => {
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
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn err(item: TokenStream) -> String {
        match analyse(item) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn accepts_async_fn_and_finds_error_type() {
        let p = analyse(quote!(
            async fn f(&self) -> Result<u32, MyError> {
                Ok(1)
            }
        ))
        .unwrap();
        assert!(matches!(p.body, Body::Native));
        assert!(p.receiver == Some(Receiver::Shared));
        let e = p.error_ty.unwrap();
        assert_eq!(quote!(#e).to_string(), quote!(MyError).to_string());
    }

    #[test]
    fn receivers() {
        let kinds = [
            (
                quote!(
                    async fn f(self) -> Result<(), E> {
                        Ok(())
                    }
                ),
                Receiver::Owned,
            ),
            (
                quote!(
                    async fn f(&mut self) -> Result<(), E> {
                        Ok(())
                    }
                ),
                Receiver::Unique,
            ),
            (
                quote!(
                    async fn f(self: Arc<Self>) -> Result<(), E> {
                        Ok(())
                    }
                ),
                Receiver::Owned,
            ),
            (
                quote!(
                    async fn f(self: &Self) -> Result<(), E> {
                        Ok(())
                    }
                ),
                Receiver::Shared,
            ),
        ];
        for (item, kind) in kinds {
            assert!(analyse(item).unwrap().receiver == Some(kind));
        }
    }

    #[test]
    fn rejects_misuse() {
        assert!(err(quote!(
            fn f() -> Result<(), E> {
                Ok(())
            }
        ))
        .contains("write `async fn f(..)`"));
        assert!(err(quote!(
            const fn f() {}
        ))
        .contains("`const fn`"));
        assert!(err(quote!(
            struct S;
        ))
        .contains("not on a struct"));
        assert!(err(quote!(
            async fn f(&self) -> Result<(), E>;
        ))
        .contains("needs a fn body"));
        assert!(err(quote!(
            async fn f() {}
        ))
        .contains("must return a `Result`"));
        assert!(err(quote!(
            async fn f() -> u32 {
                1
            }
        ))
        .contains("must return a `Result`"));
        assert!(err(quote!(
            async fn f() -> (u32, u32) {
                (1, 1)
            }
        ))
        .contains("`Result`"));
    }

    #[test]
    fn aliases_are_left_to_the_type_system() {
        assert!(analyse(quote!(
            async fn f() -> io::Result<()> {
                Ok(())
            }
        ))
        .is_ok());
        assert!(analyse(quote!(
            async fn f() -> MyResult {
                Ok(())
            }
        ))
        .is_ok());
    }

    #[test]
    fn recognises_async_trait_output() {
        let item = quote! {
            fn f<'life0, 'async_trait>(&'life0 self) -> ::core::pin::Pin<Box<
                dyn ::core::future::Future<Output = Result<u32, E>> + ::core::marker::Send + 'async_trait
            >> where 'life0: 'async_trait, Self: 'async_trait {
                Box::pin(async move { Ok(1) })
            }
        };
        let p = analyse(item).unwrap();
        assert!(matches!(p.body, Body::AsyncTrait(_)));
        let out = p.output;
        assert_eq!(quote!(#out).to_string(), quote!(Result<u32, E>).to_string());
    }

    #[test]
    fn pattern_args_are_renamed() {
        let mut f: ItemFn = syn::parse2(quote!(
            async fn f((a, b): (u32, u32), c: u8, mut d: u8) -> Result<(), E> {
                Ok(())
            }
        ))
        .unwrap();
        let args = typed_args(&mut f);
        assert_eq!(args.len(), 3);
        assert!(args[0].rebind.is_some());
        assert_eq!(args[0].ident, "__breaker_arg0");
        assert!(args[1].rebind.is_none() && args[2].rebind.is_none());
    }

    #[test]
    fn impl_trait_detection() {
        let t: Type = syn::parse2(quote!(Result<impl Display, E>)).unwrap();
        assert!(mentions_impl_trait(&t));
        let t: Type = syn::parse2(quote!(Result<u32, E>)).unwrap();
        assert!(!mentions_impl_trait(&t));
    }
}
