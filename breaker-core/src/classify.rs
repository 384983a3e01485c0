//! Deciding whether a call's outcome is a success, a failure or ignored: Resilience4j's
//! `recordExceptions`, `ignoreExceptions`, `recordException`, `ignoreException` and
//! `recordResult` settings.
//!
//! Java matches exceptions by class; Rust errors have no class hierarchy. An [`ErrorCatalog`]
//! says which of the application's errors answer to which (Java) names, so the lists of a
//! Spring file (`recordExceptions: [java.io.IOException]`) bind to Rust error values.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

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
}

impl ErrorCatalog {
    /// An empty catalog: no name matches anything.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a matcher: errors of type `E` for which `matches` returns true answer to `name`.
    pub fn register<E: Any>(
        mut self,
        name: impl Into<String>,
        matches: impl Fn(&E) -> bool + Send + Sync + 'static,
    ) -> Self {
        let pred: AnyPredicate =
            Arc::new(move |v: &dyn Any| v.downcast_ref::<E>().is_some_and(&matches));
        Arc::make_mut(&mut self.by_name)
            .entry(name.into())
            .or_default()
            .push(pred);
        self
    }

    /// Every error of type `E` answers to `name`.
    pub fn register_type<E: Any>(self, name: impl Into<String>) -> Self {
        self.register(name, |_: &E| true)
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

    /// Whether `error` answers to any of `names`.
    pub fn matches_any(&self, names: &[String], error: &dyn Any) -> bool {
        names.iter().any(|n| {
            self.by_name
                .get(n)
                .is_some_and(|preds| preds.iter().any(|p| p(error)))
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
