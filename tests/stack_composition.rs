//! The composition table of the integration spec (§2.3): one test per row, through stacked
//! attributes with the default aspect order `Retry(CircuitBreaker(RateLimiter(TimeLimiter(
//! Bulkhead(fn)))))`. The settings come from a Spring file (one instance per row); the
//! expected counts follow from the spec's rules and the settings, by arithmetic.
//!
//! Each row's fn names its registries with `registry = ...`, so the tests run in parallel and
//! do not touch the global registries (the aspect orders are the global default here; their
//! run-time effect is in `stack_order.rs`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use resilience4rs::bulkhead::BulkheadFullException;
use resilience4rs::ratelimiter::RequestNotPermitted;
use resilience4rs::retry::MaxRetriesExceeded;
use resilience4rs::timelimiter::Timeout;
use resilience4rs::{
    bulkhead, circuit_breaker, rate_limiter, retry, time_limiter, CallNotPermitted, LiveConfig,
    SpringConfig, StackError, State,
};

const YAML: &str = r#"
resilience4j:
  circuitbreaker:
    configs:
      default:
        slidingWindowType: COUNT_BASED
        slidingWindowSize: 100
        minimumNumberOfCalls: 100
        waitDurationInOpenState: 1h
    instances:
      row1:
        slidingWindowSize: 2
        minimumNumberOfCalls: 2
        failureRateThreshold: 50
      row2: {}
      row2open: {}
      row3: {}
      row4: {}
      row5: {}
      row6: {}
      row7: {}
  retry:
    configs:
      default:
        maxAttempts: 4
        waitDuration: 1ms
    instances:
      row1: {}
      row2: {}
      row2open: {}
      row3: {}
      row4: {}
  ratelimiter:
    configs:
      default:
        limitForPeriod: 1
        limitRefreshPeriod: 1h
        timeoutDuration: 0
    instances:
      row5: {}
      row6: {}
  timelimiter:
    instances:
      row7:
        timeoutDuration: 50ms
  thread-pool-bulkhead:
    instances:
      row9:
        maxThreadPoolSize: 1
        coreThreadPoolSize: 1
        queueCapacity: 1
"#;

static LIVE: LazyLock<LiveConfig> = LazyLock::new(|| {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("stack_composition.yml");
    std::fs::write(&path, YAML).expect("writable target dir");
    SpringConfig::file(&path).live().expect("valid config")
});

/// The fn's own error, able to carry every rejection (for layers without a fallback).
#[derive(Debug, Clone, PartialEq)]
pub enum PayError {
    Io(&'static str),
    Rejected(String),
}

impl std::fmt::Display for PayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PayError::Io(m) => write!(f, "IOException: {m}"),
            PayError::Rejected(m) => f.write_str(m),
        }
    }
}

