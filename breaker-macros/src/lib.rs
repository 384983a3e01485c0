//! The resilience attributes, re-exported by the `resilience4rs` crate: `#[circuit_breaker]`,
//! `#[retry]`, `#[time_limiter]`, `#[bulkhead]` and `#[rate_limiter]`, which stack on one fn.
//!
//! Use them through `resilience4rs`; the generated code names the facade crate by the name
//! the user's Cargo.toml gives it (a renamed dependency works), or by `crate = "path"`.
//!
//! The crate is split so that more attributes can be added, one file each, sharing the rest:
//! `args` parses arguments (given an attribute's `args::Spec`), `item` analyses the
//! annotated fn, `fallback` builds and checks the fallback call, `expand` writes the new body
//! around an `expand::Layer`, `diag` turns errors into `compile_error!` next to the
//! unchanged item, `krate` finds the facade, `lifetimes` tells borrowed types and per-call
//! expressions apart, `hints` spots a fallback named in the wrong namespace, `pretty` prints tokens for messages. `circuit_breaker` is the breaker's
//! layer; `retry`, `time_limiter`, `bulkhead` and `rate_limiter` the others'; `stack` collects
//! the attributes of one fn into one composed call, `instance` finds a stacked layer's
//! instance.

mod args;
mod bulkhead;
mod circuit_breaker;
mod diag;
mod expand;
mod fallback;
mod hints;
mod instance;
mod item;
mod krate;
mod lifetimes;
mod pretty;
mod rate_limiter;
mod retry;
mod stack;
mod stack_checks;
mod time_limiter;

