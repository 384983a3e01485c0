//! The stack's rejections as a drill injects them: the values the layers themselves return,
//! so fallbacks, exception lists and logs cannot tell them from real ones (only the drill's
//! counters and events can).

use std::sync::Arc;
use std::time::Duration;

use crate::bulkhead::BulkheadFullException;
use crate::names::Name;
use crate::ratelimiter::RequestNotPermitted;
use crate::timelimiter::Timeout;
use crate::{CallNotPermitted, State};

/// `CallNotPermittedException` of the breaker `name`, as an OPEN breaker rejects at
/// `at_nanos` (epoch ns; no known deadline).
pub fn call_not_permitted(name: &str, at_nanos: u64) -> CallNotPermitted {
    CallNotPermitted {
        name: Name::new(&Arc::from(name)),
        state: State::Open,
        until: 0,
        at: at_nanos,
    }
}

/// The `TimeoutException` of the time limiter `name` after `timeout`.
pub fn timeout(name: &str, timeout: Duration) -> Timeout {
    Timeout {
        name: Arc::from(name),
        timeout,
    }
}

/// `BulkheadFullException` of the bulkhead `name`.
pub fn bulkhead_full(name: &str) -> BulkheadFullException {
    BulkheadFullException {
        name: Name::new(&Arc::from(name)),
    }
}

/// `RequestNotPermitted` of the rate limiter `name`.
pub fn request_not_permitted(name: &str) -> RequestNotPermitted {
    RequestNotPermitted {
        name: Name::new(&Arc::from(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injected_rejections_read_as_the_real_ones() {
        // Resilience4j's messages.
        assert_eq!(
            call_not_permitted("paymentService", 0).to_string(),
            "CircuitBreaker 'paymentService' is OPEN and does not permit further calls"
        );
        assert_eq!(
            bulkhead_full("b").to_string(),
            "Bulkhead 'b' is full and does not permit further calls"
        );
        assert_eq!(
            request_not_permitted("r").to_string(),
            "RateLimiter 'r' does not permit further calls"
        );
        assert_eq!(
            timeout("t", Duration::from_secs(1)).time_limiter_name(),
            "t"
        );
    }
}