macro_rules! rejected_from {
    ($($t:ty),*) => {$(
        impl From<$t> for PayError {
            fn from(e: $t) -> Self {
                PayError::Rejected(e.to_string())
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

/// What a fallback was handed, as text: `Io`, or the rejection's Resilience4j message.
fn seen(e: &StackError<PayError>) -> String {
    match e {
        StackError::Inner(PayError::Io(_)) => "Io".to_string(),
        other => other.to_string(),
    }
}

// --- row 1: @Retry(fb) + @CircuitBreaker, the method keeps throwing ---------------------------

static ROW1_BODY: AtomicUsize = AtomicUsize::new(0);
static ROW1_FB: Mutex<Vec<String>> = Mutex::new(Vec::new());

// The textual order is not the nesting: the breaker is written first and still sits inside.
#[circuit_breaker(name = "row1", registry = LIVE.registry())]
#[retry(name = "row1", fallback = "row1_fb", registry = LIVE.module_registries().retry)]
async fn row1() -> Result<&'static str, PayError> {
    ROW1_BODY.fetch_add(1, Ordering::SeqCst);
    Err(PayError::Io("down"))
}

async fn row1_fb(error: StackError<PayError>) -> Result<&'static str, PayError> {
    ROW1_FB.lock().unwrap().push(seen(&error));
    Ok("fallback")
}

#[tokio::test]
async fn row1_retry_fallback_sees_the_last_error_and_the_breaker_records_every_attempt() {
    assert_eq!(row1().await, Ok("fallback"));
    // maxAttempts 4: attempts 1 and 2 reach the body and fill the breaker's window of 2
    // (100% >= 50%: OPEN); attempts 3 and 4 are rejected, and the rejection is retried too.
    assert_eq!(ROW1_BODY.load(Ordering::SeqCst), 2);
    let breaker = LIVE.registry().circuit_breaker("row1");
    assert_eq!(breaker.state(), State::Open);
    let m = breaker.metrics();
    assert_eq!(m.number_of_failed_calls, 2);
    assert_eq!(m.number_of_not_permitted_calls, 2);
    // The fallback ran once, after the last attempt, with the last error: the rejection.
    assert_eq!(
        *ROW1_FB.lock().unwrap(),
        ["CircuitBreaker 'row1' is OPEN and does not permit further calls"]
    );
    let r = LIVE.module_registries().retry.retry("row1").metrics();
    assert_eq!(r.number_of_failed_calls_with_retry_attempt, 1);
}

// --- row 2: @Retry + @CircuitBreaker(fb) ----------------------------------------------------

static ROW2_BODY: AtomicUsize = AtomicUsize::new(0);
static ROW2_FB: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[retry(name = "row2", registry = LIVE.module_registries().retry)]
#[circuit_breaker(name = "row2", fallback = "row2_fb", registry = LIVE.registry())]
async fn row2() -> Result<&'static str, PayError> {
    ROW2_BODY.fetch_add(1, Ordering::SeqCst);
    Err(PayError::Io("down"))
}

async fn row2_fb(error: StackError<PayError>) -> Result<&'static str, PayError> {
    ROW2_FB.lock().unwrap().push(seen(&error));
    Ok("fallback")
}

#[tokio::test]
async fn row2_breaker_fallback_makes_the_retry_see_a_success() {
    assert_eq!(row2().await, Ok("fallback"));
    // The breaker's fallback answered attempt 1: no retries at all.
    assert_eq!(ROW2_BODY.load(Ordering::SeqCst), 1);
    assert_eq!(*ROW2_FB.lock().unwrap(), ["Io"]);
    let breaker = LIVE.registry().circuit_breaker("row2");
    assert_eq!(breaker.metrics().number_of_failed_calls, 1);
    let r = LIVE.module_registries().retry.retry("row2").metrics();
    assert_eq!(r.number_of_successful_calls_without_retry_attempt, 1);
    assert_eq!(r.number_of_failed_calls_with_retry_attempt, 0);
}

static ROW2_OPEN_BODY: AtomicUsize = AtomicUsize::new(0);
static ROW2_OPEN_FB: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[retry(name = "row2open", registry = LIVE.module_registries().retry)]
#[circuit_breaker(name = "row2open", fallback = "row2_open_fb", registry = LIVE.registry())]
async fn row2_open() -> Result<&'static str, PayError> {
    ROW2_OPEN_BODY.fetch_add(1, Ordering::SeqCst);
    Err(PayError::Io("down"))
}

async fn row2_open_fb(error: StackError<PayError>) -> Result<&'static str, PayError> {
    ROW2_OPEN_FB.lock().unwrap().push(seen(&error));
    Ok("fallback")
}

#[tokio::test]
async fn row2_while_open_the_breaker_fallback_receives_call_not_permitted() {
    let breaker = LIVE.registry().circuit_breaker("row2open");
    breaker.transition_to_open_state().unwrap();
    assert_eq!(row2_open().await, Ok("fallback"));
    assert_eq!(ROW2_OPEN_BODY.load(Ordering::SeqCst), 0);
    assert_eq!(
        *ROW2_OPEN_FB.lock().unwrap(),
        ["CircuitBreaker 'row2open' is OPEN and does not permit further calls"]
    );
}

