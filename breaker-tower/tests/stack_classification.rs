//! Issue 23 item 1: exception names keep matching inside a tower stack. Every one of the 120
//! orders of the five layers (Retry, CircuitBreaker, RateLimiter, TimeLimiter, Bulkhead),
//! with `retryExceptions`, `ignoreExceptions` and `recordExceptions` bound through one
//! `ErrorCatalog` registration for the inner service's error type. Every layer but the
//! innermost sees tower's `BoxError`.
//!
//! Expected values are Resilience4j's: a retried ServerError is tried `maxAttempts` (3)
//! times; an ignored NotFound is not retried and not recorded (4 of them leave a breaker of
//! window 4 and threshold 50% CLOSED); with `recordExceptions` set, an unlisted error is a
//! success. A breaker inside the retry records every attempt, outside it the call once.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breaker_core::bulkhead::{Bulkhead, BulkheadRegistry};
use breaker_core::ratelimiter::{RateLimiter, RateLimiterRegistry};
use breaker_core::retry::{Retry, RetryConfig, RetryRegistry};
use breaker_core::timelimiter::{TimeLimiter, TimeLimiterRegistry};
use breaker_core::{CircuitBreaker, CircuitBreakerConfig, ErrorCatalog, Registry, State};
use breaker_tower::{
    BoxError, BulkheadLayer, ByConfig, CircuitBreakerLayer, RateLimiterLayer, RetryLayer,
    TimeLimiterLayer,
};
use tower::util::BoxCloneService;
use tower::{Layer, Service, ServiceExt};

#[derive(Debug, Clone, PartialEq)]
enum ApiError {
    Server,
    NotFound,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}
impl std::error::Error for ApiError {}

const SERVER: &str = "com.example.ServerError";
const NOT_FOUND: &str = "com.example.NotFound";
/// Requests: which answer the inner service gives.
const ASK_SERVER: u32 = 0;
const ASK_NOT_FOUND: u32 = 1;

fn catalog() -> ErrorCatalog {
    ErrorCatalog::new()
        .register_error(SERVER, |e: &ApiError| *e == ApiError::Server)
        .register_error(NOT_FOUND, |e: &ApiError| *e == ApiError::NotFound)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum L {
    Retry,
    CircuitBreaker,
    RateLimiter,
    TimeLimiter,
    Bulkhead,
}

/// Every order of the five layers, outermost first (Heap's algorithm).
fn permutations() -> Vec<[L; 5]> {
    fn heap(k: usize, a: &mut [L; 5], out: &mut Vec<[L; 5]>) {
        if k == 1 {
            out.push(*a);
            return;
        }
        for i in 0..k {
            heap(k - 1, a, out);
            let j = if k.is_multiple_of(2) { i } else { 0 };
            a.swap(j, k - 1);
        }
    }
    let mut a = [
        L::Retry,
        L::CircuitBreaker,
        L::RateLimiter,
        L::TimeLimiter,
        L::Bulkhead,
    ];
    let mut out = Vec::new();
    heap(5, &mut a, &mut out);
    out
}

struct Instances {
    retry: Retry,
    breaker: CircuitBreaker,
    limiter: RateLimiter,
    time_limiter: TimeLimiter,
    bulkhead: Bulkhead,
}

impl Instances {
    fn new(breaker: CircuitBreakerConfig, retry: RetryConfig) -> Self {
        Instances {
            retry: RetryRegistry::with_default_config(retry).retry("product"),
            breaker: Registry::with_default_config(breaker).circuit_breaker("product"),
            limiter: RateLimiterRegistry::new().rate_limiter("product"),
            time_limiter: TimeLimiterRegistry::new().time_limiter("product"),
            bulkhead: BulkheadRegistry::new().bulkhead("product"),
        }
    }
}

type Svc = BoxCloneService<u32, u32, BoxError>;

fn wrap<S>(layer: L, i: &Instances, inner: S) -> Svc
where
    S: Service<u32, Response = u32> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError> + fmt::Display + Send + Sync + 'static,
{
    match layer {
        L::Retry => BoxCloneService::new(<RetryLayer>::from_instance(i.retry.clone()).layer(inner)),
        L::CircuitBreaker => BoxCloneService::new(
            CircuitBreakerLayer::from_breaker(i.breaker.clone())
                .classifier(ByConfig)
                .layer(inner),
        ),
        L::RateLimiter => {
            BoxCloneService::new(<RateLimiterLayer>::from_instance(i.limiter.clone()).layer(inner))
        }
        L::TimeLimiter => BoxCloneService::new(
            <TimeLimiterLayer>::from_instance(i.time_limiter.clone()).layer(inner),
        ),
        L::Bulkhead => {
            BoxCloneService::new(<BulkheadLayer>::from_instance(i.bulkhead.clone()).layer(inner))
        }
    }
}

/// The stack in `order` (outermost first) around a service that answers `ASK_SERVER` with
/// `ApiError::Server`, `ASK_NOT_FOUND` with `ApiError::NotFound`, counting its calls.
fn stack(order: [L; 5], i: &Instances, calls: Arc<AtomicU32>) -> Svc {
    let inner = tower::service_fn(move |req: u32| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move {
            match req {
                ASK_SERVER => Err(ApiError::Server),
                ASK_NOT_FOUND => Err(ApiError::NotFound),
                n => Ok(n),
            }
        }
    });
    let mut svc = wrap(order[4], i, inner);
    for layer in order[..4].iter().rev() {
        svc = wrap(*layer, i, svc);
    }
    svc
}

