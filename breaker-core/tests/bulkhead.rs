//! Bulkhead behaviour beyond the conformance vectors (which never wait): `maxWaitDuration`
//! on the crate's clock, arrival order, waiters that give up or are dropped, permits
//! returned on error, panic and cancellation, the thread-pool bulkhead, registries, and the
//! deliberate differences from Resilience4j (pinned here, listed in the README).

mod common;

use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use breaker_core::bulkhead::{
    Bulkhead, BulkheadConfig, BulkheadError, BulkheadRegistry, RegistryEntryEvent,
    ThreadPoolBulkhead, ThreadPoolBulkheadConfig, ThreadPoolBulkheadRegistry,
};
use breaker_core::{ManualClock, RegistryError};

use common::poll;

fn config(max: i64, wait_ms: u64, clock: &ManualClock) -> BulkheadConfig {
    BulkheadConfig::builder()
        .max_concurrent_calls(max)
        .max_wait_duration(Duration::from_millis(wait_ms))
        .clock(Arc::new(clock.clone()))
        .build()
        .unwrap()
}

fn recorded(b: &Bulkhead) -> Arc<Mutex<Vec<&'static str>>> {
    let events: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let sink = events.clone();
    b.subscribe(move |e| sink.lock().unwrap().push(e.event_type.name()));
    events
}

#[test]
fn a_waiting_call_gets_the_next_free_permit_within_max_wait_duration() {
    let clock = ManualClock::at_epoch_millis(0);
    let b = Bulkhead::new("wait", config(1, 50, &clock));
    let events = recorded(&b);
    let held = b.try_acquire_permission().unwrap();
    let mut waiter = pin!(b.acquire_permission());
    assert!(poll(waiter.as_mut()).is_pending());
    clock.advance(Duration::from_millis(49));
    assert!(poll(waiter.as_mut()).is_pending());
    held.on_complete();
    let Poll::Ready(Ok(p)) = poll(waiter.as_mut()) else {
        panic!("served when the permit came back")
    };
    assert_eq!(b.metrics().available_concurrent_calls, 0);
    drop(p);
    assert_eq!(
        *events.lock().unwrap(),
        [
            "CALL_PERMITTED",
            "CALL_FINISHED",
            "CALL_PERMITTED",
            "CALL_FINISHED"
        ]
    );
}

#[test]
fn a_call_that_waits_out_max_wait_duration_is_rejected_and_consumes_nothing() {
    let clock = ManualClock::at_epoch_millis(0);
    let b = Bulkhead::new("timeout", config(1, 50, &clock));
    let held = b.try_acquire_permission().unwrap();
    let mut waiter = pin!(b.acquire_permission());
    assert!(poll(waiter.as_mut()).is_pending());
    assert_eq!(clock.pending_sleeps(), 1);
    clock.advance(Duration::from_millis(50));
    let Poll::Ready(Err(e)) = poll(waiter.as_mut()) else {
        panic!("rejected after 50 ms")
    };
    assert_eq!(
        e.to_string(),
        "Bulkhead 'timeout' is full and does not permit further calls"
    );
    held.on_complete();
    // The permit went back to the pool, not to the waiter that left.
    assert_eq!(b.metrics().available_concurrent_calls, 1);
}

#[test]
fn waiters_are_served_in_arrival_order_and_a_dropped_one_is_skipped() {
    let clock = ManualClock::at_epoch_millis(0);
    let b = Bulkhead::new("fifo", config(1, 1_000, &clock));
    let held = b.try_acquire_permission().unwrap();
    let mut first = Box::pin(b.acquire_permission());
    let mut second = Box::pin(b.acquire_permission());
    let mut third = Box::pin(b.acquire_permission());
    for w in [&mut first, &mut second, &mut third] {
        assert!(poll(w.as_mut()).is_pending());
    }
    // A fair bulkhead admits no newcomer while calls wait, even when asked not to wait.
    assert!(b.try_acquire_permission().is_err());
    drop(second);
    held.on_complete();
    assert!(
        poll(third.as_mut()).is_pending(),
        "third arrived after first"
    );
    let Poll::Ready(Ok(p1)) = poll(first.as_mut()) else {
        panic!("first is served first")
    };
    p1.on_complete();
    let Poll::Ready(Ok(p3)) = poll(third.as_mut()) else {
        panic!("then third; second left the queue")
    };
    p3.on_complete();
    assert_eq!(b.metrics().available_concurrent_calls, 1);
}

#[test]
fn a_non_fair_bulkhead_lets_a_new_call_take_a_permit_past_a_waiting_decrease() {
    let clock = ManualClock::at_epoch_millis(0);
    let b = Bulkhead::new(
        "barging",
        BulkheadConfig::builder()
            .max_concurrent_calls(2)
            .fair_call_handling_strategy_enabled(false)
            .clock(Arc::new(clock.clone()))
            .build()
            .unwrap(),
    );
    let (p1, p2) = (
        b.try_acquire_permission().unwrap(),
        b.try_acquire_permission().unwrap(),
    );
    b.change_config(config(0, 0, &clock));
    assert!(b.is_config_change_pending());
    p1.on_complete();
    let barged = b.try_acquire_permission().expect("non-fair: barges");
    p2.on_complete();
    assert!(b.is_config_change_pending(), "needs both permits at once");
    barged.on_complete();
    assert!(!b.is_config_change_pending());
    assert_eq!(b.metrics().max_allowed_concurrent_calls, 0);
    assert!(b.try_acquire_permission().is_err());
}