// --- row 3: @Retry(fb) + @CircuitBreaker(fb) --------------------------------------------------

static ROW3_BODY: AtomicUsize = AtomicUsize::new(0);
static ROW3_RETRY_FB: AtomicUsize = AtomicUsize::new(0);
static ROW3_CB_FB: AtomicUsize = AtomicUsize::new(0);

#[retry(name = "row3", fallback = "row3_retry_fb", registry = LIVE.module_registries().retry)]
#[circuit_breaker(name = "row3", fallback = "row3_cb_fb", registry = LIVE.registry())]
async fn row3() -> Result<&'static str, PayError> {
    ROW3_BODY.fetch_add(1, Ordering::SeqCst);
    Err(PayError::Io("down"))
}

async fn row3_retry_fb(_error: StackError<PayError>) -> Result<&'static str, PayError> {
    ROW3_RETRY_FB.fetch_add(1, Ordering::SeqCst);
    Ok("retry fallback")
}

async fn row3_cb_fb(_error: StackError<PayError>) -> Result<&'static str, PayError> {
    ROW3_CB_FB.fetch_add(1, Ordering::SeqCst);
    Ok("breaker fallback")
}

#[tokio::test]
async fn row3_the_innermost_fallback_answers_and_the_retry_fallback_never_runs() {
    assert_eq!(row3().await, Ok("breaker fallback"));
    assert_eq!(ROW3_BODY.load(Ordering::SeqCst), 1);
    assert_eq!(ROW3_CB_FB.load(Ordering::SeqCst), 1);
    assert_eq!(ROW3_RETRY_FB.load(Ordering::SeqCst), 0);
}

// --- row 4: @Retry(fb) + @CircuitBreaker(fbOpen(CallNotPermittedException)) ------------------

static ROW4_BODY: AtomicUsize = AtomicUsize::new(0);
static ROW4_RETRY_FB: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[retry(name = "row4", fallback = "row4_retry_fb", registry = LIVE.module_registries().retry)]
#[circuit_breaker(name = "row4", fallback = "row4_fb_open", registry = LIVE.registry())]
async fn row4() -> Result<&'static str, PayError> {
    ROW4_BODY.fetch_add(1, Ordering::SeqCst);
    Err(PayError::Io("down"))
}

/// Java's `fbOpen(CallNotPermittedException e)`: answers only open-circuit rejections; any
/// other error goes on as it is (Java: no overload matches, the exception is rethrown).
async fn row4_fb_open(error: StackError<PayError>) -> Result<&'static str, PayError> {
    match error {
        StackError::CallNotPermitted(_) => Ok("open"),
        StackError::Inner(e) => Err(e),
        other => Err(PayError::Rejected(other.to_string())),
    }
}

async fn row4_retry_fb(error: StackError<PayError>) -> Result<&'static str, PayError> {
    ROW4_RETRY_FB.lock().unwrap().push(seen(&error));
    Ok("retry fallback")
}

#[tokio::test]
async fn row4_an_error_the_breaker_fallback_does_not_take_is_retried() {
    assert_eq!(row4().await, Ok("retry fallback"));
    // The breaker stays CLOSED (minimumNumberOfCalls 100), so every one of the 4 attempts
    // reaches the body, and the retry's fallback sees the last IOException.
    assert_eq!(ROW4_BODY.load(Ordering::SeqCst), 4);
    assert_eq!(*ROW4_RETRY_FB.lock().unwrap(), ["Io"]);
    let breaker = LIVE.registry().circuit_breaker("row4");
    assert_eq!(breaker.metrics().number_of_failed_calls, 4);
}

