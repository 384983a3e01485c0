//! Issue 23 item 1 for stacked attributes: `#[retry] #[circuit_breaker] #[rate_limiter]
//! #[time_limiter] #[bulkhead]` on one fn, nested in each of the 120 orders the aspect-order
//! properties can give (the file is rewritten and reloaded for each), with
//! `retryExceptions`, `ignoreExceptions` and `recordExceptions` bound by one catalog
//! registration of the fn's error type. Expected values as in
//! `breaker-tower/tests/stack_classification.rs` (Resilience4j's rules, by arithmetic).
//!
//! One test in its own binary: it initialises the process-global registries.

use std::sync::atomic::{AtomicU32, Ordering};

use resilience4rs::bulkhead::BulkheadFullException;
use resilience4rs::ratelimiter::RequestNotPermitted;
use resilience4rs::retry::MaxRetriesExceeded;
use resilience4rs::stack::Aspect;
use resilience4rs::timelimiter::Timeout;
use resilience4rs::{
    bulkhead, circuit_breaker, rate_limiter, retry, time_limiter, CallNotPermitted, ErrorCatalog,
    State,
};

#[derive(Debug, Clone, PartialEq)]
enum ApiError {
    Server,
    NotFound,
    Rejected(String),
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}
impl std::error::Error for ApiError {}

macro_rules! rejected_from {
    ($($t:ty),*) => {$(
        impl From<$t> for ApiError {
            fn from(e: $t) -> Self {
                ApiError::Rejected(e.to_string())
            }
        }
    )*};
}
rejected_from!(
    CallNotPermitted,
    Timeout,
    BulkheadFullException,
    RequestNotPermitted,
    MaxRetriesExceeded
);

const ASK_SERVER: u32 = 0;
const ASK_NOT_FOUND: u32 = 1;

fn answer(req: u32) -> Result<u32, ApiError> {
    match req {
        ASK_SERVER => Err(ApiError::Server),
        ASK_NOT_FOUND => Err(ApiError::NotFound),
        n => Ok(n),
    }
}

static RETRIED: AtomicU32 = AtomicU32::new(0);
static IGNORED: AtomicU32 = AtomicU32::new(0);
static RECORDED: AtomicU32 = AtomicU32::new(0);

// Three textual orders of the attributes; the nesting is the file's in every case.
#[retry(name = "retried")]
#[circuit_breaker(name = "retried")]
#[rate_limiter(name = "retried")]
#[time_limiter(name = "retried")]
#[bulkhead(name = "retried")]
async fn retried(req: u32) -> Result<u32, ApiError> {
    RETRIED.fetch_add(1, Ordering::SeqCst);
    answer(req)
}

#[bulkhead(name = "ignored")]
#[time_limiter(name = "ignored")]
#[rate_limiter(name = "ignored")]
#[circuit_breaker(name = "ignored")]
#[retry(name = "ignored")]
async fn ignored(req: u32) -> Result<u32, ApiError> {
    IGNORED.fetch_add(1, Ordering::SeqCst);
    answer(req)
}

#[time_limiter(name = "recorded")]
#[retry(name = "recorded")]
#[bulkhead(name = "recorded")]
#[circuit_breaker(name = "recorded")]
#[rate_limiter(name = "recorded")]
async fn recorded(req: u32) -> Result<u32, ApiError> {
    RECORDED.fetch_add(1, Ordering::SeqCst);
    answer(req)
}

/// The file, with the aspect orders that nest `order` (outermost first).
fn yaml(order: &[Aspect; 5]) -> String {
    let value = |a: Aspect| 10 + order.iter().position(|x| *x == a).unwrap();
    format!(
        r#"
resilience4j:
  circuitbreaker:
    circuitBreakerAspectOrder: {cb}
    instances:
      retried: {{slidingWindowSize: 10, minimumNumberOfCalls: 10, ignoreExceptions: [com.example.NotFound]}}
      ignored: {{slidingWindowSize: 4, minimumNumberOfCalls: 4, failureRateThreshold: 50, ignoreExceptions: [com.example.NotFound]}}
      recorded: {{slidingWindowSize: 10, minimumNumberOfCalls: 10, recordExceptions: [com.example.ServerError]}}
  retry:
    retryAspectOrder: {retry}
    configs:
      default: {{maxAttempts: 3, waitDuration: 1ms, retryExceptions: [com.example.ServerError]}}
    instances:
      retried: {{ignoreExceptions: [com.example.NotFound]}}
      ignored: {{ignoreExceptions: [com.example.NotFound]}}
      recorded: {{}}
  ratelimiter:
    rateLimiterAspectOrder: {rl}
  timelimiter:
    timeLimiterAspectOrder: {tl}
  bulkhead:
    bulkheadAspectOrder: {bh}
"#,
        cb = value(Aspect::CircuitBreaker),
        retry = value(Aspect::Retry),
        rl = value(Aspect::RateLimiter),
        tl = value(Aspect::TimeLimiter),
        bh = value(Aspect::Bulkhead),
    )
}

