//! Deciding whether a call's outcome is a success, a failure or ignored: Resilience4j's
//! `recordExceptions`, `ignoreExceptions`, `recordException`, `ignoreException` and
//! `recordResult` settings.
//!
//! Java matches exceptions by class; Rust errors have no class hierarchy. An [`ErrorCatalog`]
//! says which of the application's errors answer to which (Java) names, so the lists of a
//! Spring file (`recordExceptions: [java.io.IOException]`) bind to Rust error values.
//!
//! A registered error keeps its names wherever it travels: the catalog finds it inside the
//! library's own error wrappers and, for types registered with
//! [`ErrorCatalog::register_error`], inside tower's `BoxError` and in the `source()` chain of
//! other errors.

use std::any::Any;
use std::collections::HashMap;
use std::error::Error;
use std::fmt;
use std::sync::Arc;

use crate::error_chain::{Kind, Kinds};

/// What a finished call counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Recorded as a successful call (`onSuccess`).
    Success,
    /// Recorded as a failed call (`onError` with a recorded exception).
    Failure,
    /// Not recorded; the permission is handed back (`onError` with an ignored exception).
    Ignored,
}

/// A type-erased test on an error or result value.
pub(crate) type AnyPredicate = Arc<dyn Fn(&dyn Any) -> bool + Send + Sync>;

/// Which application errors answer to which names (Java class names such as
/// `java.io.IOException`, or any name the application chooses).
///
/// Cheap to clone. Register one or more matchers per name; an error matches a name when any
/// of that name's matchers accepts it, the way a Java exception matches every class it is
/// assignable to.
///
/// # Where a registered error is found
///
/// - **the value itself** (`CircuitBreaker::call` on a `Result<T, E>`), and the library's
///   own wrappers around it one level deep (`CallError<E>`, `RetryError<E>`,
///   `TimeLimiterError<E>`, `BulkheadError<E>`, `RateLimiterError<E>`: their `Inner`);
/// - for a type registered with [`register_error`](Self::register_error) or
///   [`register_error_type`](Self::register_error_type) (any `std::error::Error`), also
///   **boxed** (`Box<dyn Error + Send + Sync>`, tower's `BoxError`, as every layer of a
///   tower stack but the innermost sees it; `Box<dyn Error + Send>`, `Box<dyn Error>`,
///   `Arc<dyn Error + Send + Sync>`) and **as the `source()` of an error the catalog does not
///   know** (tower's `Elapsed` or buffer errors, `CallError`, `StackError`, an
///   `anyhow`-style wrapper), at any depth up to 32 links.
///
/// The first error on that path whose *type* the catalog knows (any registration, any
/// name) is the one the names are matched against, as Java matches the class of the thrown
/// exception: a known error type that wraps another is judged as itself, never by its
/// source. Rust can look into a `Box<dyn Error>` only for a type known to implement
/// `Error`, so a type registered only with [`register`](Self::register) (any `'static` type,
/// errors or not) is found as the value and in the library's typed wrappers only; once the
/// type is also registered with `register_error`, every matcher of it applies everywhere.
///
/// Matching allocates nothing: one binary search over type ids says what the value is (a
/// registered type, a library wrapper of one, or neither), then the matchers of the listed
/// names run; only a boxed error's chain is walked.
///
/// ```
/// use breaker_core::ErrorCatalog;
/// #[derive(Debug)]
/// enum ApiError { Io(String), Status(u16) }
/// let catalog = ErrorCatalog::new()
///     .register("java.io.IOException", |e: &ApiError| matches!(e, ApiError::Io(_)))
///     .register("org.springframework.web.client.HttpServerErrorException",
///               |e: &ApiError| matches!(e, ApiError::Status(s) if *s >= 500));
/// assert!(catalog.claims("java.io.IOException"));
/// assert!(!catalog.claims("java.util.concurrent.TimeoutException"));
/// ```
#[derive(Clone, Default)]
pub struct ErrorCatalog {
    by_name: Arc<HashMap<String, Vec<AnyPredicate>>>,
    /// Every registered type, once.
    kinds: Arc<Kinds>,
}