// --- row 5: @CircuitBreaker(fb) + @RateLimiter, limiter exhausted ---------------------------

static ROW5_FB: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[rate_limiter(name = "row5", registry = LIVE.module_registries().rate_limiter)]
#[circuit_breaker(name = "row5", fallback = "row5_fb", registry = LIVE.registry())]
async fn row5() -> Result<&'static str, PayError> {
    Ok("live")
}

async fn row5_fb(error: StackError<PayError>) -> Result<&'static str, PayError> {
    ROW5_FB.lock().unwrap().push(seen(&error));
    Ok("fallback")
}

#[tokio::test]
async fn row5_the_breaker_records_the_limiter_rejection_as_a_failure() {
    // limitForPeriod 1 per hour: the first call takes the permit, the second is refused.
    assert_eq!(row5().await, Ok("live"));
    assert_eq!(row5().await, Ok("fallback"));
    assert_eq!(
        *ROW5_FB.lock().unwrap(),
        ["RateLimiter 'row5' does not permit further calls"]
    );
    let m = LIVE.registry().circuit_breaker("row5").metrics();
    assert_eq!(
        (m.number_of_successful_calls, m.number_of_failed_calls),
        (1, 1)
    );
}

// --- row 6: @CircuitBreaker + @RateLimiter(fb) ---------------------------------------------

#[circuit_breaker(name = "row6", registry = LIVE.registry())]
#[rate_limiter(name = "row6", fallback = "row6_fb", registry = LIVE.module_registries().rate_limiter)]
async fn row6() -> Result<&'static str, PayError> {
    Ok("live")
}

async fn row6_fb(error: StackError<PayError>) -> Result<&'static str, PayError> {
    assert!(matches!(error, StackError::RequestNotPermitted(_)));
    Ok("fallback")
}

#[tokio::test]
async fn row6_the_limiter_fallback_makes_the_breaker_record_a_success() {
    assert_eq!(row6().await, Ok("live"));
    assert_eq!(row6().await, Ok("fallback"));
    let m = LIVE.registry().circuit_breaker("row6").metrics();
    assert_eq!(
        (m.number_of_successful_calls, m.number_of_failed_calls),
        (2, 0)
    );
}

// --- row 7: @CircuitBreaker(fb) + @TimeLimiter, slow --------------------------------------

static ROW7_FB: Mutex<Vec<String>> = Mutex::new(Vec::new());
static ROW7_FINISHED: AtomicUsize = AtomicUsize::new(0);

#[circuit_breaker(name = "row7", fallback = "row7_fb", registry = LIVE.registry())]
#[time_limiter(name = "row7", registry = LIVE.module_registries().time_limiter)]
async fn row7() -> Result<&'static str, PayError> {
    tokio::time::sleep(Duration::from_secs(5)).await;
    ROW7_FINISHED.fetch_add(1, Ordering::SeqCst);
    Ok("slow")
}

async fn row7_fb(error: StackError<PayError>) -> Result<&'static str, PayError> {
    ROW7_FB.lock().unwrap().push(seen(&error));
    Ok("fallback")
}

#[tokio::test]
async fn row7_a_timeout_is_a_breaker_failure_and_reaches_its_fallback() {
    // The body sleeps 5 s; the 50 ms limit cuts it. No wall-clock bound is asserted (load
    // can stretch any): the fallback's answer and the body never having finished show it.
    assert_eq!(row7().await, Ok("fallback"));
    assert_eq!(ROW7_FINISHED.load(Ordering::SeqCst), 0);
    assert_eq!(
        *ROW7_FB.lock().unwrap(),
        ["TimeLimiter 'row7' recorded a timeout exception."]
    );
    assert_eq!(
        LIVE.registry()
            .circuit_breaker("row7")
            .metrics()
            .number_of_failed_calls,
        1
    );
    // Deliberate difference (README): the timed-out call is dropped, not left running.
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(ROW7_FINISHED.load(Ordering::SeqCst), 0);
}

