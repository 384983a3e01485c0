//! A protected call allocates nothing on the heap: in CLOSED, OPEN (rejected) and HALF_OPEN,
//! through the sync permit API and through async `call` around a ready future, with no
//! subscriber attached, with COUNT_BASED and TIME_BASED windows, lock-free or under the
//! lock, and rejected in FORCED_OPEN; likewise a retried call that succeeds at once, retries
//! with 0 ms waits, runs out of attempts or meets an error it does not retry, a time-limited
//! call whose future is ready (with a value or an error) at its first poll, and a
//! bulkhead's, a thread-pool bulkhead's and a rate limiter's admitted and rejected calls.
//!
//! A counting global allocator (this test binary's own: `#[global_allocator]` is per binary)
//! counts the allocations each thread makes; each check runs its calls after a warm-up and
//! asserts that the count did not move. Counting per thread keeps the other tests of this
//! binary, which run in parallel, out of the figure.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use breaker_core::bulkhead::{
    Bulkhead, BulkheadConfig, ThreadPoolBulkhead, ThreadPoolBulkheadConfig,
};
use breaker_core::ratelimiter::{RateLimiter, RateLimiterConfig, RateLimiterError};
use breaker_core::{CallError, CircuitBreaker, CircuitBreakerConfig, ManualClock, State};

/// Counts the calls to `alloc`, `alloc_zeroed` and `realloc` made by the current thread, and
/// passes every call on to the system allocator unchanged.
struct Counting;

