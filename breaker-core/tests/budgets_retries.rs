//! Retries that do not multiply (issue 27): nested retries with `nested-retries:
//! outermost`, and a retry budget (gRPC retry throttling / Finagle `RetryBudget`). Expected
//! counts are worked out from the settings in each test.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breaker_core::deadline::{self, Deadline};
use breaker_core::retry::{
    NestedRetries, Retry, RetryBudgetConfig, RetryBudgets, RetryConfig, RetryError,
};
use breaker_core::{Clock, ManualClock};

/// Every wait here is 0 ms: the calls finish in one poll.
fn ready<F: Future>(fut: F) -> F::Output {
    match pin!(fut).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("a call with 0 ms waits parked"),
    }
}

fn retry(name: &str, clock: &ManualClock, budgets: RetryBudgets) -> Retry {
    Retry::new(
        name,
        RetryConfig::builder()
            .max_attempts(3)
            .wait_duration(Duration::ZERO)
            .clock(Arc::new(clock.clone()))
            .budgets(budgets)
            .build()
            .unwrap(),
    )
}

type Failing = Result<(), RetryError<RetryError<RetryError<String>>>>;

/// Three nested retried layers around a dependency that always fails: its calls.
fn three_layers(settings: [Option<NestedRetries>; 3]) -> (u32, [u64; 3]) {
    let clock = ManualClock::at_epoch_millis(0);
    let layer = |name, s| {
        retry(
            name,
            &clock,
            RetryBudgets {
                nested_retries: s,
                ..RetryBudgets::default()
            },
        )
    };
    let (outer, middle, inner) = (
        layer("outer", settings[0]),
        layer("middle", settings[1]),
        layer("inner", settings[2]),
    );
    let calls = AtomicU32::new(0);
    let r: Failing = ready(outer.call(|| {
        middle.call(|| {
            inner.call(|| async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err::<(), _>("down".to_string())
            })
        })
    }));
    assert!(r.is_err());
    let suppressed =
        [&outer, &middle, &inner].map(|r| r.budget_metrics().number_of_suppressed_nested_retries);
    (calls.load(Ordering::SeqCst), suppressed)
}

#[test]
fn three_nested_layers_of_three_attempts_make_27_calls_by_default() {
    assert_eq!(three_layers([None, None, None]), (27, [0, 0, 0]));
    // `all` is Resilience4j's behaviour too (it only marks the attempts, for the warning).
    let all = Some(NestedRetries::All);
    assert_eq!(three_layers([all, all, all]), (27, [0, 0, 0]));
}

#[test]
fn outermost_only_makes_3_calls() {
    let o = Some(NestedRetries::Outermost);
    // The outer retry makes 3 attempts; in each, middle and inner make one attempt and
    // count one suppressed retry: 3 calls, 3 suppressed in each inner layer.
    assert_eq!(three_layers([o, o, o]), (3, [0, 3, 3]));
    // Set on the outermost only, it applies to every retry inside it.
    assert_eq!(three_layers([o, None, None]), (3, [0, 3, 3]));
    // Set on the innermost only (once any config sets `nested-retries`, every retry marks
    // its attempts): the middle layer still multiplies the outer one.
    assert_eq!(three_layers([None, None, o]), (9, [0, 0, 9]));
}

#[test]
fn nesting_is_seen_inside_a_deadline_without_any_setting() {
    // In a deadline scope every retry marks its attempts: the outermost-only setting of the
    // middle layer applies to the inner one, whose own config sets nothing.
    let clock = ManualClock::at_epoch_millis(0);
    let outer = retry("outer", &clock, RetryBudgets::default());
    let middle = retry(
        "middle",
        &clock,
        RetryBudgets {
            nested_retries: Some(NestedRetries::Outermost),
            ..RetryBudgets::default()
        },
    );
    let inner = retry("inner", &clock, RetryBudgets::default());
    let calls = AtomicU32::new(0);
    let call = outer.call(|| {
        middle.call(|| {
            inner.call(|| async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err::<(), _>("down".to_string())
            })
        })
    });
    let r: Failing = ready(deadline::with_deadline_at(
        Deadline::after(Duration::from_secs(60), Arc::new(clock.clone())),
        call,
    ));
    assert!(r.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(
        inner.budget_metrics().number_of_suppressed_nested_retries,
        3
    );
}

/// `incoming` calls against a dependency that always fails, through a retry of 3 attempts
/// with `budget`: the calls the dependency receives, and the retry's event kinds.
fn outage(incoming: u32, budget: Option<RetryBudgetConfig>) -> (u32, Retry, Vec<String>) {
    let clock = ManualClock::at_epoch_millis(0);
    let retry = retry(
        "dependency",
        &clock,
        RetryBudgets {
            budget,
            ..RetryBudgets::default()
        },
    );
    let kinds = Arc::new(Mutex::new(Vec::new()));
    let seen = kinds.clone();
    retry.subscribe(move |e| seen.lock().unwrap().push(e.event_type.name().to_string()));
    let calls = AtomicU32::new(0);
    for _ in 0..incoming {
        let r: Result<(), RetryError<String>> = ready(retry.call(|| async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err("down".to_string())
        }));
        assert!(r.is_err());
        clock.advance(Duration::from_millis(10));
    }
    let kinds = kinds.lock().unwrap().clone();
    (calls.load(Ordering::SeqCst), retry, kinds)
}