impl ErrorCatalog {
    /// An empty catalog: no name matches anything.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a matcher: values of type `E` for which `matches` returns true answer to `name`.
    ///
    /// `E` is any `'static` type, found as the value itself or inside the library's typed
    /// wrappers. For an error type (one implementing `std::error::Error`) prefer
    /// [`register_error`](Self::register_error), which also finds it boxed and as a source.
    pub fn register<E: Any>(
        self,
        name: impl Into<String>,
        matches: impl Fn(&E) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.add(name.into(), Kind::value::<E>(), predicate(matches))
    }

    /// Every value of type `E` answers to `name` (see [`register`](Self::register)).
    pub fn register_type<E: Any>(self, name: impl Into<String>) -> Self {
        self.register(name, |_: &E| true)
    }

    /// Adds a matcher for an error type: errors of type `E` for which `matches` returns true
    /// answer to `name`, wherever they travel: the value itself, the library's wrappers,
    /// boxed (tower's `BoxError`), or as the `source()` of an error the catalog does not
    /// know (see the [type docs](ErrorCatalog#where-a-registered-error-is-found)).
    ///
    /// ```
    /// use breaker_core::ErrorCatalog;
    /// #[derive(Debug)]
    /// struct NotFound;
    /// impl std::fmt::Display for NotFound {
    ///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str("404") }
    /// }
    /// impl std::error::Error for NotFound {}
    /// let catalog = ErrorCatalog::new().register_error_type::<NotFound>("com.example.NotFound");
    /// let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(NotFound);
    /// assert!(catalog.matches_any(&["com.example.NotFound".into()], &boxed));
    /// ```
    pub fn register_error<E: Error + 'static>(
        self,
        name: impl Into<String>,
        matches: impl Fn(&E) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.add(name.into(), Kind::error::<E>(), predicate(matches))
    }

    /// Every error of type `E` answers to `name`, wherever it travels (see
    /// [`register_error`](Self::register_error)).
    pub fn register_error_type<E: Error + 'static>(self, name: impl Into<String>) -> Self {
        self.register_error(name, |_: &E| true)
    }

    fn add(mut self, name: String, kind: Kind, matcher: AnyPredicate) -> Self {
        Arc::make_mut(&mut self.by_name)
            .entry(name)
            .or_default()
            .push(matcher);
        Arc::make_mut(&mut self.kinds).add(kind);
        self
    }

    /// Claims `name` for no error at all: for a Java-only exception in a Spring file
    /// (`ignoreExceptions: [com.acme.LegacySoapFault]`) that no Rust error corresponds to.
    /// The name then matches nothing, and loading the file does not report it as unclaimed.
    pub fn acknowledge(mut self, name: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.by_name)
            .entry(name.into())
            .or_default();
        self
    }

    /// Whether any matcher is registered for `name`. A name in a config file that nothing
    /// claims can never match; breaker-config reports such names when loading.
    pub fn claims(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// All names that have a matcher, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// Whether `error` answers to any of `names`: the first error the catalog knows on the
    /// path described in the [type docs](ErrorCatalog#where-a-registered-error-is-found)
    /// is matched; `false` when there is none.
    pub fn matches_any(&self, names: &[String], error: &dyn Any) -> bool {
        if names.is_empty() || self.kinds.is_empty() {
            return false;
        }
        let Some(subject) = self.kinds.subject(error) else {
            return false;
        };
        names.iter().any(|n| {
            self.by_name
                .get(n)
                .is_some_and(|ms| ms.iter().any(|m| m(subject)))
        })
    }
}

impl fmt::Debug for ErrorCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorCatalog")
            .field("names", &self.names())
            .finish()
    }
}

pub(crate) fn predicate<T: Any>(f: impl Fn(&T) -> bool + Send + Sync + 'static) -> AnyPredicate {
    Arc::new(move |v: &dyn Any| v.downcast_ref::<T>().is_some_and(&f))
}
