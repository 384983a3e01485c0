//! The rate limiter's rejection: Resilience4j's `RequestNotPermitted`.

use std::fmt;

/// A call was refused by a rate limiter: Resilience4j's `RequestNotPermitted`.
///
/// `Display` prints Resilience4j's message: `RateLimiter 'name' does not permit further
/// calls`. Carries the limiter's name by value (see `crate::names`), so a
/// rejection allocates nothing and touches no reference count.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestNotPermitted {
    pub(crate) name: crate::names::Name,
}

impl RequestNotPermitted {
    /// The name of the limiter that refused the call (`getCausingRateLimiterName()`).
    pub fn rate_limiter_name(&self) -> &str {
        self.name.as_str()
    }
}

impl fmt::Display for RequestNotPermitted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RateLimiter '{}' does not permit further calls",
            self.name
        )
    }
}

impl std::error::Error for RequestNotPermitted {}

/// The error of a call made through a rate limiter: refused, or the call's own error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RateLimiterError<E> {
    /// The limiter refused the call (no permit within `timeoutDuration`); it did not run.
    NotPermitted(RequestNotPermitted),
    /// The call ran and returned this error.
    Inner(E),
}

impl<E> RateLimiterError<E> {
    /// The call's own error, or `None` when the limiter refused the call.
    pub fn into_inner(self) -> Option<E> {
        match self {
            RateLimiterError::Inner(e) => Some(e),
            RateLimiterError::NotPermitted(_) => None,
        }
    }
    /// Whether the limiter refused the call.
    pub fn is_not_permitted(&self) -> bool {
        matches!(self, RateLimiterError::NotPermitted(_))
    }
    /// Converts into the caller's error type, for an `E` that can represent a refusal.
    pub fn flatten(self) -> E
    where
        E: From<RequestNotPermitted>,
    {
        match self {
            RateLimiterError::Inner(e) => e,
            RateLimiterError::NotPermitted(n) => E::from(n),
        }
    }
}

impl<E: fmt::Display> fmt::Display for RateLimiterError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RateLimiterError::NotPermitted(n) => n.fmt(f),
            RateLimiterError::Inner(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for RateLimiterError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RateLimiterError::NotPermitted(n) => Some(n),
            RateLimiterError::Inner(e) => Some(e),
        }
    }
}

impl<E> From<RequestNotPermitted> for RateLimiterError<E> {
    fn from(n: RequestNotPermitted) -> Self {
        RateLimiterError::NotPermitted(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_is_resilience4j_s() {
        let e = RequestNotPermitted {
            name: crate::names::Name::new(&"backendA".into()),
        };
        assert_eq!(
            e.to_string(),
            "RateLimiter 'backendA' does not permit further calls"
        );
        assert_eq!(e.rate_limiter_name(), "backendA");
    }
}
