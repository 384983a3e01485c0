use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::*;
use crate::ManualClock;

fn poll_once<F: Future>(fut: F) -> Poll<F::Output> {
    let mut fut = pin!(fut);
    fut.as_mut().poll(&mut Context::from_waker(Waker::noop()))
}

fn clock_at(ms: u64) -> (ManualClock, Arc<dyn Clock>) {
    let clock = ManualClock::at_epoch_millis(ms);
    let shared: Arc<dyn Clock> = Arc::new(clock.clone());
    (clock, shared)
}

#[test]
fn no_scope_means_no_deadline() {
    assert!(current().is_none());
    assert_eq!(remaining(), None);
    assert_eq!(check(), Ok(()));
    assert_eq!(clamp(Duration::from_secs(7)), Duration::from_secs(7));
}

#[test]
fn the_scope_is_seen_only_while_its_future_is_polled() {
    let (clock, shared) = clock_at(1_000);
    let left = poll_once(with_deadline_at(
        Deadline::after(Duration::from_secs(5), shared),
        async {
            clock.advance(Duration::from_millis(1_500));
            (
                remaining(),
                clamp(Duration::from_secs(10)),
                clamp(Duration::from_secs(1)),
            )
        },
    ));
    assert_eq!(
        left,
        Poll::Ready((
            Some(Duration::from_millis(3_500)),
            Duration::from_millis(3_500),
            Duration::from_secs(1)
        ))
    );
    assert_eq!(remaining(), None, "restored after the poll");
}

#[test]
fn an_inner_deadline_never_extends_the_outer_one() {
    let (_clock, shared) = clock_at(0);
    let outer = Deadline::after(Duration::from_secs(3), shared.clone());
    let inner = Deadline::after(Duration::from_secs(5), shared.clone());
    let shorter = Deadline::after(Duration::from_secs(1), shared);
    let seen = poll_once(with_deadline_at(outer, async move {
        let a = with_deadline_at(inner, async { remaining() }).await;
        let b = with_deadline_at(shorter, async { remaining() }).await;
        (a, b, remaining())
    }));
    assert_eq!(
        seen,
        Poll::Ready((
            Some(Duration::from_secs(3)),
            Some(Duration::from_secs(1)),
            Some(Duration::from_secs(3))
        ))
    );
}

#[test]
fn a_passed_deadline_is_expired_and_checked() {
    let (clock, shared) = clock_at(0);
    let seen = poll_once(with_deadline_at(
        Deadline::after(Duration::from_millis(200), shared),
        async {
            let before = (expired(), check());
            clock.advance(Duration::from_millis(200));
            (before, expired(), check(), remaining())
        },
    ));
    assert_eq!(
        seen,
        Poll::Ready((
            (false, Ok(())),
            true,
            Err(DeadlineExceeded),
            Some(Duration::ZERO)
        ))
    );
}

#[test]
fn a_panicking_poll_restores_the_outer_scope() {
    let (_clock, shared) = clock_at(0);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        poll_once(with_deadline_at(
            Deadline::after(Duration::from_secs(1), shared),
            async { panic!("boom") },
        ))
    }));
    assert!(r.is_err());
    assert_eq!(remaining(), None);
}