use proc_macro::TokenStream;

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
///   entry uses `configs.default` (then the library defaults), as in Resilience4j. Any
///   expression giving a `&str` works too: a const (`name = BACKEND`, as Java's
///   `@CircuitBreaker(name = BACKEND)`), `Self::NAME`, a `macro_rules!` fragment.
/// * `fallback = "..."` (optional): an async fn or method in the same scope, called with the
///   protected fn's arguments plus the error, see [Fallback](#fallback). A bare path
///   (`fallback = cached_rate`) works too.
/// * `registry = EXPR` (optional): use this registry instead of the process-global one
///   (`resilience4rs::global()`); anything that derefs to a `resilience4rs::Registry`. See
///   [Routing](#routing).
/// * `crate = "path"` (optional): the path to the `resilience4rs` crate, for a crate that
///   re-exports it (`crate = "my_framework::resilience4rs"`). Without it, the facade is found
///   in the user's Cargo.toml under whatever name it has there.
///
/// # What it goes on
///
/// Free `async fn`s; async methods of inherent and trait impls with `self`, `&self`,
/// `&mut self`, `self: Box<Self>`, `self: Rc<Self>` or `self: Arc<Self>`; trait methods with
/// a default body; generic fns with lifetimes and where clauses; pattern arguments
/// (`(a, b): (u32, u32)`); `impl Trait` arguments and `impl Trait` inside the `Ok` type;
/// bodies starting with inner attributes (`#![allow(..)]`). The fn must return a `Result`
/// (an alias such as `io::Result<T>` is fine): `Err` is what the breaker records as a
/// failure (subject to the instance's `recordExceptions`/`ignoreExceptions`
/// classification), `Ok` as a success (subject to `recordResult`). A panic in the body is
/// recorded as a failure and then resumed.
///
/// The `Ok` and error types may borrow (`Result<&str, E>`, a generic `T` without a `'static`
/// bound): such a type is never the type a `recordResult` predicate or an exception name was
/// registered for (those match by type id, which needs `'static`), so its values are
/// successes and its errors match no name. A type that hides a borrow from the macro (a
/// generic parameter of the surrounding impl, an alias) is classified by type and needs
/// `'static`; the compiler then asks for the bound.
///
/// Methods of an `#[async_trait]` impl are supported too: put `#[async_trait]` on the impl and
/// `#[circuit_breaker]` on the method (the only order Rust allows; the impl's attribute runs
/// first and this one recognises its output). There, a method fallback needs `&self` or an
/// owned receiver: a `&mut self` method should name an associated fn (`"Self::f"`).
///
/// With `#[tokio::test]` or `#[tokio::main]`, put `#[circuit_breaker]` first (attributes run
/// from the top).
///
/// Stacked with `#[retry]`, `#[time_limiter]`, `#[bulkhead]` or `#[rate_limiter]` on the same
/// fn, the layers make one call nested by the config's aspect orders, and every fallback takes
/// `resilience4rs::StackError<E>` instead of `CallError<E>`: see [`macro@retry`].
///
/// # Routing
///
/// Without `registry`, or with `registry = PATH` naming a static (`REGISTRY`,
/// `crate::config::REGISTRY`), each annotated fn caches its breaker handle in a
/// `static OnceLock`, filled on the first call. Later calls do no map lookup and no hashing;
/// the handle shares the breaker's state and configuration, so a config replaced in the
/// registry is seen at once. With a `name` expression, the cached handle is used while the
/// expression gives the same name, and another name is looked up (a trait's default method
/// with `name = Self::NAME` gets each impl's own breaker).
///
/// `registry = EXPR` that depends on `self` or an argument (`self.registry`, `&reg`,
/// `registries.current()`), or that is not a path, is evaluated on every call and the call
/// goes through the registry it gives: two clients with two registries use their own. That
/// costs a registry lookup per call (see BENCHMARKS.md). A static whose `Deref` can give
/// another registry over time is written as an expression (`registry = &*CURRENT`), which is
/// evaluated per call.
///
/// The global registry is the one given to `resilience4rs::init(registry)`, or, if nothing
/// was initialised before the first call, one loaded from the file named by the
/// `BREAKER_CONFIG` environment variable, else `application.yml` in the working directory,
/// else the library defaults.
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
/// * `fallback = "name"` on a method (a fn with `self`): the method `Self::name`, given the
///   receiver (a `&mut self` method's fallback may take `&self` or `&mut self`; an owned
///   receiver's may take it by value, by reference, or through its `Box`/`Rc`/`Arc`), or an
///   associated fn `Self::name` without `self`;
/// * `fallback = "name"` on a free fn: the fn `name` in scope;
/// * `fallback = "Self::name"`, `"self::name"`, `"module::name"`: that path, called without
///   a receiver.
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
/// becomes, in outline (`__private` items are the macro's support code; the fallback's
/// checks are traits local to the body, whose messages spell out the signature it must have):
///
/// ```ignore
/// async fn fetch(id: u32) -> Result<String, MyError> {
///     // local traits checking `cached` ...
///     static __BREAKER_INSTANCE: OnceLock<CircuitBreaker> = OnceLock::new();
///     let breaker = __BREAKER_INSTANCE
///         .get_or_init(|| __private::circuit_breaker::from_global("backendA"));
///     let saved = (id.clone(),);                        // copies for the fallback
///     let outcome = __private::circuit_breaker::call(
///         <Result<String, MyError> as ProtectedOutput>::checked(), // "must return a Result"
///         |b, r| __private::circuit_breaker::by_type(b, r),       // classify by type
///         breaker,
///         async {
///             if false {                                // types `?` and `return`
///                 let typed: Result<String, MyError> = unreachable!();
///                 return typed;
///             }
///             remote(id).await                          // the original body
///         },
///     )
///     .await;
///     match outcome {
///         Ok(value) => Ok(value),
///         Err(error) => { let (id,) = saved; /* checked */ cached(id, error).await }
///     }
/// }
/// ```
///
/// Without a fallback, the `match` is
/// `<MyError as WithoutFallback>::without_fallback(outcome)`, which maps `CallError::Inner(e)`
/// to `e` and `CallError::NotPermitted(n)` to `E::from(n)`. For a borrowed `Ok` or error type,
/// `by_type` is `unnamed_ok`, `unnamed_err` or `unnamed`.
///
/// # Compile errors
///
/// Every misuse gets one error, on the offending token, saying what to write: a non-async or
/// `const` fn, a struct, a bodiless trait method or a foreign fn, `#[tokio::test]` above this
/// attribute, a missing, empty or non-string `name`, an unknown argument
/// (`fallbackMethod` -> `fallback`), a duplicate argument, a return type that is not a
/// `Result`, an error type without `From<CallNotPermitted>` and no fallback, and a fallback
/// that is not a fn, takes other arguments, is not async or returns another type (the error
/// spells out the signature it must have).
#[proc_macro_attribute]
pub fn circuit_breaker(attr: TokenStream, item: TokenStream) -> TokenStream {
    run(stack::Kind::CircuitBreaker, attr, item)
}

