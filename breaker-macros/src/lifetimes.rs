//! Telling `'static` types and expressions from those that borrow, by their syntax.
//!
//! A layer classifies a call's `Ok` value (`recordResult`) and error (`recordExceptions`,
//! `ignoreExceptions`) by type, which needs `'static` types. A type that visibly borrows
//! (`&str`, `Cow<'a, str>`, `impl Trait`, a generic `T` without a `'static` bound) takes the
//! call path that needs no `'static`; such a type can never be the type a predicate or an
//! exception name was registered for, so nothing is lost. A type that hides a borrow (an
//! alias, a generic parameter of the surrounding impl) is taken as `'static`, and the
//! compiler asks for the bound.
//!
//! An argument expression (`registry = ...`) is "static" when it is a path that names no
//! argument, `self`, `Self` or generic parameter: it can then be evaluated once per call
//! site.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::{Expr, GenericParam, Generics, Type, TypeParamBound, WherePredicate};

/// The fn's generic type parameters that are not bounded by `'static`.
pub fn non_static_params(generics: &Generics) -> Vec<syn::Ident> {
    fn bounded<'b>(mut bounds: impl Iterator<Item = &'b TypeParamBound>) -> bool {
        bounds.any(|b| match b {
            TypeParamBound::Lifetime(l) => l.ident == "static",
            TypeParamBound::Trait(t) => t.path.segments.last().is_some_and(|s| s.ident == "Any"),
            _ => false,
        })
    }
    generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => {
                let in_where = generics.where_clause.as_ref().is_some_and(|w| {
                    w.predicates.iter().any(|pred| match pred {
                        WherePredicate::Type(pt) => {
                            matches!(&pt.bounded_ty, Type::Path(p) if p.path.is_ident(&t.ident))
                                && bounded(pt.bounds.iter())
                        }
                        _ => false,
                    })
                });
                if bounded(t.bounds.iter()) || in_where {
                    None
                } else {
                    Some(t.ident.clone())
                }
            }
            _ => None,
        })
        .collect()
}

/// Whether `ty` is `'static` as far as its syntax shows; `params` are the fn's type
/// parameters without a `'static` bound.
pub fn is_static(ty: &Type, params: &[syn::Ident]) -> bool {
    match ty {
        Type::Reference(r) => {
            r.lifetime.as_ref().is_some_and(|l| l.ident == "static") && is_static(&r.elem, params)
        }
        Type::ImplTrait(_) | Type::Infer(_) => false,
        Type::BareFn(f) => !has_non_static_lifetime(&f.to_token_stream()),
        Type::Path(p) => {
            if p.qself.is_some() {
                return false;
            }
            let first = p.path.segments.first().map(|s| s.ident.to_string());
            if first
                .as_deref()
                .is_some_and(|f| params.iter().any(|param| param == f))
            {
                return false;
            }
            p.path.segments.iter().all(|seg| match &seg.arguments {
                syn::PathArguments::None => true,
                syn::PathArguments::AngleBracketed(args) => args.args.iter().all(|a| match a {
                    syn::GenericArgument::Lifetime(l) => l.ident == "static",
                    syn::GenericArgument::Type(t) => is_static(t, params),
                    syn::GenericArgument::AssocType(at) => is_static(&at.ty, params),
                    _ => true,
                }),
                syn::PathArguments::Parenthesized(args) => {
                    !has_non_static_lifetime(&args.to_token_stream())
                        && args.inputs.iter().all(|t| is_static(t, params))
                }
            })
        }
        Type::TraitObject(o) => o.bounds.iter().all(|b| match b {
            TypeParamBound::Lifetime(l) => l.ident == "static",
            other => {
                let tokens = other.to_token_stream();
                !has_non_static_lifetime(&tokens)
                    && !params
                        .iter()
                        .any(|p| crate::item::mentions_ident(&tokens, &p.to_string()))
            }
        }),
        Type::Tuple(t) => t.elems.iter().all(|e| is_static(e, params)),
        Type::Array(a) => is_static(&a.elem, params),
        Type::Slice(s) => is_static(&s.elem, params),
        Type::Paren(p) => is_static(&p.elem, params),
        Type::Group(g) => is_static(&g.elem, params),
        Type::Ptr(p) => is_static(&p.elem, params),
        // `!`, macros and anything new: assume `'static`; the compiler says otherwise.
        _ => true,
    }
}

