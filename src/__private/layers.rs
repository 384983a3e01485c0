//! The instances of a stacked fn's layers, as the stack and its drill layer see them.

use crate::bulkhead::{Bulkhead, ThreadPoolBulkhead};
use crate::ratelimiter::RateLimiter;
use crate::retry::Retry;
use crate::timelimiter::TimeLimiter;
use crate::CircuitBreaker;

/// The bulkhead layer: Resilience4j's `@Bulkhead(type = SEMAPHORE | THREADPOOL)`.
#[derive(Clone, Copy)]
pub enum BulkheadRef<'a> {
    /// `type = "SEMAPHORE"` (the default).
    Semaphore(&'a Bulkhead),
    /// `type = "THREADPOOL"`.
    ThreadPool(&'a ThreadPoolBulkhead),
}

/// The instances of a stacked fn's layers (`None`: the fn does not have that layer).
#[derive(Clone, Copy, Default)]
pub struct Layers<'a> {
    /// `#[retry]`.
    pub retry: Option<&'a Retry>,
    /// `#[circuit_breaker]`.
    pub circuit_breaker: Option<&'a CircuitBreaker>,
    /// `#[rate_limiter]`.
    pub rate_limiter: Option<&'a RateLimiter>,
    /// `#[time_limiter]`.
    pub time_limiter: Option<&'a TimeLimiter>,
    /// `#[bulkhead]`.
    pub bulkhead: Option<BulkheadRef<'a>>,
}
