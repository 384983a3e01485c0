//! The `#[circuit_breaker]` attribute, re-exported as `resilience4rs::circuit_breaker`.
//!
//! Use it through the `resilience4rs` crate; the generated code names `::resilience4rs::...` paths, so the
//! crate must be a dependency under that name.
//!
//! The macro is split into small parts: `args` parses the attribute's arguments,
//! `item` analyses the annotated fn, `fallback` builds the fallback call, `expand` writes the
//! new body, and `diag` turns errors into `compile_error!` next to the unchanged item.

mod args;
mod diag;
mod expand;
mod fallback;
mod item;

use proc_macro::TokenStream;
use proc_macro2::Span;

/// Protects an async fn or method with a named circuit breaker, like Resilience4j's
/// `@CircuitBreaker(name = "...", fallbackMethod = "...")`.
///
/// ```ignore
/// use resilience4rs::{circuit_breaker, CallError};
///
/// #[circuit_breaker(name = "paymentService", fallback = "cached_rate")]
/// async fn rate(currency: String) -> Result<f64, RateError> {
///     fetch_rate(&currency).await
/// }
///
/// async fn cached_rate(currency: String, error: CallError<RateError>) -> Result<f64, RateError> {
///     Ok(1.0)
/// }
/// ```
///
/// # Arguments
///
/// * `name = "..."` (required): the breaker's name, i.e. the key under
///   `resilience4j.circuitbreaker.instances` in `application.yml`. A name without its own
///   entry uses `configs.default` (then the library defaults), as in Resilience4j.
/// * `fallback = "..."` (optional): an async fn or method in the same scope, called with the
///   protected fn's arguments plus the error, see [Fallback](#fallback).
/// * `registry = path::TO::REGISTRY` (optional): use this registry instead of the
///   process-global one (`resilience4rs::global()`). Anything that derefs to a `resilience4rs::Registry`
///   works: a `static LazyLock<Registry>`, a `&'static Registry`, ...
///
/// # What it goes on
///
/// Free `async fn`s; async methods of inherent and trait impls with `self`, `&self`,
/// `&mut self` or `self: Arc<Self>`; generic fns with lifetimes and where clauses; pattern
/// arguments (`(a, b): (u32, u32)`); `impl Trait` arguments. The fn must return a `Result`:
/// `Err` is what the breaker records as a failure (subject to the instance's
/// `recordExceptions`/`ignoreExceptions` classification), `Ok` as a success. A panic in the
/// body is recorded as a failure and then resumed.
///
/// Methods of an `#[async_trait]` impl are supported too: put `#[async_trait]` on the impl and
/// `#[circuit_breaker]` on the method (the only order Rust allows; the impl's attribute runs
/// first and this one recognises its output). There, a method fallback needs `&self` or an
/// owned receiver: a `&mut self` method should name an associated fn (`"Self::f"`).
///
/// # Routing
///
/// Each annotated fn caches its breaker handle in a `static OnceLock`, filled on the first
/// call from the registry. Later calls do no map lookup and no hashing; the handle shares the
/// breaker's state and configuration, so a config replaced in the registry is seen at once.
/// The protected future is built in place (no `Box<dyn Future>`, no allocation per call).
///
/// The global registry is the one given to `resilience4rs::init(registry)`, or, if nothing was
/// initialised before the first call, one loaded from the file named by the `BREAKER_CONFIG`
/// environment variable, else `application.yml` in the working directory, else the library
/// defaults.
///
/// # Errors without a fallback
///
/// A rejected call (the breaker is OPEN, or HALF_OPEN with no permit left) never runs the body;
/// without a fallback it must be returned as the fn's own error type, so that type must
/// implement `From<resilience4rs::CallNotPermitted>`. The compiler says so if it does not.
///
/// # Fallback
///
/// As in Resilience4j, the fallback is called for every failure of the protected call: an
/// `Err` from the body (recorded or ignored by the breaker alike) and a rejected call. It gets
/// the same arguments as the protected fn, plus a `resilience4rs::CallError<E>` last
/// (`CallError::Inner(e)` or `CallError::NotPermitted(..)`), must be `async`, and must return
/// the same type as the protected fn. It is resolved in the fn's scope:
///
/// * `fallback = "name"` on a method (a fn with `self`): the method `self.name(..)`;
/// * `fallback = "name"` on a free fn: the fn `name` in scope;
/// * `fallback = "Self::name"`, `"module::name"`: that path, called without a receiver.
///
/// The protected future takes ownership of the arguments, so the fallback gets **clones taken
/// before the call**: with a fallback, every argument type must be `Clone` (pass big values as
/// `Arc<T>` or by reference). A method with an owned receiver (`self`, `self: Arc<Self>`) also
/// clones the receiver. Without a fallback nothing is cloned.
///
/// # Expansion
///
/// ```ignore
/// #[circuit_breaker(name = "backendA", fallback = "cached")]
/// async fn fetch(id: u32) -> Result<String, MyError> {
///     remote(id).await
/// }
/// ```
///
/// becomes (paths shortened; `__private` items are the macro's support code):
///
/// ```ignore
/// async fn fetch(id: u32) -> Result<String, MyError> {
///     __private::protected_output::<Result<String, MyError>>();
///     static __BREAKER_INSTANCE: OnceLock<CircuitBreaker> = OnceLock::new();
///     let breaker: &'static CircuitBreaker =
///         __BREAKER_INSTANCE.get_or_init(|| __private::from_global("backendA"));
///     let saved = (__private::fallback_arg(&id),);          // clone for the fallback
///     let outcome = breaker
///         .call(async {
///             if false {                                    // types `?` and `return`
///                 let typed: Result<String, MyError> = unreachable!();
///                 return typed;
///             }
///             { remote(id).await }                          // the original body
///         })
///         .await;
///     match outcome {
///         Ok(value) => Ok(value),
///         Err(error) => {
///             let (id,) = saved;
///             __private::fallback::<Result<String, MyError>, _>(cached(id, error)).await
///         }
///     }
/// }
/// ```
///
/// Without a fallback, the `match` is `__private::without_fallback(outcome)`, which maps
/// `CallError::Inner(e)` to `e` and `CallError::NotPermitted(n)` to `E::from(n)`.
///
/// # Compile errors
///
/// Misuse is reported on the offending token with what to write instead: a non-async or
/// `const` fn, a struct or a bodiless trait method, a missing, empty or non-literal `name`,
/// an unknown argument (`fallbackMethod` -> `fallback`), a duplicate argument, a return type
/// that is not a `Result`, an error type without `From<CallNotPermitted>` and no fallback, and
/// a fallback that is missing, not async, takes other arguments or returns another type.
#[proc_macro_attribute]
pub fn circuit_breaker(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    let result = args::Args::parse(attr.into(), Span::call_site()).and_then(|args| {
        let protected = item::analyse(item.clone())?;
        expand::expand(args, protected)
    });
    match result {
        Ok(tokens) => tokens.into(),
        Err(error) => diag::with_item(error, item).into(),
    }
}
