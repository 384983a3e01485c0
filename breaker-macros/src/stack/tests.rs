//! Tests of stacking (`stack.rs`).

use super::*;

fn attr(tokens: TokenStream) -> Attribute {
    let item: ItemFn = syn::parse2(quote!(#tokens async fn f() {})).unwrap();
    item.attrs.into_iter().next().unwrap()
}

#[test]
fn siblings_are_recognised_by_their_last_segment() {
    assert_eq!(
        Kind::of(&attr(quote!(#[retry(name = "a")])), &[]),
        Some(Kind::Retry)
    );
    assert_eq!(
        Kind::of(&attr(quote!(#[resilience4rs::bulkhead(name = "a")])), &[]),
        Some(Kind::Bulkhead)
    );
    assert_eq!(
        Kind::of(&attr(quote!(#[time_limiter])), &[]),
        Some(Kind::TimeLimiter)
    );
    assert_eq!(Kind::of(&attr(quote!(#[tracing::instrument])), &[]), None);
    assert_eq!(Kind::of(&attr(quote!(#[retry_later])), &[]), None);
    // Someone else's attributes of the same names stay on the fn (issue 23).
    assert_eq!(Kind::of(&attr(quote!(#[other_crate::retry])), &[]), None);
    assert_eq!(Kind::of(&attr(quote!(#[my::bulkhead(x = 1)])), &[]), None);
    assert_eq!(
        Kind::of(&attr(quote!(#[::resilience4rs::retry])), &[]),
        Some(Kind::Retry)
    );
    // The facade's renamed name, or a `crate = ...` path.
    assert_eq!(
        Kind::of(&attr(quote!(#[r4::retry])), &["r4".to_string()]),
        Some(Kind::Retry)
    );
    assert_eq!(
        Kind::of(
            &attr(quote!(#[app::resilience::bulkhead(name = "a", crate = "app::resilience")])),
            &[]
        ),
        Some(Kind::Bulkhead)
    );
}

fn expand_str(kind: Kind, attr: TokenStream, item: TokenStream) -> String {
    attribute(kind, attr, item, None).to_string()
}

#[test]
fn a_second_attribute_of_a_kind_is_one_error() {
    let out = expand_str(
        Kind::Retry,
        quote!(name = "a"),
        quote!(
            #[retry(name = "b")]
            async fn f() -> Result<u8, E> {
                Ok(1)
            }
        ),
    );
    assert!(out.contains("is given twice"), "{out}");
    // The item is emitted without the siblings, so they report nothing more.
    assert!(!out.contains("# [retry"), "{out}");
}

#[test]
fn siblings_are_taken_off_and_their_paths_kept_used() {
    let out = expand_str(
        Kind::Retry,
        quote!(name = "a", crate = "r4"),
        quote!(
            #[circuit_breaker(name = "b")]
            async fn f() -> Result<u8, E> {
                Ok(1)
            }
        ),
    );
    assert!(!out.contains("# [circuit_breaker"), "{out}");
    assert!(out.contains("use circuit_breaker as _"), "{out}");
    // The given path is imported once, and every path of the expansion goes through it.
    assert_eq!(out.matches("use r4 as __resilience4rs").count(), 1, "{out}");
    assert!(
        out.contains("__resilience4rs :: __private :: stack :: call"),
        "{out}"
    );
    assert!(!out.contains("r4 :: __private"), "{out}");
}

#[test]
fn unanswered_rejections_are_one_check() {
    let out = expand_str(
        Kind::Retry,
        quote!(name = "a", crate = "r4"),
        quote!(
            #[circuit_breaker(name = "b", fallback = "cached")]
            #[time_limiter(name = "c")]
            async fn f() -> Result<u8, E> {
                Ok(1)
            }
        ),
    );
    // Retry and time limiter have no fallback: one trait, bounded by both `From`s, one call.
    assert_eq!(out.matches("trait CarriesRejections").count(), 1, "{out}");
    assert_eq!(
        out.matches("CarriesRejections > :: __from_rejection")
            .count(),
        1,
        "{out}"
    );
    assert!(
        out.contains("`#[time_limiter]` and `#[retry]`, which have no fallback"),
        "{out}"
    );
    assert!(
        !out.contains("From < :: resilience4rs :: CallNotPermitted >"),
        "{out}"
    );
    assert!(!out.contains("FromRejection"), "{out}");
}

#[test]
fn io_error_without_fallback_is_a_dedicated_error() {
    let out = expand_str(
        Kind::Retry,
        quote!(name = "a", crate = "r4"),
        quote!(
            async fn f() -> std::io::Result<u8> {
                Ok(1)
            }
        ),
    );
    assert!(
        out.contains("`std::io::Error` cannot represent a call rejected by `#[retry]`, which has no fallback"),
        "{out}"
    );
    // With a fallback on every layer, `io::Result` is fine.
    let out = expand_str(
        Kind::Retry,
        quote!(name = "a", fallback = "cached", crate = "r4"),
        quote!(
            async fn f() -> std::io::Result<u8> {
                Ok(1)
            }
        ),
    );
    assert!(!out.contains("compile_error"), "{out}");
}

#[test]
fn a_borrowed_ok_type_is_seen_as_a_value_no_predicate_names() {
    let out = expand_str(
        Kind::Retry,
        quote!(name = "a", crate = "r4"),
        quote!(
            async fn f(&self) -> Result<&str, E> {
                Ok("x")
            }
        ),
    );
    assert!(out.contains("struct StackUnnamedValue"), "{out}");
    assert!(!out.contains("stack :: as_any"), "{out}");
    let out = expand_str(
        Kind::Retry,
        quote!(name = "a", crate = "r4"),
        quote!(
            async fn f(&self) -> Result<String, E> {
                Ok(String::new())
            }
        ),
    );
    assert!(out.contains("stack :: as_any"), "{out}");
}
