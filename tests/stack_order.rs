//! Stacked attributes without `registry = ...` use the global registries of every module,
//! loaded from one Spring file, and nest by its aspect orders at run time: a reload that
//! makes the breaker outer changes what the breaker records on the next call.
//!
//! One test in its own binary: it initialises the process-global registries.

use std::sync::atomic::{AtomicUsize, Ordering};

use resilience4rs::stack::Aspect;
use resilience4rs::{circuit_breaker, retry, CallNotPermitted, ErrorCatalog, StackOrder};

const BASE: &str = r#"
resilience4j:
  circuitbreaker:
    instances:
      ordered:
        slidingWindowSize: 100
        minimumNumberOfCalls: 100
  retry:
    instances:
      ordered:
        maxAttempts: 3
        waitDuration: 1ms
"#;

/// `BASE` with the breaker outer: `CircuitBreaker(Retry(fn))`.
const SWAPPED: &str = r#"
resilience4j:
  circuitbreaker:
    circuitBreakerAspectOrder: 5
    instances:
      ordered:
        slidingWindowSize: 100
        minimumNumberOfCalls: 100
  retry:
    retryAspectOrder: 10
    instances:
      ordered:
        maxAttempts: 3
        waitDuration: 1ms
"#;

#[derive(Debug, PartialEq)]
enum SvcError {
    Down,
    Rejected,
}

impl std::fmt::Display for SvcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError::Rejected
    }
}

impl From<resilience4rs::retry::MaxRetriesExceeded> for SvcError {
    fn from(_: resilience4rs::retry::MaxRetriesExceeded) -> Self {
        SvcError::Rejected
    }
}

static BODY: AtomicUsize = AtomicUsize::new(0);

#[retry(name = "ordered")]
#[circuit_breaker(name = "ordered")]
async fn ordered() -> Result<u32, SvcError> {
    BODY.fetch_add(1, Ordering::SeqCst);
    Err(SvcError::Down)
}

#[tokio::test]
async fn the_files_aspect_orders_decide_the_nesting_at_run_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    std::fs::write(&path, BASE).unwrap();
    let live = resilience4rs::init_from_file(&path, ErrorCatalog::new()).unwrap();
    assert_eq!(resilience4rs::global_stack_order(), StackOrder::DEFAULT);
    let breaker = resilience4rs::global().circuit_breaker("ordered");
    let retry = resilience4rs::global_modules().retry.retry("ordered");
    assert_eq!(retry.config().max_attempts(), 3);

    // Retry(CircuitBreaker(fn)): the breaker records each of the 3 attempts.
    assert_eq!(ordered().await, Err(SvcError::Down));
    assert_eq!(BODY.load(Ordering::SeqCst), 3);
    assert_eq!(breaker.metrics().number_of_failed_calls, 3);

    // The Spring docs' advice: a larger retryAspectOrder makes the retry the inner layer,
    // so the breaker sees only the outcome of all attempts.
    std::fs::write(&path, SWAPPED).unwrap();
    live.reload().unwrap();
    let order = resilience4rs::global_stack_order().outermost_first();
    assert_eq!(&order[..2], &[Aspect::CircuitBreaker, Aspect::Retry]);

    assert_eq!(ordered().await, Err(SvcError::Down));
    assert_eq!(BODY.load(Ordering::SeqCst), 6);
    assert_eq!(breaker.metrics().number_of_failed_calls, 4);
}