#[test]
fn without_a_budget_an_outage_triples_the_load() {
    let (calls, retry, _) = outage(100, None);
    assert_eq!(calls, 300);
    assert_eq!(retry.budget_metrics().number_of_budget_exhausted_calls, 0);
}

#[test]
fn a_20_percent_budget_keeps_the_load_at_1_2x() {
    // 100 calls in 1 s (10 ms apart, all inside the 10 s window), no floor: after call k
    // the window allows floor(0.2 k) retries, so 20 retries in all: 120 calls.
    let budget = RetryBudgetConfig {
        ratio: 0.2,
        min_retries_per_second: 0,
        window: Duration::from_secs(10),
    };
    let (calls, retry, kinds) = outage(100, Some(budget));
    assert_eq!(calls, 120);
    assert!(f64::from(calls) <= 1.2 * 100.0);
    // Each call that retried at least once ended with ERROR or BUDGET_EXHAUSTED; 20
    // retries spread one per 5 calls: 20 calls retried once and were then refused a
    // second retry, 80 were refused their first.
    let m = retry.budget_metrics();
    assert_eq!(m.number_of_budget_exhausted_calls, 100);
    assert_eq!(kinds.iter().filter(|k| *k == "RETRY").count(), 20);
    assert_eq!(
        kinds.iter().filter(|k| *k == "BUDGET_EXHAUSTED").count(),
        100
    );
    assert_eq!(
        retry.metrics().number_of_failed_calls_with_retry_attempt,
        100
    );
}

#[test]
fn the_floor_adds_its_retries_per_second_of_the_window() {
    // Floor 1/s over a 10 s window: 10 more retries. Calls 1 to 5 take 2 retries each
    // (10 <= 10 + 0.2 k), then floor(10 + 0.2 k) grows by one every 5 calls: 30 retries
    // after 100 calls: 130 = 1.2 x 100 + 10.
    let budget = RetryBudgetConfig {
        ratio: 0.2,
        min_retries_per_second: 1,
        window: Duration::from_secs(10),
    };
    let (calls, _, _) = outage(100, Some(budget));
    assert_eq!(calls, 130);
}

#[test]
fn the_window_forgets_old_calls() {
    // 10 calls, then 11 s later: the retries and calls of the first second are out of the
    // window; with no floor, a lone call has 0.2 retries: none.
    let clock = ManualClock::at_epoch_millis(0);
    let retry = retry(
        "w",
        &clock,
        RetryBudgets {
            budget: Some(RetryBudgetConfig {
                ratio: 0.5,
                min_retries_per_second: 0,
                window: Duration::from_secs(10),
            }),
            ..RetryBudgets::default()
        },
    );
    let calls = AtomicU32::new(0);
    let run = || {
        let r: Result<(), RetryError<String>> = ready(retry.call(|| async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err("down".to_string())
        }));
        assert!(r.is_err());
    };
    for _ in 0..10 {
        run();
    }
    // 10 calls at 0.5: 5 retries.
    assert_eq!(calls.load(Ordering::SeqCst), 15);
    clock.advance(Duration::from_secs(11));
    run();
    assert_eq!(calls.load(Ordering::SeqCst), 16);
    run();
    // 2 calls in the window at 0.5: one retry.
    assert_eq!(calls.load(Ordering::SeqCst), 18);
}

#[test]
fn budget_settings_are_validated() {
    let bad = |budget| {
        RetryConfig::builder()
            .budgets(RetryBudgets {
                budget: Some(budget),
                ..RetryBudgets::default()
            })
            .build()
            .unwrap_err()
            .to_string()
    };
    let e = bad(RetryBudgetConfig {
        ratio: 1.5,
        ..RetryBudgetConfig::default()
    });
    assert!(
        e.contains("budget.ratio must be between 0.0 and 1.0, was 1.5"),
        "{e}"
    );
    let e = bad(RetryBudgetConfig {
        window: Duration::from_millis(10),
        ..RetryBudgetConfig::default()
    });
    assert!(e.contains("budget.window must be between 1s and 1h"), "{e}");
    // Finagle's defaults.
    assert_eq!(
        RetryBudgetConfig::default(),
        RetryBudgetConfig {
            ratio: 0.2,
            min_retries_per_second: 10,
            window: Duration::from_secs(10)
        }
    );
    let _: Arc<dyn Clock> = Arc::new(ManualClock::default());
}