// --- row 8: @TimeLimiter(fb) on a method that does not return a future of a Result -----------
// Resilience4j throws IllegalReturnTypeException at call time; here it is a compile error
// (tests/macros-ui: fail/stack_time_limiter_not_result.rs).

// --- row 9: @Bulkhead(type = THREADPOOL, fb), pool and queue full -------------------------

static ROW9_FB: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[bulkhead(
    name = "row9",
    type = "THREADPOOL",
    fallback = "row9_fb",
    registry = LIVE.module_registries().thread_pool_bulkhead
)]
// An owned `Ok` type: a stacked fn's future is `Send` only when its `Ok` and error types hold
// no reference (README: known limitations), and this one is spawned.
async fn row9(gate: Arc<tokio::sync::Notify>) -> Result<String, PayError> {
    gate.notified().await;
    Ok("ran".into())
}

async fn row9_fb(
    _gate: Arc<tokio::sync::Notify>,
    error: StackError<PayError>,
) -> Result<String, PayError> {
    ROW9_FB.lock().unwrap().push(seen(&error));
    Ok("fallback".into())
}

#[tokio::test]
async fn row9_a_full_thread_pool_bulkhead_hands_bulkhead_full_to_the_fallback() {
    let gate = Arc::new(tokio::sync::Notify::new());
    // maxThreadPoolSize 1 runs, queueCapacity 1 waits: the third call is rejected.
    let running = tokio::spawn(row9(gate.clone()));
    let queued = tokio::spawn(row9(gate.clone()));
    tokio::task::yield_now().await;
    for _ in 0..50 {
        let m = LIVE
            .module_registries()
            .thread_pool_bulkhead
            .bulkhead("row9")
            .metrics();
        if m.queue_depth == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(row9(gate.clone()).await.as_deref(), Ok("fallback"));
    assert_eq!(
        *ROW9_FB.lock().unwrap(),
        ["Bulkhead 'row9' is full and does not permit further calls"]
    );
    gate.notify_waiters();
    gate.notify_one();
    assert_eq!(running.await.unwrap().as_deref(), Ok("ran"));
    gate.notify_one();
    assert_eq!(queued.await.unwrap().as_deref(), Ok("ran"));
}

// --- without fallbacks, a rejection is the fn's own error ---------------------------------

#[time_limiter(name = "row7", registry = LIVE.module_registries().time_limiter)]
#[retry(name = "plain", registry = LIVE.module_registries().retry)]
async fn plain(attempts: Arc<AtomicUsize>) -> Result<u32, PayError> {
    attempts.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(5)).await;
    Ok(1)
}

#[tokio::test]
async fn without_a_fallback_the_rejection_converts_into_the_fn_error() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let r = plain(attempts.clone()).await;
    // Retry(TimeLimiter(fn)): each of the 4 attempts times out after 50 ms.
    assert_eq!(
        r,
        Err(PayError::Rejected(
            "TimeLimiter 'row7' recorded a timeout exception.".into()
        ))
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
}

// --- a thread-pool bulkhead runs the call in the caller's task -------------------------------

/// Holds an `Rc` across an `.await`: the future is not `Send`, so the thread-pool bulkhead
/// cannot hand it to another thread or task (README: differences from Resilience4j, where the
/// method runs on a bulkhead thread).
#[bulkhead(
    name = "row9",
    type = "THREADPOOL",
    registry = LIVE.module_registries().thread_pool_bulkhead
)]
async fn not_send(n: u32) -> Result<u32, PayError> {
    let held = std::rc::Rc::new(n);
    tokio::task::yield_now().await;
    Ok(*held + 1)
}

#[tokio::test]
async fn a_thread_pool_bulkhead_runs_the_call_in_the_callers_task() {
    assert_eq!(not_send(1).await, Ok(2));
}