thread_local! {
    // `const` initialisation with a type that needs no destructor: reading or bumping the
    // counter never allocates and never registers a thread-local destructor, so the
    // allocator does not re-enter itself.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

#[inline]
fn count_one() {
    // `try_with` instead of `with`: during thread teardown the slot may be gone; an
    // allocation then is simply not counted (no test thread is being torn down while it
    // measures).
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every method forwards its arguments unchanged to `System`, which implements
// `GlobalAlloc`'s contract; the only extra work is bumping a thread-local `Cell<u64>`, which
// neither allocates nor unwinds. So the layout, pointer and size requirements that the
// caller guarantees to us are exactly the ones `System` receives, and what `System` returns
// is returned as is.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: same `layout` the caller passed under `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: same `layout` the caller passed under `alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: `ptr` was returned by this allocator, i.e. by `System`, with `layout`;
        // `new_size` is as the caller guaranteed.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was returned by `System` (through us) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// How many heap allocations this thread made while running `f`.
fn allocations_during(f: impl FnOnce()) -> u64 {
    LazyLock::force(&WAKER);
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// A waker that does nothing (`Waker::noop` is newer than the MSRV). Built once, before
/// any measurement, so its `Arc` is not counted.
struct Noop;

impl Wake for Noop {
    fn wake(self: Arc<Self>) {}
}

static WAKER: LazyLock<Waker> = LazyLock::new(|| Waker::from(Arc::new(Noop)));

/// Polls `fut` once with a no-op waker; the futures here are ready at once.
fn poll_once<F: Future>(fut: F) -> F::Output {
    let fut = pin!(fut);
    match fut.poll(&mut Context::from_waker(&WAKER)) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("future not ready on first poll"),
    }
}

const CALLS: u64 = 1_000;

/// A count window of 100; in HALF_OPEN the verdict waits for `half_open_permits` calls
/// (the effective minimum is `min(minimum_number_of_calls, permits)`).
fn config(half_open_permits: i64) -> CircuitBreakerConfig {
    CircuitBreakerConfig::builder()
        .sliding_window_size(100)
        .minimum_number_of_calls(half_open_permits.max(100))
        .permitted_number_of_calls_in_half_open_state(half_open_permits)
        .wait_duration_in_open_state(Duration::from_secs(3600))
        .build()
        .expect("valid config")
}

/// Every `step`-th call fails: exercises both outcomes.
fn sync_calls(cb: &CircuitBreaker, n: u64, step: u64) {
    for i in 0..n {
        let permit = cb.try_acquire_permission().expect("permitted");
        if i % step == step - 1 {
            permit.on_error();
        } else {
            permit.on_success();
        }
    }
}

fn async_calls(cb: &CircuitBreaker, n: u64, step: u64) {
    for i in 0..n {
        let fut = std::future::ready(if i % step == step - 1 {
            Err::<u64, u32>(7)
        } else {
            Ok(i)
        });
        match poll_once(cb.call(fut)) {
            Ok(_) | Err(CallError::Inner(_)) => {}
            Err(CallError::NotPermitted(e)) => panic!("rejected: {e}"),
        }
    }
}

#[test]
fn closed_sync_permit_allocates_nothing() {
    let cb = CircuitBreaker::new("closed-sync", config(10));
    sync_calls(&cb, 200, 5); // warm-up: fills the window, starts any clock machinery
    let n = allocations_during(|| sync_calls(&cb, CALLS, 5));
    assert_eq!(cb.state(), State::Closed);
    assert_eq!(n, 0, "{n} allocations in {CALLS} CLOSED calls");
}

#[test]
fn closed_call_sync_allocates_nothing() {
    let cb = CircuitBreaker::new("closed-call-sync", config(10));
    let run = |cb: &CircuitBreaker| {
        for i in 0..CALLS {
            let _ = cb.call_sync(|| if i % 5 == 4 { Err(i) } else { Ok(i) });
        }
    };
    run(&cb);
    let n = allocations_during(|| run(&cb));
    assert_eq!(cb.state(), State::Closed);
    assert_eq!(n, 0, "{n} allocations in {CALLS} CLOSED call_sync calls");
}

#[test]
fn closed_async_call_allocates_nothing() {
    let cb = CircuitBreaker::new("closed-async", config(10));
    async_calls(&cb, 200, 5);
    let n = allocations_during(|| async_calls(&cb, CALLS, 5));
    assert_eq!(cb.state(), State::Closed);
    assert_eq!(n, 0, "{n} allocations in {CALLS} CLOSED async calls");
}

#[test]
fn time_based_calls_allocate_nothing() {
    // A TIME_BASED window of 10 s: outcomes within a second mostly go lock-free, every
    // fifth fails, and the clock crosses seconds (the window rotates its buckets in place).
    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let config = CircuitBreakerConfig::builder()
        .sliding_window_type(breaker_core::SlidingWindowType::TimeBased)
        .sliding_window_size(10)
        .minimum_number_of_calls(100)
        .clock(Arc::new(clock.clone()))
        .build()
        .expect("valid config");
    let cb = CircuitBreaker::new("time-based", config);
    let run = |cb: &CircuitBreaker| {
        for _ in 0..10 {
            sync_calls(cb, CALLS / 10, 5);
            async_calls(cb, CALLS / 10, 5);
            clock.advance(Duration::from_millis(700));
        }
    };
    run(&cb);
    let n = allocations_during(|| run(&cb));
    assert_eq!(cb.state(), State::Closed);
    assert_eq!(n, 0, "{n} allocations in {} TIME_BASED calls", 2 * CALLS);
}

#[test]
fn open_rejection_allocates_nothing() {
    let cb = CircuitBreaker::new("open", config(10));
    cb.transition_to_open_state().expect("CLOSED -> OPEN");
    let reject = |cb: &CircuitBreaker| {
        for _ in 0..CALLS {
            let rejected = cb.try_acquire_permission().expect_err("OPEN rejects");
            assert_eq!(rejected.state(), State::Open);
            let r = poll_once(cb.call(std::future::ready(Ok::<u64, u32>(1))));
            assert!(matches!(r, Err(CallError::NotPermitted(_))));
            let r = cb.call_sync(|| Ok::<u64, u32>(1));
            assert!(matches!(r, Err(CallError::NotPermitted(_))));
        }
    };
    reject(&cb);
    let n = allocations_during(|| reject(&cb));
    assert_eq!(cb.state(), State::Open);
    assert_eq!(n, 0, "{n} allocations in {} OPEN rejections", 3 * CALLS);
    assert_eq!(cb.metrics().number_of_not_permitted_calls, 6 * CALLS);
}

#[test]
fn forced_open_rejection_allocates_nothing() {
    let cb = CircuitBreaker::new("forced-open", config(10));
    cb.transition_to_forced_open_state()
        .expect("CLOSED -> FORCED_OPEN");
    let reject = |cb: &CircuitBreaker| {
        for _ in 0..CALLS {
            let rejected = cb
                .try_acquire_permission()
                .expect_err("FORCED_OPEN rejects");
            assert_eq!(rejected.state(), State::ForcedOpen);
            let r = poll_once(cb.call(std::future::ready(Ok::<u64, u32>(1))));
            assert!(matches!(r, Err(CallError::NotPermitted(_))));
            let r = cb.call_sync(|| Ok::<u64, u32>(1));
            assert!(matches!(r, Err(CallError::NotPermitted(_))));
        }
    };
    reject(&cb);
    let n = allocations_during(|| reject(&cb));
    assert_eq!(cb.state(), State::ForcedOpen);
    assert_eq!(
        n,
        0,
        "{n} allocations in {} FORCED_OPEN rejections",
        3 * CALLS
    );
    assert_eq!(cb.metrics().number_of_not_permitted_calls, 6 * CALLS);
}

#[test]
fn half_open_calls_allocate_nothing() {
    // Enough trial permits that no transition happens while measuring: the verdict stays
    // "below the minimum number of calls" until all of them are recorded.
    let permits = 4 * CALLS as i64 + 100;
    let cb = CircuitBreaker::new("half-open", config(permits));
    cb.transition_to_open_state().expect("CLOSED -> OPEN");
    cb.transition_to_half_open_state()
        .expect("OPEN -> HALF_OPEN");
    sync_calls(&cb, 50, 5);
    async_calls(&cb, 50, 5);
    let n = allocations_during(|| {
        sync_calls(&cb, CALLS, 5);
        async_calls(&cb, CALLS, 5);
        // A permit dropped unused hands its trial permission back.
        for _ in 0..CALLS {
            drop(cb.try_acquire_permission().expect("permitted"));
        }
    });
    assert_eq!(cb.state(), State::HalfOpen);
    assert_eq!(n, 0, "{n} allocations in {} HALF_OPEN calls", 3 * CALLS);
}

#[test]
fn half_open_rejection_allocates_nothing() {
    let cb = CircuitBreaker::new("half-open-full", config(2));
    cb.transition_to_open_state().expect("CLOSED -> OPEN");
    cb.transition_to_half_open_state()
        .expect("OPEN -> HALF_OPEN");
    let a = cb.try_acquire_permission().expect("first trial call");
    let b = cb.try_acquire_permission().expect("second trial call");
    let reject = |cb: &CircuitBreaker| {
        for _ in 0..CALLS {
            let rejected = cb.try_acquire_permission().expect_err("no permit left");
            assert_eq!(rejected.state(), State::HalfOpen);
        }
    };
    reject(&cb);
    let n = allocations_during(|| reject(&cb));
    assert_eq!(n, 0, "{n} allocations in {CALLS} HALF_OPEN rejections");
    drop((a, b));
}

#[test]
fn bulkhead_calls_and_rejections_allocate_nothing() {
    let b = Bulkhead::new(
        "no-alloc-bulkhead",
        BulkheadConfig::builder()
            .max_concurrent_calls(1)
            .max_wait_duration(Duration::from_secs(1))
            .build()
            .expect("valid config"),
    );
    let run = |b: &Bulkhead| {
        for i in 0..CALLS {
            b.try_acquire_permission().expect("free").on_complete();
            drop(poll_once(b.acquire_permission()).expect("free"));
            let r = poll_once(b.call(std::future::ready(Ok::<u64, u32>(i))));
            assert_eq!(r, Ok(i));
            assert_eq!(
                b.call_sync(|| Err::<u64, u32>(7)).unwrap_err().into_inner(),
                Some(7)
            );
            let held = b.try_acquire_permission().expect("free");
            assert!(b.try_acquire_permission().is_err());
            assert!(b.call_sync(|| Ok::<u64, u32>(1)).unwrap_err().is_full());
            held.release();
        }
    };
    run(&b);
    let n = allocations_during(|| run(&b));
    assert_eq!(n, 0, "{n} allocations in {} bulkhead calls", 6 * CALLS);
}

#[test]
fn thread_pool_bulkhead_submissions_allocate_nothing() {
    let pool = ThreadPoolBulkhead::new(
        "no-alloc-pool",
        ThreadPoolBulkheadConfig::builder()
            .max_thread_pool_size(1)
            .core_thread_pool_size(1)
            .queue_capacity(0)
            .build()
            .expect("valid config"),
    );
    let run = |pool: &ThreadPoolBulkhead| {
        for i in 0..CALLS {
            assert_eq!(
                poll_once(pool.submit(std::future::ready(i)).expect("free")),
                i
            );
            let running = pool.submit(std::future::ready(0)).expect("free");
            assert!(pool.submit(std::future::ready(1)).is_err(), "full");
            drop(running);
        }
    };
    run(&pool);
    let n = allocations_during(|| run(&pool));
    assert_eq!(n, 0, "{n} allocations in {} submissions", 3 * CALLS);
}

#[test]
fn rate_limiter_calls_and_rejections_allocate_nothing() {
    let clock = Arc::new(ManualClock::at_epoch_millis(0));
    let limiter = |limit: i64| {
        RateLimiter::new(
            "no-alloc-limiter",
            RateLimiterConfig::builder()
                .limit_for_period(limit)
                .limit_refresh_period(Duration::from_secs(3600))
                .timeout_duration(Duration::ZERO)
                .clock(clock.clone())
                .build()
                .expect("valid config"),
        )
    };
    let open = limiter(i64::from(i32::MAX));
    let shut = limiter(1);
    shut.try_acquire_permission(1).expect("the only permit");
    let run = |open: &RateLimiter, shut: &RateLimiter| {
        for i in 0..CALLS {
            open.try_acquire_permission(1).expect("permitted");
            assert_eq!(poll_once(open.acquire_permission(1)), Ok(()));
            assert_eq!(open.reserve_permission(1), Ok(Duration::ZERO));
            let r = poll_once(open.call(std::future::ready(Ok::<u64, u32>(i))));
            assert_eq!(r, Ok(i));
            assert!(shut.try_acquire_permission(1).is_err());
            assert!(poll_once(shut.acquire_permission(1)).is_err());
            let r = poll_once(shut.call(std::future::ready(Ok::<u64, u32>(i))));
            assert!(matches!(r, Err(RateLimiterError::NotPermitted(_))));
            let _ = open.metrics();
        }
    };
    run(&open, &shut);
    let n = allocations_during(|| run(&open, &shut));
    assert_eq!(n, 0, "{n} allocations in {} rate-limiter calls", 7 * CALLS);
}

/// The counter works: an allocation is seen (so a zero above is not a broken counter).
#[test]
fn the_counter_sees_allocations() {
    let n = allocations_during(|| {
        let v: Vec<u64> = std::hint::black_box(Vec::with_capacity(16));
        drop(v);
    });
    assert_eq!(n, 1);
}

mod modules {
    use super::*;
    use breaker_core::retry::{Retry, RetryConfig};
    use breaker_core::timelimiter::TimeLimiter;

    fn retry_calls(retry: &Retry, n: u64) {
        for i in 0..n {
            let r = poll_once(retry.call(|| std::future::ready(Ok::<u64, String>(i))));
            assert_eq!(r, Ok(i));
        }
    }

    #[test]
    fn retry_first_attempt_success_allocates_nothing() {
        let plain = Retry::of_defaults("no-alloc-retry");
        let with_predicate = Retry::new(
            "no-alloc-retry-result",
            RetryConfig::builder()
                .retry_on_result(|v: &u64| *v == u64::MAX)
                .build()
                .expect("valid config"),
        );
        for retry in [&plain, &with_predicate] {
            retry_calls(retry, 100);
            let n = allocations_during(|| retry_calls(retry, CALLS));
            assert_eq!(n, 0, "{n} allocations in {CALLS} retry calls");
            let m = retry.metrics();
            assert_eq!(
                m.number_of_successful_calls_without_retry_attempt,
                CALLS + 100
            );
        }
    }

    #[test]
    fn retry_with_zero_waits_and_no_subscriber_allocates_nothing() {
        let retry = Retry::new(
            "no-alloc-retry-zero",
            RetryConfig::builder()
                .wait_duration(Duration::ZERO)
                .build()
                .expect("valid config"),
        );
        let run = |retry: &Retry| {
            for _ in 0..CALLS {
                let mut attempt = 0u32;
                let r = poll_once(retry.call(|| {
                    attempt += 1;
                    std::future::ready(if attempt < 3 {
                        Err(attempt)
                    } else {
                        Ok(attempt)
                    })
                }));
                assert_eq!(r, Ok(3));
            }
        };
        run(&retry);
        let n = allocations_during(|| run(&retry));
        assert_eq!(n, 0, "{n} allocations in {CALLS} retried calls");
    }

    #[test]
    fn retry_that_runs_out_or_meets_an_error_it_does_not_retry_allocates_nothing() {
        // Three attempts, 0 ms apart, all failing: the last error comes back as it is.
        let exhausted = Retry::new(
            "no-alloc-retry-exhausted",
            RetryConfig::builder()
                .wait_duration(Duration::ZERO)
                .build()
                .expect("valid config"),
        );
        // An error the predicate does not retry ends the call after one attempt.
        let not_retried = Retry::new(
            "no-alloc-retry-not-retried",
            RetryConfig::builder()
                .retry_on_exception(|e: &u32| *e != 7)
                .build()
                .expect("valid config"),
        );
        let run = |exhausted: &Retry, not_retried: &Retry| {
            for _ in 0..CALLS {
                let mut attempts = 0u32;
                let r = poll_once(exhausted.call(|| {
                    attempts += 1;
                    std::future::ready(Err::<u64, u32>(attempts))
                }));
                assert_eq!(r.map_err(|e| e.into_inner()), Err(Some(3)));
                let r = poll_once(not_retried.call(|| std::future::ready(Err::<u64, u32>(7))));
                assert_eq!(r.map_err(|e| e.into_inner()), Err(Some(7)));
            }
        };
        run(&exhausted, &not_retried);
        let n = allocations_during(|| run(&exhausted, &not_retried));
        assert_eq!(n, 0, "{n} allocations in {} failed retry calls", 2 * CALLS);
        let m = exhausted.metrics();
        assert_eq!(m.number_of_failed_calls_with_retry_attempt, 2 * CALLS);
        assert_eq!(m.number_of_total_calls, 3 * 2 * CALLS);
        let m = not_retried.metrics();
        assert_eq!(m.number_of_failed_calls_without_retry_attempt, 2 * CALLS);
    }

    #[test]
    fn time_limiter_ready_error_allocates_nothing() {
        let limiter = TimeLimiter::of_defaults("no-alloc-tl-error");
        let run = |l: &TimeLimiter| {
            for i in 0..CALLS {
                let r = poll_once(l.call(std::future::ready(Err::<u64, u64>(i))));
                assert_eq!(r.map_err(|e| e.into_inner()), Err(Some(i)));
            }
        };
        run(&limiter);
        let n = allocations_during(|| run(&limiter));
        assert_eq!(n, 0, "{n} allocations in {CALLS} time-limited errors");
        assert_eq!(limiter.metrics().number_of_failed_calls, 2 * CALLS);
    }

    #[test]
    fn time_limiter_ready_call_allocates_nothing() {
        let limiter = TimeLimiter::of_defaults("no-alloc-tl");
        let run = |l: &TimeLimiter| {
            for i in 0..CALLS {
                let r = poll_once(l.call(std::future::ready(Ok::<u64, String>(i))));
                assert_eq!(r, Ok(i));
            }
        };
        run(&limiter);
        let n = allocations_during(|| run(&limiter));
        assert_eq!(n, 0, "{n} allocations in {CALLS} time-limited calls");
        assert_eq!(limiter.metrics().number_of_successful_calls, 2 * CALLS);
    }
}