/// Retries an async fn or `&self` method with a named retry, like Resilience4j's
/// `@Retry(name = "...", fallbackMethod = "...")`.
///
/// ```ignore
/// #[retry(name = "backendA", fallback = "cached")]
/// async fn fetch(id: u32) -> Result<String, MyError> { remote(id).await }
///
/// async fn cached(id: u32, error: StackError<MyError>) -> Result<String, MyError> { .. }
/// ```
///
/// The instance is `name` of the global `RetryRegistry` (`resilience4j.retry.instances` of
/// the same Spring files as the breakers, `resilience4rs::global_modules()`), or of
/// `registry = EXPR` (anything that derefs to a `RetryRegistry`). The body runs once per
/// attempt, each time with fresh clones of the arguments (so they must be `Clone`), waiting
/// the config's interval between attempts; an `Err` is retried by the config's
/// `retryExceptions` / `ignoreExceptions` (through the `ErrorCatalog`).
///
/// Arguments, fallback rules, `crate = "..."` and compile errors as for
/// [`macro@circuit_breaker`], except that the fallback's error parameter is
/// `resilience4rs::StackError<E>`, and that a `&mut self` or owned receiver is not supported.
/// Without a fallback, the error type must implement `From<MaxRetriesExceeded>` (what the
/// retry returns when `failAfterMaxAttempts` ends a call retried on its results).
///
/// # Stacking
///
/// `#[retry]`, `#[circuit_breaker]`, `#[rate_limiter]`, `#[time_limiter]` and `#[bulkhead]`
/// on one fn, in any textual order, make one call nested as Spring nests the aspects: by
/// the `*AspectOrder` properties of the global config, read on each call (default
/// `Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(fn)))))`). Each layer's fallback
/// wraps that layer only: it receives what escapes the layer (`StackError<E>`: the fn's
/// error or any layer's rejection), and its `Ok` is a success to every outer layer. Without
/// a fallback, a layer's rejection reaches the caller as the fn's error type, which must
/// implement `From` of it (`CallNotPermitted`, `Timeout`, `BulkheadFullException`,
/// `RequestNotPermitted`, `MaxRetriesExceeded`). Each attribute at most once per fn.
#[proc_macro_attribute]
pub fn retry(attr: TokenStream, item: TokenStream) -> TokenStream {
    run(stack::Kind::Retry, attr, item)
}

/// Limits the duration of an async fn or `&self` method with a named time limiter, like
/// Resilience4j's `@TimeLimiter(name = "...", fallbackMethod = "...")`.
///
/// The instance is `name` of the global `TimeLimiterRegistry`
/// (`resilience4j.timelimiter.instances`) or of `registry = EXPR`. When `timeoutDuration`
/// runs out, the call's future is dropped (cancelled at its current `.await`, whatever
/// `cancelRunningFuture` says) and the layer fails with `Timeout` (`TimeLimiter '<name>'
/// recorded a timeout exception.`). Arguments, fallback and stacking as for
/// [`macro@retry`]; without a fallback the error type must implement `From<Timeout>`.
#[proc_macro_attribute]
pub fn time_limiter(attr: TokenStream, item: TokenStream) -> TokenStream {
    run(stack::Kind::TimeLimiter, attr, item)
}

/// Limits the concurrent calls of an async fn or `&self` method with a named bulkhead, like
/// Resilience4j's `@Bulkhead(name = "...", type = ..., fallbackMethod = "...")`.
///
/// `type = "SEMAPHORE"` (the default) uses `resilience4j.bulkhead.instances`
/// (`maxConcurrentCalls`, `maxWaitDuration`); `type = "THREADPOOL"` uses
/// `resilience4j.thread-pool-bulkhead.instances` (`maxThreadPoolSize` calls run,
/// `queueCapacity` wait, in the caller's task). A full bulkhead fails the layer with
/// `BulkheadFullException`. `registry = EXPR` derefs to a `BulkheadRegistry` (or a
/// `ThreadPoolBulkheadRegistry` with `type = "THREADPOOL"`). Arguments, fallback and
/// stacking as for [`macro@retry`]; without a fallback the error type must implement
/// `From<BulkheadFullException>`.
#[proc_macro_attribute]
pub fn bulkhead(attr: TokenStream, item: TokenStream) -> TokenStream {
    run(stack::Kind::Bulkhead, attr, item)
}

/// Rate-limits an async fn or `&self` method with a named rate limiter, like Resilience4j's
/// `@RateLimiter(name = "...", fallbackMethod = "...")` (one permit per call).
///
/// The instance is `name` of the global `RateLimiterRegistry`
/// (`resilience4j.ratelimiter.instances`) or of `registry = EXPR`. A call waits for a permit
/// up to `timeoutDuration`; a call refused fails the layer with `RequestNotPermitted` (at
/// once). Every result and error goes to `drainPermissionsOnResult`. Arguments, fallback and
/// stacking as for [`macro@retry`]; without a fallback the error type must implement
/// `From<RequestNotPermitted>`.
#[proc_macro_attribute]
pub fn rate_limiter(attr: TokenStream, item: TokenStream) -> TokenStream {
    run(stack::Kind::RateLimiter, attr, item)
}

fn run(kind: stack::Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    // `Span::local_file`: Rust 1.88.
    let file = proc_macro::Span::call_site().local_file();
    stack::attribute(kind, attr.into(), item.into(), file.as_deref()).into()
}
