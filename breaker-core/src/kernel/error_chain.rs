//! Where an [`ErrorCatalog`](crate::ErrorCatalog) looks for a registered error: the value
//! itself, the library's typed wrappers around it, and the links of an error chain
//! (`Box<dyn Error>` content, then `source()` after `source()`).
//!
//! Nothing allocates. What a value is (a registered type, a library wrapper of one, or
//! neither) takes one binary search over type ids; only a boxed error's chain is walked,
//! one type-id comparison per link and registered error type.

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
/// What one of the library's typed wrappers holds.
type Unwrap = fn(&dyn Any) -> Option<&dyn Any>;

/// A type the catalog has a registration for.
#[derive(Clone)]
pub(crate) struct Kind {
    id: TypeId,
    /// A chain link as this type, if it is one (error types only).
    link: Option<LinkView>,
    /// The library's typed wrappers of this type (`CallError<E>`, ...), by type id.
    wrappers: [(TypeId, Unwrap); 5],
}

impl Kind {
    /// A type registered with `register` / `register_type`.
    pub(crate) fn value<E: Any>() -> Kind {
        Kind {
            id: TypeId::of::<E>(),
            link: None,
            wrappers: [
                (TypeId::of::<CallError<E>>(), unwrap_call::<E>),
                (TypeId::of::<RetryError<E>>(), unwrap_retry::<E>),
                (
                    TypeId::of::<TimeLimiterError<E>>(),
                    unwrap_time_limiter::<E>,
                ),
                (TypeId::of::<BulkheadError<E>>(), unwrap_bulkhead::<E>),
                (
                    TypeId::of::<RateLimiterError<E>>(),
                    unwrap_rate_limiter::<E>,
                ),
            ],
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

/// What a value's type is to the catalog.
#[derive(Clone, Copy)]
enum Role {
    /// A registered type.
    Known,
    /// A library wrapper of a registered type.
    Wrapper(Unwrap),
}

/// Every registered type and every library wrapper of one, sorted by type id: one binary
/// search tells what a value is.
#[derive(Clone, Default)]
pub(crate) struct Kinds {
    kinds: Vec<Kind>,
    index: Vec<(TypeId, Role)>,
}

impl Kinds {
    pub(crate) fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Adds `kind` (or merges it into the same type's registration).
    pub(crate) fn add(&mut self, kind: Kind) {
        match self.kinds.iter_mut().find(|k| k.id == kind.id) {
            // An error registration of a type registered as a plain value too lets every
            // matcher of that type see it in a chain.
            Some(known) => known.merge(kind),
            None => {
                self.index.push((kind.id, Role::Known));
                self.index
                    .extend(kind.wrappers.iter().map(|&(id, f)| (id, Role::Wrapper(f))));
                self.index.sort_unstable_by_key(|&(id, _)| id);
                self.kinds.push(kind);
            }
        }
    }

    /// The first value of a registered type on `value`'s path: the value itself, the content
    /// of a library wrapper, or the first known link of the chain of a boxed error.
    #[inline]
    pub(crate) fn subject<'a>(&self, value: &'a dyn Any) -> Option<&'a dyn Any> {
        let id = <dyn Any>::type_id(value);
        // The common case first: the value's own type is registered (a few comparisons).
        if self.kinds.iter().any(|k| k.id == id) {
            return Some(value);
        }
        if let Ok(i) = self.index.binary_search_by_key(&id, |&(id, _)| id) {
            return match self.index[i].1 {
                Role::Known => Some(value),
                Role::Wrapper(unwrap) => unwrap(value),
            };
        }
        let error = dyn_error(value)?;
        self.first_known_link(error)
    }

    /// The first link of `error`'s chain (itself, then its sources) whose type is registered
    /// as an error; links of unknown types (wrappers) are looked through.
    fn first_known_link<'a>(&self, error: &'a (dyn Error + 'static)) -> Option<&'a dyn Any> {
        let mut link = error;
        for _ in 0..MAX_LINKS {
            if let Some(known) = self
                .kinds
                .iter()
                .find_map(|k| k.link.and_then(|view| view(link)))
            {
                return Some(known);
            }
            link = link.source()?;
        }
        None
    }
}

/// The error inside a boxed or shared `dyn Error`.
#[inline]
pub(crate) fn dyn_error(value: &dyn Any) -> Option<&(dyn Error + 'static)> {
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

fn unwrap_call<E: Any>(value: &dyn Any) -> Option<&dyn Any> {
    value.downcast_ref::<CallError<E>>().map(|e| match e {
        CallError::Inner(e) => e as &dyn Any,
        CallError::NotPermitted(n) => n,
    })
}

fn unwrap_retry<E: Any>(value: &dyn Any) -> Option<&dyn Any> {
    value.downcast_ref::<RetryError<E>>().map(|e| match e {
        RetryError::Inner(e) => e as &dyn Any,
        RetryError::MaxRetriesExceeded(m) => m,
        RetryError::WaitInterval(w) => w,
    })
}

fn unwrap_time_limiter<E: Any>(value: &dyn Any) -> Option<&dyn Any> {
    value
        .downcast_ref::<TimeLimiterError<E>>()
        .map(|e| match e {
            TimeLimiterError::Inner(e) => e as &dyn Any,
            TimeLimiterError::Timeout(t) => t,
        })
}

fn unwrap_bulkhead<E: Any>(value: &dyn Any) -> Option<&dyn Any> {
    value.downcast_ref::<BulkheadError<E>>().map(|e| match e {
        BulkheadError::Inner(e) => e as &dyn Any,
        BulkheadError::Full(f) => f,
    })
}

fn unwrap_rate_limiter<E: Any>(value: &dyn Any) -> Option<&dyn Any> {
    value
        .downcast_ref::<RateLimiterError<E>>()
        .map(|e| match e {
            RateLimiterError::Inner(e) => e as &dyn Any,
            RateLimiterError::NotPermitted(n) => n,
        })
}
