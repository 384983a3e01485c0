//! The bulkheads' rejection: Resilience4j's `BulkheadFullException`.

use std::fmt;

/// A call was rejected because the bulkhead is full: Resilience4j's `BulkheadFullException`,
/// raised by both the semaphore and the thread-pool bulkhead.
///
/// `Display` prints Resilience4j's message: `Bulkhead 'name' is full and does not permit
/// further calls`. Carries the bulkhead's name by value (see `crate::names`), so a
/// rejection allocates nothing and touches no reference count.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BulkheadFullException {
    pub(crate) name: crate::names::Name,
}

impl BulkheadFullException {
    /// The name of the bulkhead that rejected the call (`getBulkheadName()`).
    pub fn bulkhead_name(&self) -> &str {
        self.name.as_str()
    }
}

impl fmt::Display for BulkheadFullException {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Bulkhead '{}' is full and does not permit further calls",
            self.name
        )
    }
}

impl std::error::Error for BulkheadFullException {}

/// The error of a call made through a bulkhead: rejected, or the call's own error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BulkheadError<E> {
    /// The bulkhead was full (after waiting up to `maxWaitDuration`, or with its queue full);
    /// the call did not run.
    Full(BulkheadFullException),
    /// The call ran and returned this error.
    Inner(E),
}

impl<E> BulkheadError<E> {
    /// The call's own error, or `None` when the bulkhead rejected the call.
    pub fn into_inner(self) -> Option<E> {
        match self {
            BulkheadError::Inner(e) => Some(e),
            BulkheadError::Full(_) => None,
        }
    }
    /// Whether the bulkhead rejected the call.
    pub fn is_full(&self) -> bool {
        matches!(self, BulkheadError::Full(_))
    }
    /// Converts into the caller's error type, for an `E` that can represent a rejection.
    pub fn flatten(self) -> E
    where
        E: From<BulkheadFullException>,
    {
        match self {
            BulkheadError::Inner(e) => e,
            BulkheadError::Full(f) => E::from(f),
        }
    }
}

impl<E: fmt::Display> fmt::Display for BulkheadError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BulkheadError::Full(full) => full.fmt(f),
            BulkheadError::Inner(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for BulkheadError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BulkheadError::Full(full) => Some(full),
            BulkheadError::Inner(e) => Some(e),
        }
    }
}

impl<E> From<BulkheadFullException> for BulkheadError<E> {
    fn from(full: BulkheadFullException) -> Self {
        BulkheadError::Full(full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_is_resilience4j_s() {
        let e = BulkheadFullException {
            name: crate::names::Name::new(&"backendA".into()),
        };
        assert_eq!(
            e.to_string(),
            "Bulkhead 'backendA' is full and does not permit further calls"
        );
        assert_eq!(e.bulkhead_name(), "backendA");
        let wrapped: BulkheadError<std::io::Error> = e.clone().into();
        assert!(wrapped.is_full());
        assert_eq!(wrapped.to_string(), e.to_string());
    }
}