fn permutations() -> Vec<[Aspect; 5]> {
    let all = [
        Aspect::Retry,
        Aspect::CircuitBreaker,
        Aspect::RateLimiter,
        Aspect::TimeLimiter,
        Aspect::Bulkhead,
    ];
    let mut out = Vec::new();
    for a in 0..5 {
        for b in 0..5 {
            for c in 0..5 {
                for d in 0..5 {
                    for e in 0..5 {
                        let idx = [a, b, c, d, e];
                        let mut seen = [false; 5];
                        if idx.iter().all(|&i| !std::mem::replace(&mut seen[i], true)) {
                            out.push(idx.map(|i| all[i]));
                        }
                    }
                }
            }
        }
    }
    out
}

#[tokio::test]
async fn retried_ignored_and_recorded_names_match_in_every_nesting_of_the_attributes() {
    let catalog = ErrorCatalog::new()
        .register_error("com.example.ServerError", |e: &ApiError| {
            *e == ApiError::Server
        })
        .register_error("com.example.NotFound", |e: &ApiError| {
            *e == ApiError::NotFound
        });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    let orders = permutations();
    assert_eq!(orders.len(), 120);
    std::fs::write(&path, yaml(&orders[0])).unwrap();
    let live = resilience4rs::init_from_file(&path, catalog).unwrap();
    let breakers = resilience4rs::global();
    let retries = &resilience4rs::global_modules().retry;

    for order in orders {
        std::fs::write(&path, yaml(&order)).unwrap();
        live.reload().unwrap();
        assert_eq!(resilience4rs::global_stack_order().outermost_first(), order);
        let cb_at = order.iter().position(|a| *a == Aspect::CircuitBreaker);
        let retry_at = order.iter().position(|a| *a == Aspect::Retry);
        let per_attempt = if cb_at > retry_at { 3 } else { 1 };

        // retryExceptions [ServerError]: tried 3 times.
        let breaker = breakers.circuit_breaker("retried");
        breaker.reset();
        let before = RETRIED.load(Ordering::SeqCst);
        let failed_before = retries
            .retry("retried")
            .metrics()
            .number_of_failed_calls_with_retry_attempt;
        assert_eq!(
            retried(ASK_SERVER).await,
            Err(ApiError::Server),
            "{order:?}"
        );
        assert_eq!(RETRIED.load(Ordering::SeqCst) - before, 3, "{order:?}");
        let failed = retries
            .retry("retried")
            .metrics()
            .number_of_failed_calls_with_retry_attempt;
        assert_eq!(failed - failed_before, 1, "{order:?}");
        assert_eq!(
            breaker.metrics().number_of_failed_calls,
            per_attempt,
            "{order:?}"
        );

        // ignoreExceptions [NotFound]: 4 answers, each tried once, the breaker CLOSED.
        let breaker = breakers.circuit_breaker("ignored");
        breaker.reset();
        let before = IGNORED.load(Ordering::SeqCst);
        for _ in 0..4 {
            assert_eq!(ignored(ASK_NOT_FOUND).await, Err(ApiError::NotFound));
        }
        assert_eq!(IGNORED.load(Ordering::SeqCst) - before, 4, "{order:?}");
        assert_eq!(breaker.state(), State::Closed, "{order:?}");
        assert_eq!(breaker.metrics().number_of_buffered_calls, 0, "{order:?}");

        // recordExceptions [ServerError]: NotFound a success, ServerError a failure.
        let breaker = breakers.circuit_breaker("recorded");
        breaker.reset();
        let before = RECORDED.load(Ordering::SeqCst);
        for req in [ASK_NOT_FOUND, ASK_NOT_FOUND, ASK_SERVER] {
            assert!(recorded(req).await.is_err());
        }
        assert_eq!(recorded(7).await, Ok(7));
        assert_eq!(RECORDED.load(Ordering::SeqCst) - before, 6, "{order:?}");
        let m = breaker.metrics();
        assert_eq!(m.number_of_successful_calls, 3, "{order:?}");
        assert_eq!(m.number_of_failed_calls, per_attempt, "{order:?}");
    }
}
