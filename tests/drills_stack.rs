//! Drills through the whole attribute stack, on virtual time (issue #28): each fault kind
//! reaches the layer a real outage would reach, that layer's fallback serves, and the drill's
//! counters count the call as injected; a drill started and stopped by editing the file.
//!
//! Every fn names its registries (`registry = ...`) from one live config on a ManualClock;
//! the drills are that config's, made the stack's with `init_drills`.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use resilience4rs::bulkhead::BulkheadFullException;
use resilience4rs::drill::{DrillConfig, DrillErrorKind, Fault, Latency, Rejection};
use resilience4rs::ratelimiter::RequestNotPermitted;
use resilience4rs::timelimiter::Timeout;
use resilience4rs::{
    bulkhead, circuit_breaker, time_limiter, CallNotPermitted, LiveConfig, ManualClock,
    SpringConfig, StackError, State,
};

const YAML: &str = "
resilience4j:
  circuitbreaker:
    instances:
      errors:
        slidingWindowSize: 4
        minimumNumberOfCalls: 4
        failureRateThreshold: 50
        waitDurationInOpenState: 10s
      fromFile:
        slidingWindowSize: 100
  timelimiter:
    instances:
      slow:
        timeoutDuration: 1s
      hung:
        timeoutDuration: 1s
  bulkhead:
    instances:
      full: {}
";

static CLOCK: LazyLock<ManualClock> =
    LazyLock::new(|| ManualClock::at_epoch_millis(1_700_000_000_000));

fn path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("drills_stack.yml")
}

static LIVE: LazyLock<LiveConfig> = LazyLock::new(|| {
    std::fs::write(path(), YAML).expect("writable target dir");
    let live = SpringConfig::file(path())
        .clock(CLOCK.clone())
        .live()
        .expect("valid config");
    resilience4rs::init_drills(live.drills().clone()).expect("first");
    live.drills()
        .register_error("java.io.IOException", || PayError::Io("injected"));
    live
});

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
    RequestNotPermitted
);

fn poll<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

fn seen(e: &StackError<PayError>) -> String {
    match e {
        StackError::Inner(PayError::Io(m)) => format!("Io({m})"),
        other => other.to_string(),
    }
}

// --- an injected error: the breaker records it, opens, and its fallback serves ----------

static ERRORS_BODY: AtomicUsize = AtomicUsize::new(0);

// A named error is injected in a stack (a lone `#[circuit_breaker]`'s error type may borrow,
// so it takes latency and hangs only): the breaker with a pass-through bulkhead.
#[circuit_breaker(name = "errors", fallback = "errors_fb", registry = LIVE.registry())]
#[bulkhead(name = "errors", registry = LIVE.module_registries().bulkhead)]
async fn errors() -> Result<String, PayError> {
    ERRORS_BODY.fetch_add(1, Ordering::SeqCst);
    Ok("provider".into())
}

async fn errors_fb(e: StackError<PayError>) -> Result<String, PayError> {
    Ok(format!("fallback: {}", seen(&e)))
}

#[tokio::test]
async fn an_injected_error_opens_the_breaker_and_its_fallback_serves() {
    let drills = LIVE.drills();
    let io = DrillErrorKind::Named("java.io.IOException".into());
    drills
        .start("errors", DrillConfig::new(Fault::Error(io)))
        .unwrap();
    for _ in 0..4 {
        assert_eq!(errors().await.unwrap(), "fallback: Io(injected)");
    }
    let breaker = LIVE.registry().circuit_breaker("errors");
    assert_eq!(breaker.state(), State::Open, "4 failures of 4 >= 50%");
    assert_eq!(breaker.metrics().number_of_failed_calls, 4);
    // OPEN now: the breaker's own rejection, the drill is not even reached.
    assert_eq!(
        errors().await.unwrap(),
        "fallback: CircuitBreaker 'errors' is OPEN and does not permit further calls"
    );
    assert_eq!(
        ERRORS_BODY.load(Ordering::SeqCst),
        0,
        "the dependency was never called"
    );
    assert_eq!(drills.drill("errors").unwrap().metrics().injected_errors, 4);
    // Stopped: after the wait, the provider answers and the breaker recovers.
    assert!(drills.stop("errors"));
    breaker.transition_to_half_open_state().unwrap();
    for _ in 0..10 {
        assert_eq!(errors().await.unwrap(), "provider");
    }
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(drills.drill("errors").unwrap().metrics().injected_errors, 4);
}

// --- injected latency beyond the time limiter: the time limiter times out ---------------

static SLOW_BODY: AtomicUsize = AtomicUsize::new(0);

#[time_limiter(name = "slow", fallback = "slow_fb", registry = LIVE.module_registries().time_limiter)]
async fn slow() -> Result<String, PayError> {
    SLOW_BODY.fetch_add(1, Ordering::SeqCst);
    Ok("provider".into())
}

async fn slow_fb(e: StackError<PayError>) -> Result<String, PayError> {
    Ok(format!("fallback: {}", seen(&e)))
}

