//! Run-time behaviour of `#[circuit_breaker]`: opening, fallback, cancellation, panics,
//! concurrency and live config replacement, through annotated fns and methods.
//!
//! Each test has its own registry (`registry = ...`) so the tests can run in parallel; one
//! test goes through the process-global registry.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use resilience4rs::{
    circuit_breaker, CallError, CallNotPermitted, CircuitBreakerConfig, Registry, State,
};

#[derive(Debug, Clone, PartialEq)]
pub enum SvcError {
    Down,
    Rejected,
}

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError::Rejected
    }
}

/// A count window of `size` calls that opens at a 50% failure rate once `size` calls are in.
fn config(size: i64) -> CircuitBreakerConfig {
    CircuitBreakerConfig::builder()
        .sliding_window_size(size)
        .minimum_number_of_calls(size)
        .failure_rate_threshold(50.0)
        .wait_duration_in_open_state(Duration::from_secs(3600))
        .permitted_number_of_calls_in_half_open_state(1)
        .build()
        .expect("valid config")
}

// --- opens, then the fallback runs and the body is not reached -----------------------------

static OPENING: LazyLock<Registry> = LazyLock::new(|| Registry::with_default_config(config(4)));
static OPENING_BODY: AtomicUsize = AtomicUsize::new(0);
static OPENING_FALLBACK_REJECTED: AtomicUsize = AtomicUsize::new(0);

#[circuit_breaker(name = "opening", fallback = "opening_fallback", registry = OPENING)]
async fn opening(fail: bool) -> Result<&'static str, SvcError> {
    OPENING_BODY.fetch_add(1, Ordering::SeqCst);
    if fail {
        return Err(SvcError::Down);
    }
    Ok("live")
}

async fn opening_fallback(
    _fail: bool,
    error: CallError<SvcError>,
) -> Result<&'static str, SvcError> {
    match error {
        CallError::NotPermitted(rejected) => {
            assert_eq!(rejected.circuit_breaker_name(), "opening");
            OPENING_FALLBACK_REJECTED.fetch_add(1, Ordering::SeqCst);
            Ok("cached")
        }
        CallError::Inner(e) => {
            assert_eq!(e, SvcError::Down);
            Ok("fallback-after-error")
        }
    }
}

#[tokio::test]
async fn opens_after_configured_failures_then_fallback_runs_without_reaching_body() {
    assert_eq!(opening(false).await, Ok("live"));
    for _ in 0..3 {
        assert_eq!(opening(true).await, Ok("fallback-after-error"));
    }
    let breaker = OPENING.circuit_breaker("opening");
    assert_eq!(breaker.state(), State::Open, "3 of 4 calls failed");
    assert_eq!(OPENING_BODY.load(Ordering::SeqCst), 4);

    for _ in 0..10 {
        assert_eq!(opening(false).await, Ok("cached"));
    }
    assert_eq!(
        OPENING_BODY.load(Ordering::SeqCst),
        4,
        "no call reached the body"
    );
    assert_eq!(OPENING_FALLBACK_REJECTED.load(Ordering::SeqCst), 10);
    assert_eq!(breaker.metrics().number_of_not_permitted_calls, 10);
}

// --- a cancelled call hands its HALF_OPEN permit back --------------------------------------

static CANCEL: LazyLock<Registry> = LazyLock::new(|| Registry::with_default_config(config(4)));

#[circuit_breaker(name = "cancel", registry = CANCEL)]
async fn slow(delay: Duration) -> Result<u32, SvcError> {
    tokio::time::sleep(delay).await;
    Ok(1)
}