#[tokio::test]
async fn every_admitted_call_returns_its_permit_on_success_error_panic_and_cancellation() {
    let b = Bulkhead::new(
        "always-returned",
        BulkheadConfig::builder()
            .max_concurrent_calls(1)
            .build()
            .unwrap(),
    );
    let events = recorded(&b);
    assert_eq!(b.call(async { Ok::<_, ()>(1) }).await, Ok(1));
    assert_eq!(
        b.call(async { Err::<(), _>("boom") }).await,
        Err(BulkheadError::Inner("boom"))
    );
    let panicked = {
        let b = b.clone();
        tokio::spawn(async move {
            b.call(async { panic!("inside") }).await as Result<(), BulkheadError<()>>
        })
        .await
    };
    assert!(panicked.unwrap_err().is_panic());
    let cancelled = tokio::time::timeout(
        Duration::from_millis(1),
        b.call(std::future::pending::<Result<(), ()>>()),
    )
    .await;
    assert!(cancelled.is_err());
    assert_eq!(b.metrics().available_concurrent_calls, 1);
    assert_eq!(
        events.lock().unwrap().len(),
        8,
        "PERMITTED + FINISHED for each of the 4 calls"
    );
    // A call the bulkhead rejects is not polled.
    let held = b.try_acquire_permission().unwrap();
    let r = b
        .call(async { unreachable!("not run") as Result<(), ()> })
        .await;
    assert!(r.unwrap_err().is_full());
    held.release();
}

#[test]
fn a_release_without_an_acquire_changes_nothing_unless_exact() {
    // Resilience4j: onComplete() without a permit raises the capacity for good (vector
    // hand_005). Fixed here; exact mode keeps it.
    let clock = ManualClock::at_epoch_millis(0);
    let fixed = Bulkhead::new("guarded", config(2, 0, &clock));
    let events = recorded(&fixed);
    fixed.on_complete();
    fixed.release_permission();
    assert_eq!(fixed.metrics().available_concurrent_calls, 2);
    assert!(events.lock().unwrap().is_empty(), "nothing finished");
    let p = fixed.try_acquire_permission().unwrap();
    p.forget();
    fixed.on_complete(); // the detached permit comes back through the manual API
    assert_eq!(fixed.metrics().available_concurrent_calls, 2);
    assert_eq!(*events.lock().unwrap(), ["CALL_PERMITTED", "CALL_FINISHED"]);

    let exact = Bulkhead::new(
        "exact",
        config(2, 0, &clock)
            .to_builder()
            .exact_resilience4j(true)
            .build()
            .unwrap(),
    );
    exact.on_complete();
    exact.release_permission();
    assert_eq!(exact.metrics().available_concurrent_calls, 4);
    assert_eq!(exact.metrics().max_allowed_concurrent_calls, 2);
}

#[test]
fn change_config_never_blocks_and_a_later_change_replaces_a_waiting_decrease() {
    let clock = ManualClock::at_epoch_millis(0);
    let b = Bulkhead::new("resize", config(3, 0, &clock));
    let permits: Vec<_> = (0..3)
        .map(|_| b.try_acquire_permission().unwrap())
        .collect();
    b.change_config(config(1, 0, &clock)); // returns at once; waits for 2 permits
    assert!(b.is_config_change_pending());
    assert_eq!(b.metrics().max_allowed_concurrent_calls, 3);
    b.change_config(config(4, 0, &clock)); // replaces it: +1 from the config in force (3)
    assert!(!b.is_config_change_pending());
    assert_eq!(b.metrics().max_allowed_concurrent_calls, 4);
    assert_eq!(b.metrics().available_concurrent_calls, 1);
    drop(permits);
    assert_eq!(b.metrics().available_concurrent_calls, 4);
}