#[test]
fn injected_latency_past_the_timeout_is_a_timeout_and_the_fallback_serves() {
    let drills = LIVE.drills();
    let fault = Fault::Latency(Latency::Fixed(Duration::from_secs(2)));
    drills.start("slow", DrillConfig::new(fault)).unwrap();
    let mut call = pin!(slow());
    assert!(poll(call.as_mut()).is_pending());
    CLOCK.advance(Duration::from_secs(1));
    assert_eq!(
        poll(call.as_mut()),
        Poll::Ready(Ok(
            "fallback: TimeLimiter 'slow' recorded a timeout exception.".to_string()
        ))
    );
    assert_eq!(SLOW_BODY.load(Ordering::SeqCst), 0);
    assert_eq!(drills.drill("slow").unwrap().metrics().injected_latency, 1);
    // A latency within the timeout delays the call, which then reaches the provider.
    let fault = Fault::Latency(Latency::Fixed(Duration::from_millis(500)));
    drills.start("slow", DrillConfig::new(fault)).unwrap();
    let mut call = pin!(slow());
    assert!(poll(call.as_mut()).is_pending());
    CLOCK.advance(Duration::from_millis(500));
    assert_eq!(poll(call.as_mut()), Poll::Ready(Ok("provider".to_string())));
    assert_eq!(SLOW_BODY.load(Ordering::SeqCst), 1);
    drills.stop("slow");
}

// --- a hang: only the time limiter ends it ----------------------------------------------

static HUNG_BODY: AtomicUsize = AtomicUsize::new(0);

#[time_limiter(name = "hung", fallback = "hung_fb", registry = LIVE.module_registries().time_limiter)]
async fn hung() -> Result<String, PayError> {
    HUNG_BODY.fetch_add(1, Ordering::SeqCst);
    Ok("provider".into())
}

async fn hung_fb(e: StackError<PayError>) -> Result<String, PayError> {
    assert!(matches!(e, StackError::Timeout(_)), "{e}");
    Ok("fallback".into())
}

#[test]
fn a_hang_is_cut_by_the_time_limiter_and_the_fallback_serves() {
    let drills = LIVE.drills();
    drills.start("hung", DrillConfig::new(Fault::Hang)).unwrap();
    let mut call = pin!(hung());
    assert!(poll(call.as_mut()).is_pending());
    CLOCK.advance(Duration::from_secs(1));
    assert_eq!(poll(call.as_mut()), Poll::Ready(Ok("fallback".to_string())));
    assert_eq!(HUNG_BODY.load(Ordering::SeqCst), 0);
    assert_eq!(drills.drill("hung").unwrap().metrics().injected_hangs, 1);
    drills.stop("hung");
}

// --- a rejection: the bulkhead's fallback gets its own BulkheadFullException ------------

#[bulkhead(name = "full", fallback = "full_fb", registry = LIVE.module_registries().bulkhead)]
async fn full() -> Result<String, PayError> {
    Ok("provider".into())
}

async fn full_fb(e: StackError<PayError>) -> Result<String, PayError> {
    Ok(format!("fallback: {e}"))
}

#[tokio::test]
async fn an_injected_rejection_reaches_its_layers_fallback() {
    let drills = LIVE.drills();
    let fault = Fault::Error(DrillErrorKind::Rejection(Rejection::BulkheadFull));
    drills
        .start("full", DrillConfig::new(fault).max_calls(2))
        .unwrap();
    let expected = "fallback: Bulkhead 'full' is full and does not permit further calls";
    assert_eq!(full().await.unwrap(), expected);
    assert_eq!(full().await.unwrap(), expected);
    // The call limit reached, the drill is over.
    assert_eq!(full().await.unwrap(), "provider");
    let m = drills.drill("full").unwrap().metrics();
    assert_eq!((m.injected_errors, m.passed), (2, 1));
    drills.stop("full");
}

// --- started and stopped by editing the file --------------------------------------------

#[circuit_breaker(name = "fromFile", registry = LIVE.registry())]
#[bulkhead(name = "fromFile", registry = LIVE.module_registries().bulkhead)]
async fn from_file() -> Result<String, PayError> {
    Ok("provider".into())
}

#[tokio::test]
async fn a_drill_started_and_stopped_by_editing_the_file() {
    LazyLock::force(&LIVE);
    assert_eq!(from_file().await.unwrap(), "provider");
    let on = format!(
        "{YAML}
breaker:
  drill:
    instances:
      fromFile:
        fault: error
        error: java.io.IOException
"
    );
    // Serialised with nothing: no other test edits the file.
    std::fs::write(path(), on).unwrap();
    LIVE.reload().unwrap();
    assert_eq!(from_file().await.unwrap_err(), PayError::Io("injected"));
    let breaker = LIVE.registry().circuit_breaker("fromFile");
    assert_eq!(
        breaker.metrics().number_of_failed_calls,
        1,
        "the breaker recorded it"
    );
    assert_eq!(LIVE.drills().active(), ["fromFile"]);
    std::fs::write(path(), YAML).unwrap();
    LIVE.reload().unwrap();
    assert_eq!(from_file().await.unwrap(), "provider");
    let m = LIVE.drills().drill("fromFile").unwrap().metrics();
    assert_eq!(m.injected_errors, 1);
}