#[tokio::test]
async fn cancelled_call_releases_its_half_open_permit() {
    let breaker = CANCEL.circuit_breaker("cancel");
    breaker.transition_to_open_state().unwrap();
    breaker.transition_to_half_open_state().unwrap();
    assert_eq!(breaker.state(), State::HalfOpen);

    // Timed out: the only trial permit must come back.
    let timed_out =
        tokio::time::timeout(Duration::from_millis(20), slow(Duration::from_secs(60))).await;
    assert!(timed_out.is_err());
    // Lost a select!: same.
    tokio::select! {
        _ = slow(Duration::from_secs(60)) => panic!("the slow call cannot win"),
        _ = tokio::time::sleep(Duration::from_millis(20)) => {}
    }
    assert_eq!(breaker.state(), State::HalfOpen);
    assert_eq!(
        breaker.metrics().number_of_buffered_calls,
        0,
        "cancellations record nothing"
    );

    // The permit is available again: the trial call runs and closes the breaker.
    assert_eq!(slow(Duration::from_millis(1)).await, Ok(1));
    assert_eq!(breaker.state(), State::Closed);
}

// --- a panic is recorded as a failure and propagates ---------------------------------------

static PANIC: LazyLock<Registry> = LazyLock::new(|| Registry::with_default_config(config(10)));

#[circuit_breaker(name = "panics", registry = PANIC)]
async fn explode(message: String) -> Result<(), SvcError> {
    tokio::task::yield_now().await;
    panic!("{message}");
}

#[tokio::test]
async fn panic_in_body_records_failure_and_propagates() {
    let joined = tokio::spawn(explode("boom".to_string())).await;
    let error = joined.expect_err("the panic propagates out of the protected fn");
    assert!(error.is_panic());
    let payload = error.into_panic();
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("boom")
    );

    let metrics = PANIC.circuit_breaker("panics").metrics();
    assert_eq!(metrics.number_of_failed_calls, 1);
    assert_eq!(metrics.number_of_buffered_calls, 1);
}

// --- 1000 concurrent calls through one annotated method count exactly ----------------------

static CONCURRENT: LazyLock<Registry> =
    LazyLock::new(|| Registry::with_default_config(config(2000)));

pub struct Ledger {
    calls: AtomicUsize,
}