#[tokio::test]
async fn the_thread_pool_bulkhead_runs_max_queues_capacity_and_rejects_at_submission() {
    let pool = ThreadPoolBulkhead::new(
        "tp",
        ThreadPoolBulkheadConfig::builder()
            .max_thread_pool_size(1)
            .core_thread_pool_size(1)
            .queue_capacity(1)
            .build()
            .unwrap(),
    );
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = events.clone();
    pool.subscribe(move |e| sink.lock().unwrap().push(e.event_type.name().to_string()));
    let (release_first, first_may_end) = tokio::sync::oneshot::channel::<()>();
    let mut t1 = Box::pin(
        pool.submit(async move { first_may_end.await.unwrap() })
            .unwrap(),
    );
    let mut t2 = Box::pin(pool.submit(async { 2 }).unwrap());
    let full = pool.submit(async { 3 }).map(drop).unwrap_err();
    assert_eq!(full.bulkhead_name(), "tp");
    assert_eq!(
        full.to_string(),
        "Bulkhead 'tp' is full and does not permit further calls"
    );
    assert!(poll(t1.as_mut()).is_pending());
    assert!(poll(t2.as_mut()).is_pending());
    let m = pool.metrics();
    assert_eq!(
        (
            m.queue_depth,
            m.remaining_queue_capacity,
            m.active_thread_count,
            m.available_thread_count
        ),
        (1, 0, 1, 0)
    );
    release_first.send(()).unwrap();
    t1.await;
    assert_eq!(t2.await, 2);
    // Resilience4j's verified sequence: a queued task publishes nothing until it starts.
    assert_eq!(
        *events.lock().unwrap(),
        [
            "CALL_REJECTED",
            "CALL_PERMITTED",
            "CALL_FINISHED",
            "CALL_PERMITTED",
            "CALL_FINISHED"
        ]
    );
    assert_eq!(pool.metrics().available_thread_count, 1);
}

#[test]
fn a_thread_pool_submission_dropped_while_queued_leaves_the_queue_silently() {
    let pool = ThreadPoolBulkhead::new(
        "tp-drop",
        ThreadPoolBulkheadConfig::builder()
            .max_thread_pool_size(1)
            .core_thread_pool_size(1)
            .queue_capacity(0)
            .build()
            .unwrap(),
    );
    let running = pool.submit(async {}).unwrap();
    assert!(
        pool.submit(async {}).is_err(),
        "queueCapacity 0: no waiting"
    );
    drop(running); // never polled: its slot is returned without an event
    assert_eq!(pool.metrics().available_thread_count, 1);
    let m = pool.metrics();
    assert_eq!(
        (m.queue_capacity, m.queue_depth, m.remaining_queue_capacity),
        (0, 0, 0)
    );
}

#[test]
fn registries_create_share_and_reconfigure_bulkheads() {
    let registry = BulkheadRegistry::new();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let s = seen.clone();
    registry.subscribe(move |e| {
        s.lock().unwrap().push(match e {
            RegistryEntryEvent::Added(b) => format!("added {}", b.name()),
            RegistryEntryEvent::Replaced { instance, old, new } => format!(
                "replaced {} {}->{}",
                instance.name(),
                old.max_concurrent_calls(),
                new.max_concurrent_calls()
            ),
            RegistryEntryEvent::Removed(b) => format!("removed {}", b.name()),
        })
    });
    let a = registry.bulkhead("a");
    assert_eq!(a.metrics().max_allowed_concurrent_calls, 25);
    let small = BulkheadConfig::builder()
        .max_concurrent_calls(2)
        .build()
        .unwrap();
    registry.add_configuration("small", small.clone()).unwrap();
    assert_eq!(
        registry.add_configuration("default", small.clone()),
        Err(RegistryError::DefaultIsReserved)
    );
    let b = registry.bulkhead_with_config_name("b", "small").unwrap();
    assert_eq!(b.metrics().max_allowed_concurrent_calls, 2);
    assert!(matches!(
        registry.bulkhead_with_config_name("c", "nope"),
        Err(RegistryError::ConfigurationNotFound(_))
    ));
    registry.configure_instance("a", small);
    assert_eq!(a.metrics().available_concurrent_calls, 2);
    registry.remove("a");
    assert_eq!(
        *seen.lock().unwrap(),
        ["added a", "added b", "replaced a 25->2", "removed a"]
    );
    registry.enable_event_buffers();
    registry.set_event_consumer_buffer_size("b", 1);
    let b2 = registry.bulkhead("b");
    drop(b2.try_acquire_permission().unwrap());
    let buffered = registry.recent_events("b").unwrap();
    assert_eq!(
        buffered.len(),
        2,
        "the buffer was attached with the default size"
    );

    let pools = ThreadPoolBulkheadRegistry::with_default_config(
        ThreadPoolBulkheadConfig::builder()
            .max_thread_pool_size(3)
            .core_thread_pool_size(1)
            .build()
            .unwrap(),
    );
    assert_eq!(pools.bulkhead("p").metrics().maximum_thread_pool_size, 3);
}

#[test]
fn a_removed_bulkhead_stops_feeding_its_registry_event_buffer() {
    use breaker_core::RegistryInstance;
    let registry = BulkheadRegistry::new();
    registry.enable_event_buffers();
    let a = registry.bulkhead("a");
    assert!(a.event_publisher().any(), "the buffer subscribed");
    assert_eq!(
        format!("{registry:?}"),
        r#"BulkheadRegistry { instances: ["a"], .. }"#
    );
    assert!(registry.remove("a").is_some());
    assert!(
        !a.event_publisher().any(),
        "nothing left to build events for"
    );
    assert_eq!(registry.recent_events("a"), None);
}