async fn call(svc: &mut Svc, req: u32) -> Result<u32, BoxError> {
    svc.ready().await?.call(req).await
}

fn api_error(e: &BoxError) -> Option<&ApiError> {
    e.downcast_ref::<ApiError>()
}

fn position(order: &[L; 5], l: L) -> usize {
    order.iter().position(|x| *x == l).unwrap()
}

fn retry_config(ignore: bool) -> RetryConfig {
    let b = RetryConfig::builder()
        .max_attempts(3)
        .wait_duration(Duration::from_millis(10))
        .retry_exceptions([SERVER])
        .error_catalog(catalog());
    let b = if ignore {
        b.ignore_exceptions([NOT_FOUND])
    } else {
        b
    };
    b.build().unwrap()
}

#[tokio::test(start_paused = true)]
async fn retried_ignored_and_recorded_names_match_in_every_order_of_the_five_layers() {
    let orders = permutations();
    assert_eq!(orders.len(), 120);
    for order in orders {
        let breaker_inside_retry = position(&order, L::CircuitBreaker) > position(&order, L::Retry);
        let per_attempt = if breaker_inside_retry { 3 } else { 1 };

        // retryExceptions [ServerError]: one ServerError is tried 3 times.
        let breaker = CircuitBreakerConfig::builder()
            .sliding_window_size(10)
            .minimum_number_of_calls(10)
            .ignore_exceptions([NOT_FOUND])
            .error_catalog(catalog())
            .build()
            .unwrap();
        let i = Instances::new(breaker, retry_config(true));
        let calls = Arc::new(AtomicU32::new(0));
        let mut svc = stack(order, &i, calls.clone());
        let e = call(&mut svc, ASK_SERVER).await.unwrap_err();
        assert_eq!(api_error(&e), Some(&ApiError::Server), "{order:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 3, "{order:?}");
        let m = i.retry.metrics();
        assert_eq!(m.number_of_failed_calls_with_retry_attempt, 1, "{order:?}");
        assert_eq!(
            i.breaker.metrics().number_of_failed_calls,
            per_attempt,
            "{order:?}"
        );

        // ignoreExceptions [NotFound]: 4 NotFound answers are tried once each and ignored;
        // a breaker of window 4, threshold 50% stays CLOSED.
        let breaker = CircuitBreakerConfig::builder()
            .sliding_window_size(4)
            .minimum_number_of_calls(4)
            .failure_rate_threshold(50.0)
            .ignore_exceptions([NOT_FOUND])
            .error_catalog(catalog())
            .build()
            .unwrap();
        let i = Instances::new(breaker, retry_config(true));
        let calls = Arc::new(AtomicU32::new(0));
        let mut svc = stack(order, &i, calls.clone());
        for _ in 0..4 {
            let e = call(&mut svc, ASK_NOT_FOUND).await.unwrap_err();
            assert_eq!(api_error(&e), Some(&ApiError::NotFound), "{order:?}");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 4, "{order:?}");
        assert_eq!(
            i.retry
                .metrics()
                .number_of_failed_calls_without_retry_attempt,
            4,
            "{order:?}"
        );
        let m = i.breaker.metrics();
        assert_eq!(i.breaker.state(), State::Closed, "{order:?}");
        assert_eq!(m.number_of_buffered_calls, 0, "{order:?}");

        // recordExceptions [ServerError]: a NotFound is a success, a ServerError a failure
        // (per attempt inside the retry); the retry does not retry the unlisted NotFound.
        let breaker = CircuitBreakerConfig::builder()
            .sliding_window_size(10)
            .minimum_number_of_calls(10)
            .record_exceptions([SERVER])
            .error_catalog(catalog())
            .build()
            .unwrap();
        let i = Instances::new(breaker, retry_config(false));
        let calls = Arc::new(AtomicU32::new(0));
        let mut svc = stack(order, &i, calls.clone());
        for req in [ASK_NOT_FOUND, ASK_NOT_FOUND, ASK_SERVER] {
            call(&mut svc, req).await.unwrap_err();
        }
        assert_eq!(call(&mut svc, 7).await.unwrap(), 7, "{order:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 2 + 3 + 1, "{order:?}");
        let m = i.breaker.metrics();
        assert_eq!(m.number_of_successful_calls, 3, "{order:?}");
        assert_eq!(m.number_of_failed_calls, per_attempt, "{order:?}");
    }
}
