//! Tests of the item analysis (`item.rs`).

use super::*;
use quote::quote;

fn analyse(item: TokenStream) -> syn::Result<Protected> {
    super::analyse(item, "circuit_breaker")
}

fn err(item: TokenStream) -> String {
    match analyse(item) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn accepts_async_fn_and_finds_parts() {
    let p = analyse(quote!(
        async fn f(&self) -> Result<u32, MyError> {
            Ok(1)
        }
    ))
    .unwrap();
    assert!(matches!(p.body, Body::Native));
    assert!(p.receiver == Some(Receiver::Shared));
    let e = p.parts.err.unwrap();
    assert_eq!(quote!(#e).to_string(), quote!(MyError).to_string());
    assert_eq!(p.parts.err_text, "MyError");
}

#[test]
fn io_result_names_io_error() {
    let p = analyse(quote!(
        async fn f() -> std::io::Result<Vec<u8>> {
            Ok(vec![])
        }
    ))
    .unwrap();
    assert_eq!(p.parts.err_text, "std::io::Error");
    assert!(p.parts.ok.is_some());
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
            Receiver::Owned(Owner::Value),
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
            Receiver::Owned(Owner::Arc),
        ),
        (
            quote!(
                async fn f(self: Box<Self>) -> Result<(), E> {
                    Ok(())
                }
            ),
            Receiver::Owned(Owner::Box),
        ),
        (
            quote!(
                async fn f(self: &Self) -> Result<(), E> {
                    Ok(())
                }
            ),
            Receiver::Shared,
        ),
        (
            quote!(
                async fn f(self: Pin<&mut Self>) -> Result<(), E> {
                    Ok(())
                }
            ),
            Receiver::Owned(Owner::Other),
        ),
    ];
    for (item, kind) in kinds {
        assert_eq!(analyse(item).unwrap().receiver, Some(kind));
    }
}

#[test]
fn inner_attributes_are_kept_apart() {
    let p = analyse(quote!(
        async fn f(x: u32) -> Result<(), E> {
            #![allow(unused_variables)]
            Ok(())
        }
    ))
    .unwrap();
    assert_eq!(p.inner_attrs.len(), 1);
    assert!(p.func.attrs.is_empty());
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
        fn f(x: i32) -> i32;
    ))
    .contains("`extern` block"));
    assert!(err(quote!(
        pub fn f(x: i32) -> i32;
    ))
    .contains("foreign fn"));
    assert!(err(quote!(
        static X: i32;
    ))
    .contains("foreign static"));
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
fn runtime_attribute_above_is_named() {
    let tokio_test = quote! {
        #[::core::prelude::v1::test]
        fn t() -> Result<(), E> {
            let body = async { Ok(()) };
            tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(body)
        }
    };
    assert!(err(tokio_test).contains("`#[tokio::test]` above `#[circuit_breaker]`"));
    let tokio_main = quote! {
        fn main() -> Result<(), E> {
            let body = async { Ok(()) };
            tokio::runtime::Builder::new_multi_thread().build().unwrap().block_on(body)
        }
    };
    assert!(err(tokio_main).contains("`#[tokio::main]`"));
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
    assert_eq!(args[0].declared, "(a, b): (u32, u32)");
    assert!(args[1].rebind.is_none() && args[2].rebind.is_none());
    assert_eq!(args[2].declared, "d: u8");
}

#[test]
fn bindings_cover_patterns_and_self() {
    let f: ItemFn = syn::parse2(quote!(
        async fn f(&self, (a, Point { x, .. }): (u32, Point), reg: &Registry) -> Result<(), E> {
            Ok(())
        }
    ))
    .unwrap();
    let names: Vec<String> = bindings(&f).iter().map(ToString::to_string).collect();
    assert_eq!(names, ["self", "a", "x", "reg"]);
}

#[test]
fn impl_trait_detection_is_deep() {
    let t: Type = syn::parse2(quote!(Result<(impl Display, u32), E>)).unwrap();
    assert!(mentions_impl_trait(&t));
    let t: Type = syn::parse2(quote!(Result<u32, E>)).unwrap();
    assert!(!mentions_impl_trait(&t));
}
