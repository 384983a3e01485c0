//! Where an [`ErrorCatalog`](crate::ErrorCatalog) looks for a registered error: the value
//! itself, the library's typed wrappers around it, and the links of an error chain
//! (`Box<dyn Error>` content, then `source()` after `source()`).
//!
//! Every step is a type-id comparison; nothing allocates. The common case (the value's own
//! type is registered) costs one comparison per registered type.

use std::any::{Any, TypeId};
use std::error::Error;
use std::sync::Arc;

use crate::bulkhead::BulkheadError;
use crate::error::CallError;
use crate::ratelimiter::RateLimiterError;
use crate::retry::RetryError;
use crate::timelimiter::TimeLimiterError;

/// How many links of a `source()` chain are looked at, at most (a chain is normally 1-4
/// links; the bound keeps a pathological chain from costing more).
pub(crate) const MAX_LINKS: usize = 32;

/// A chain link seen as a registered type, if it is one.
type LinkView = for<'e> fn(&'e (dyn Error + 'static)) -> Option<&'e dyn Any>;

/// A type the catalog has a registration for.
#[derive(Clone)]
pub(crate) struct Kind {
    pub(crate) id: TypeId,
    /// A chain link as this type, if it is one (error types only).
    link: Option<LinkView>,
    /// What the library's typed wrappers of this type hold (`CallError<E>::Inner`, ...).
    unwrap: fn(&dyn Any) -> Option<&dyn Any>,
}

impl Kind {
    /// A type registered with `register` / `register_type`.
    pub(crate) fn value<E: Any>() -> Kind {
        Kind {
            id: TypeId::of::<E>(),
            link: None,
            unwrap: unwrap_typed::<E>,
        }
    }

    /// A type registered with `register_error` / `register_error_type`.
    pub(crate) fn error<E: Error + 'static>() -> Kind {
        Kind {
            link: Some(|e| e.downcast_ref::<E>().map(|e| e as &dyn Any)),
            ..Kind::value::<E>()
        }
    }

    /// The same type registered again: keeps the link view if either has one.
    pub(crate) fn merge(&mut self, other: Kind) {
        if self.link.is_none() {
            self.link = other.link;
        }
    }
}

/// The first value of a registered type on `value`'s path: the value itself, the content of
/// a library wrapper, or the first known link of the chain of a boxed error.
#[inline]
pub(crate) fn subject<'a>(kinds: &[Kind], value: &'a dyn Any) -> Option<&'a dyn Any> {
    let id = <dyn Any>::type_id(value);
    if kinds.iter().any(|k| k.id == id) {
        return Some(value);
    }
    if let Some(error) = dyn_error(value) {
        return first_known_link(kinds, error);
    }
    kinds.iter().find_map(|k| (k.unwrap)(value))
}

/// The error inside a boxed or shared `dyn Error`.
#[inline]
fn dyn_error(value: &dyn Any) -> Option<&(dyn Error + 'static)> {
    if let Some(b) = value.downcast_ref::<Box<dyn Error + Send + Sync>>() {
        return Some(&**b);
    }
    if let Some(b) = value.downcast_ref::<Box<dyn Error + Send>>() {
        return Some(&**b);
    }
    if let Some(b) = value.downcast_ref::<Box<dyn Error>>() {
        return Some(&**b);
    }
    if let Some(a) = value.downcast_ref::<Arc<dyn Error + Send + Sync>>() {
        return Some(&**a);
    }
    None
}

/// The first link of `error`'s chain (itself, then its sources) whose type is registered as
/// an error; links of unknown types (wrappers) are looked through.
fn first_known_link<'a>(kinds: &[Kind], error: &'a (dyn Error + 'static)) -> Option<&'a dyn Any> {
    let mut link = error;
    for _ in 0..MAX_LINKS {
        if let Some(known) = kinds
            .iter()
            .find_map(|k| k.link.and_then(|view| view(link)))
        {
            return Some(known);
        }
        link = link.source()?;
    }
    None
}

/// The `Inner` of one of the library's typed wrappers around `E` (or the wrapper's own
/// rejection: `CallNotPermitted`, `Timeout`, ...).
fn unwrap_typed<E: Any>(value: &dyn Any) -> Option<&dyn Any> {
    if let Some(e) = value.downcast_ref::<CallError<E>>() {
        return Some(match e {
            CallError::Inner(e) => e,
            CallError::NotPermitted(n) => n,
        });
    }
    if let Some(e) = value.downcast_ref::<RetryError<E>>() {
        return Some(match e {
            RetryError::Inner(e) => e,
            RetryError::MaxRetriesExceeded(m) => m,
            RetryError::WaitInterval(w) => w,
        });
    }
    if let Some(e) = value.downcast_ref::<TimeLimiterError<E>>() {
        return Some(match e {
            TimeLimiterError::Inner(e) => e,
            TimeLimiterError::Timeout(t) => t,
        });
    }
    if let Some(e) = value.downcast_ref::<BulkheadError<E>>() {
        return Some(match e {
            BulkheadError::Inner(e) => e,
            BulkheadError::Full(f) => f,
        });
    }
    if let Some(e) = value.downcast_ref::<RateLimiterError<E>>() {
        return Some(match e {
            RateLimiterError::Inner(e) => e,
            RateLimiterError::NotPermitted(n) => n,
        });
    }
    None
}