/// Whether `tokens` name a lifetime other than `'static` (`'a`, `'_`).
fn has_non_static_lifetime(tokens: &TokenStream) -> bool {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    tokens.iter().enumerate().any(|(i, t)| match t {
        TokenTree::Punct(p) if p.as_char() == '\'' => {
            !matches!(tokens.get(i + 1), Some(TokenTree::Ident(id)) if id == "static")
        }
        TokenTree::Group(g) => has_non_static_lifetime(&g.stream()),
        _ => false,
    })
}

/// Whether `expr` names a static item (`REGISTRY`, `crate::config::REGISTRY`, `&REGISTRY`):
/// a path that is not an argument, `self`, `Self`, or one of the fn's generic parameters.
/// Such an expression gives the same value on every call, so a call site may cache what it
/// looks up through it.
pub fn is_static_path(expr: &Expr, bindings: &[syn::Ident], generics: &Generics) -> bool {
    match expr {
        Expr::Group(g) => is_static_path(&g.expr, bindings, generics),
        Expr::Paren(p) => is_static_path(&p.expr, bindings, generics),
        Expr::Reference(r) => r.mutability.is_none() && is_static_path(&r.expr, bindings, generics),
        Expr::Path(p) => {
            if p.qself.is_some() || p.path.segments.iter().any(|s| !s.arguments.is_none()) {
                return false;
            }
            let Some(first) = p.path.segments.first() else {
                return false;
            };
            let first = &first.ident;
            if p.path.segments.len() == 1 {
                return first != "self" && first != "Self" && !bindings.iter().any(|b| b == first);
            }
            first != "Self"
                && !generics.params.iter().any(|g| match g {
                    GenericParam::Type(t) => &t.ident == first,
                    _ => false,
                })
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn generics(tokens: TokenStream) -> Generics {
        let f: syn::ItemFn = syn::parse2(quote!(fn f #tokens () {})).unwrap();
        f.sig.generics
    }

    fn is_static_in(ty: TokenStream, g: TokenStream) -> bool {
        let g = generics(g);
        let params = non_static_params(&g);
        is_static(&syn::parse2(ty).unwrap(), &params)
    }

    #[test]
    fn borrowed_and_generic_types_are_not_static() {
        assert!(is_static_in(quote!(String), quote!()));
        assert!(is_static_in(quote!(&'static str), quote!()));
        assert!(is_static_in(
            quote!(Vec<(u8, Box<dyn Error + Send>)>),
            quote!()
        ));
        assert!(is_static_in(quote!(fn(&str) -> u8), quote!()));
        assert!(is_static_in(quote!(Self), quote!()));
        assert!(!is_static_in(quote!(&str), quote!()));
        assert!(!is_static_in(quote!(&'a str), quote!(<'a>)));
        assert!(!is_static_in(quote!(Cow<'a, str>), quote!(<'a>)));
        assert!(!is_static_in(quote!(Foo<'_>), quote!()));
        assert!(!is_static_in(quote!((impl Display, u32)), quote!()));
        assert!(!is_static_in(quote!(T), quote!(<T: FromStr>)));
        assert!(!is_static_in(quote!(Vec<T>), quote!(<T>)));
        assert!(!is_static_in(quote!(T::Output), quote!(<T: Tr>)));
        assert!(is_static_in(quote!(T), quote!(<T: Clone + 'static>)));
        assert!(is_static_in(quote!(T), quote!(<T: Any>)));
        let g: syn::ItemFn = syn::parse2(quote!(
            fn f<T>()
            where
                T: Send + 'static,
            {
            }
        ))
        .unwrap();
        assert!(is_static(
            &syn::parse2(quote!(T)).unwrap(),
            &non_static_params(&g.sig.generics)
        ));
    }

    #[test]
    fn static_paths() {
        let bindings = vec![syn::Ident::new("reg", proc_macro2::Span::call_site())];
        let g = generics(quote!(<R: HasRegistry>));
        let check = |e: TokenStream| is_static_path(&syn::parse2(e).unwrap(), &bindings, &g);
        assert!(check(quote!(REGISTRY)));
        assert!(check(quote!(crate::config::REGISTRY)));
        assert!(check(quote!(&REGISTRY)));
        assert!(check(quote!(self::REGISTRY)));
        assert!(!check(quote!(reg)));
        assert!(!check(quote!(self)));
        assert!(!check(quote!(self.registry)));
        assert!(!check(quote!(Self::REGISTRY)));
        assert!(!check(quote!(R::REGISTRY)));
        assert!(!check(quote!(registry())));
        assert!(!check(quote!(REGISTRIES[0])));
        assert!(!check(quote!(&*CURRENT.load())));
    }
}