impl Ledger {
    #[circuit_breaker(name = "concurrent", registry = CONCURRENT)]
    async fn post(self: Arc<Self>, n: usize) -> Result<usize, SvcError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        tokio::task::yield_now().await;
        if n.is_multiple_of(2) {
            Ok(n)
        } else {
            Err(SvcError::Down)
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thousand_concurrent_calls_count_exactly() {
    let ledger = Arc::new(Ledger {
        calls: AtomicUsize::new(0),
    });
    let tasks: Vec<_> = (0..1000)
        .map(|n| tokio::spawn(Arc::clone(&ledger).post(n)))
        .collect();
    let mut ok = 0;
    for task in tasks {
        if task.await.unwrap().is_ok() {
            ok += 1;
        }
    }
    assert_eq!(ok, 500);
    assert_eq!(ledger.calls.load(Ordering::Relaxed), 1000);
    let metrics = CONCURRENT.circuit_breaker("concurrent").metrics();
    assert_eq!(metrics.number_of_buffered_calls, 1000);
    assert_eq!(metrics.number_of_successful_calls, 500);
    assert_eq!(metrics.number_of_failed_calls, 500);
    assert_eq!(metrics.number_of_not_permitted_calls, 0);
    assert_eq!(
        metrics.state,
        State::Closed,
        "below the minimum number of calls"
    );
}

// --- a config replacement reaches an already-running annotated fn --------------------------

static RELOAD: LazyLock<Registry> = LazyLock::new(|| Registry::with_default_config(config(100)));

#[circuit_breaker(name = "reload", registry = RELOAD)]
async fn flaky(fail: bool) -> Result<(), SvcError> {
    if fail {
        Err(SvcError::Down)
    } else {
        Ok(())
    }
}

#[tokio::test]
async fn config_reload_changes_behaviour_of_running_fn() {
    for _ in 0..10 {
        assert_eq!(flaky(true).await, Err(SvcError::Down));
    }
    let breaker = RELOAD.circuit_breaker("reload");
    assert_eq!(
        breaker.state(),
        State::Closed,
        "100 calls are needed before rating"
    );

    assert!(RELOAD.replace_config("reload", config(2)));
    assert_eq!(flaky(true).await, Err(SvcError::Down));
    assert_eq!(flaky(true).await, Err(SvcError::Down));
    assert_eq!(
        breaker.state(),
        State::Open,
        "the new 2-call window tripped"
    );
    assert_eq!(
        flaky(false).await,
        Err(SvcError::Rejected),
        "From<CallNotPermitted>"
    );
}

// --- the process-global registry -----------------------------------------------------------

static GLOBAL_BODY: AtomicUsize = AtomicUsize::new(0);

#[circuit_breaker(name = "macros-runtime-global")]
async fn through_global(fail: bool) -> Result<(), SvcError> {
    GLOBAL_BODY.fetch_add(1, Ordering::SeqCst);
    if fail {
        Err(SvcError::Down)
    } else {
        Ok(())
    }
}

#[tokio::test]
async fn global_registry_set_by_init_is_used() {
    // This is the only test in this binary that touches the global registry.
    resilience4rs::init(Registry::with_default_config(config(2))).expect("first init");
    assert!(resilience4rs::init(Registry::new()).is_err());
    assert_eq!(through_global(true).await, Err(SvcError::Down));
    assert_eq!(through_global(true).await, Err(SvcError::Down));
    assert_eq!(through_global(false).await, Err(SvcError::Rejected));
    assert_eq!(GLOBAL_BODY.load(Ordering::SeqCst), 2);
    let breaker = resilience4rs::global().circuit_breaker("macros-runtime-global");
    assert_eq!(breaker.state(), State::Open);
}

// --- the attribute above `#[tokio::test]` protects the test itself ----------------------------

static TEST_ORDER: LazyLock<Registry> = LazyLock::new(|| Registry::with_default_config(config(4)));

#[circuit_breaker(name = "protected-test", registry = TEST_ORDER)]
#[tokio::test]
async fn circuit_breaker_above_tokio_test_wraps_the_async_body() -> Result<(), SvcError> {
    // Inside the protected body: the breaker exists and has granted this call's permit.
    let breaker = TEST_ORDER.circuit_breaker("protected-test");
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        breaker.metrics().number_of_buffered_calls,
        0,
        "recorded when the body ends"
    );
    tokio::task::yield_now().await;
    Ok(())
}

// --- `registry = self.registry`: each instance's calls go to its own registry ---------------

pub struct Tenant {
    registry: Registry,
}

impl Tenant {
    #[circuit_breaker(name = "tenant", registry = self.registry)]
    async fn call(&self, fail: bool) -> Result<u32, SvcError> {
        if fail {
            Err(SvcError::Down)
        } else {
            Ok(1)
        }
    }
}

#[tokio::test]
async fn registry_from_self_is_evaluated_on_every_call() {
    let a = Tenant {
        registry: Registry::with_default_config(config(2)),
    };
    let b = Tenant {
        registry: Registry::with_default_config(config(2)),
    };
    // Interleaved: a per-call-site cache would send every call to `a`'s registry.
    for _ in 0..2 {
        assert_eq!(a.call(false).await, Ok(1));
        assert_eq!(b.call(true).await, Err(SvcError::Down));
    }
    assert_eq!(
        b.call(false).await,
        Err(SvcError::Rejected),
        "b's breaker opened"
    );
    assert_eq!(a.call(false).await, Ok(1), "a's breaker did not");
    let (ma, mb) = (
        a.registry.circuit_breaker("tenant").metrics(),
        b.registry.circuit_breaker("tenant").metrics(),
    );
    // Windows of 2 calls: `a`'s holds its last two successes.
    assert_eq!(
        (ma.number_of_successful_calls, ma.number_of_failed_calls),
        (2, 0)
    );
    assert_eq!(
        (mb.number_of_failed_calls, mb.number_of_not_permitted_calls),
        (2, 1)
    );
    assert_eq!((ma.state, mb.state), (State::Closed, State::Open));
}
