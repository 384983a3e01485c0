//! The compile-time checks of a stacked fn's types, each made once per fn, so a misuse is one
//! error on the user's own tokens (issue #26): the fn's error type must carry every rejection
//! no fallback answers (`std::io::Error` never can: a dedicated error says so).
//!
//! The check is a trait local to the expansion, in a block of its own that holds no token of
//! the user's (so its names shadow nothing), called once with its `Self` inferred as the fn's
//! error type. Its impl is `#[diagnostic::do_not_recommend]`, so rustc reports the trait's
//! own message rather than the `From` bound inside.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

use crate::pretty::escape_braces;

/// A rejection of a layer without a fallback, which reaches the fn's caller.
#[derive(Clone, Copy)]
pub struct Rejection {
    /// The attribute, for messages: `circuit_breaker`.
    pub attribute: &'static str,
    /// The `StackError` variant: `CallNotPermitted`.
    pub variant: &'static str,
    /// The rejection's type under the facade: `retry::MaxRetriesExceeded`.
    pub path: &'static str,
}

impl Rejection {
    /// The rejection's type as the user names it: `resilience4rs::CallNotPermitted`.
    fn shown(&self) -> String {
        format!("resilience4rs::{}", self.path)
    }

    fn ty(&self, krate: &TokenStream) -> TokenStream {
        let path: syn::Path = syn::parse_str(self.path).expect("a rejection's path");
        quote!(#krate::#path)
    }
}

/// The rejections of the layers, in the order the expansion matches them.
pub const REJECTIONS: [Rejection; 5] = [
    Rejection {
        attribute: "circuit_breaker",
        variant: "CallNotPermitted",
        path: "CallNotPermitted",
    },
    Rejection {
        attribute: "time_limiter",
        variant: "Timeout",
        path: "timelimiter::Timeout",
    },
    Rejection {
        attribute: "bulkhead",
        variant: "BulkheadFull",
        path: "bulkhead::BulkheadFullException",
    },
    Rejection {
        attribute: "rate_limiter",
        variant: "RequestNotPermitted",
        path: "ratelimiter::RequestNotPermitted",
    },
    Rejection {
        attribute: "retry",
        variant: "MaxRetriesExceeded",
        path: "retry::MaxRetriesExceeded",
    },
];

/// `a`, `a and b`, `a, b and c`.
fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `std::io::Error` (written `io::Error`, or behind `io::Result<T>`) as the error type of a
/// fn with a rejection no fallback answers: no `From` impl can be added to it (the orphan
/// rule), so the one fix is a fallback or another error type. Reported on the error type.
pub fn io_error(err: Option<&Type>, at: Span, unanswered: &[Rejection]) -> syn::Result<()> {
    let Some(Type::Path(path)) = err else {
        return Ok(());
    };
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let is_io = matches!(
        segments.iter().map(String::as_str).collect::<Vec<_>>()[..],
        ["io", "Error"] | ["std", "io", "Error"]
    );
    if !is_io || unanswered.is_empty() || path.qself.is_some() {
        return Ok(());
    }
    let attributes = listed(
        &unanswered
            .iter()
            .map(|r| format!("`#[{}]`", r.attribute))
            .collect::<Vec<_>>(),
    );
    let types = listed(
        &unanswered
            .iter()
            .map(|r| format!("`{}`", r.shown()))
            .collect::<Vec<_>>(),
    );
    let (them, a_fallback) = if unanswered.len() == 1 {
        ("it", "a `fallback = \"...\"`")
    } else {
        ("each of them", "each a `fallback = \"...\"`")
    };
    let have = if unanswered.len() == 1 { "has" } else { "have" };
    Err(syn::Error::new(
        at,
        format!(
            "`std::io::Error` cannot represent a call rejected by {attributes}, which {have} no \
             fallback here ({types}), and `From` impls for it can only be written by `std`: give \
             {attributes} {a_fallback} (it receives `resilience4rs::StackError<std::io::Error>`), \
             or return an error type of your own that implements `From` for {them}"
        ),
    ))
}

/// The catch-all arm that turns the rejections no fallback answers (every variant of
/// `StackError` not matched by an earlier arm) into the fn's error type: one check that the
/// type implements `From` for each, spanned at `at` (the error type).
pub fn rejections_arm(krate: &TokenStream, unanswered: &[Rejection], at: Span) -> TokenStream {
    if unanswered.is_empty() {
        return TokenStream::new();
    }
    let local = |name: &str| Ident::new(name, Span::mixed_site().located_at(at));
    let (check, method, x, e) = (
        local("CarriesRejections"),
        local("__from_rejection"),
        local("__rejection"),
        local("__stack_error"),
    );
    let types: Vec<TokenStream> = unanswered.iter().map(|r| r.ty(krate)).collect();
    let variants: Vec<Ident> = unanswered
        .iter()
        .map(|r| Ident::new(r.variant, Span::call_site()))
        .collect();
    let attributes = listed(
        &unanswered
            .iter()
            .map(|r| format!("`#[{}]`", r.attribute))
            .collect::<Vec<_>>(),
    );
    let froms = listed(
        &unanswered
            .iter()
            .map(|r| format!("`From<{}>`", r.shown()))
            .collect::<Vec<_>>(),
    );
    let message = escape_braces(&format!(
        "the fn's error type cannot represent a call rejected by {attributes}, which {has} no \
         fallback here",
        has = if unanswered.len() == 1 { "has" } else { "have" },
    ));
    let message = format!(
        "{message}: `{{Self}}` does not implement {}",
        escape_braces(&froms)
    );
    let note = escape_braces(&format!(
        "give {attributes} a `fallback = \"...\"` (it receives `resilience4rs::StackError`), \
         or return an error type that implements {froms} (for an error type of your own: \
         implement {it}, e.g. with an enum variant)",
        it = if unanswered.len() == 1 { "it" } else { "them" },
    ));
    let body = quote_spanned! {at=>
        {
            #[diagnostic::on_unimplemented(
                message = #message,
                label = "without a fallback, a rejected call is returned as this error type",
                note = #note
            )]
            trait #check: Sized {
                fn #method(error: #krate::StackError<Self>) -> Self;
            }
            #[diagnostic::do_not_recommend]
            impl<E> #check for E
            where
                #(E: ::core::convert::From<#types>,)*
            {
                #[inline(always)]
                fn #method(error: #krate::StackError<E>) -> E {
                    match error {
                        #(
                            #krate::StackError::#variants(#x) =>
                                <E as ::core::convert::From<#types>>::from(#x),
                        )*
                        _ => #krate::__private::stack::answered("a layer with a fallback"),
                    }
                }
            }
            <_ as #check>::#method(#e)
        }
    };
    quote! {
        ::core::result::Result::Err(#e) => ::core::result::Result::Err(#body),
    }
}

/// The span of the fn's error type, or of its return type when the error type is not
/// written (`io::Result<T>`).
pub fn error_span(err: Option<&Type>, output: &Type) -> Span {
    match err {
        Some(e) => e.span(),
        None => output.span(),
    }
}
