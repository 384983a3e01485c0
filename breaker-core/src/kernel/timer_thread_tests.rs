//! The timer thread: a dropped wait leaves no entry; a wait completes; many waits share one
//! thread. Nothing here asserts how long a wait took (the machine may be loaded).

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::Duration;

use super::*;

struct Unpark(Thread, AtomicUsize);
impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.1.fetch_add(1, Ordering::SeqCst);
        self.0.unpark();
    }
}

/// A minimal executor (as `futures::executor::block_on`): polls on this thread, parks
/// between wakes.
fn block_on<F: Future>(f: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(thread::current(), AtomicUsize::new(0))));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        thread::park();
    }
}

fn noop_cx() -> Context<'static> {
    Context::from_waker(Waker::noop())
}

#[test]
fn a_dropped_wait_leaves_no_entry_behind() {
    // Other tests may wait on the same (process-wide) queue: only these waits' own entries
    // are looked at.
    let mut waits: Vec<_> = (0..100)
        .map(|i| Box::pin(ThreadSleep::new(Duration::from_secs(3600 + i))))
        .collect();
    for w in &mut waits {
        assert!(w.key().is_none(), "registered only when polled");
        assert!(w.as_mut().poll(&mut noop_cx()).is_pending());
    }
    let keys: Vec<_> = waits.iter().map(|w| w.key().unwrap()).collect();
    assert!(keys.iter().all(|k| registered(*k)));
    // Polled again: the same entry each.
    for w in &mut waits {
        assert!(w.as_mut().poll(&mut noop_cx()).is_pending());
    }
    assert_eq!(
        waits.iter().map(|w| w.key().unwrap()).collect::<Vec<_>>(),
        keys
    );
    waits.truncate(40);
    assert!(keys[..40].iter().all(|k| registered(*k)));
    assert!(keys[40..].iter().all(|k| !registered(*k)));
    drop(waits);
    assert!(keys.iter().all(|k| !registered(*k)));
}

#[test]
fn a_wait_completes_and_unregisters() {
    let mut a = Box::pin(ThreadSleep::new(Duration::from_millis(200)));
    // (Ready at once only if this thread was descheduled for 200 ms.)
    if a.as_mut().poll(&mut noop_cx()).is_pending() {
        let key = a.key().unwrap();
        block_on(a.as_mut());
        assert!(!registered(key), "a completed wait leaves no entry");
    }
    block_on(async {
        // Several at once, shortest last: each is woken, in any order.
        let a = ThreadSleep::new(Duration::from_millis(20));
        let b = ThreadSleep::new(Duration::from_millis(1));
        a.await;
        b.await;
    });
    // A zero wait is ready without registering.
    let mut z = pin!(ThreadSleep::new(Duration::ZERO));
    assert!(z.as_mut().poll(&mut noop_cx()).is_ready());
    assert!(z.key().is_none());
}

#[test]
fn an_earlier_wait_is_not_held_up_by_a_later_one() {
    // The thread sleeps towards an hour-long deadline; a 1 ms wait registered after it must
    // still complete (the thread is told about the earlier deadline).
    let mut long = Box::pin(ThreadSleep::new(Duration::from_secs(3600)));
    assert!(long.as_mut().poll(&mut noop_cx()).is_pending());
    block_on(ThreadSleep::new(Duration::from_millis(1)));
    drop(long);
}
