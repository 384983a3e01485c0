//! The timer thread: a dropped wait leaves no entry; a wait completes; many waits share one
//! thread. Nothing here asserts how long a wait took (the machine may be loaded).

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::Duration;

use super::*;

/// The tests share the process-wide queue: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

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
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let before = pending();
    let mut waits: Vec<_> = (0..100)
        .map(|i| Box::pin(ThreadSleep::new(Duration::from_secs(3600 + i))))
        .collect();
    for w in &mut waits {
        assert!(w.as_mut().poll(&mut noop_cx()).is_pending());
    }
    assert_eq!(pending(), before + 100);
    // Polled again: still one entry each.
    for w in &mut waits {
        assert!(w.as_mut().poll(&mut noop_cx()).is_pending());
    }
    assert_eq!(pending(), before + 100);
    waits.truncate(40);
    assert_eq!(pending(), before + 40);
    drop(waits);
    assert_eq!(pending(), before);
}

#[test]
fn a_wait_completes_and_unregisters() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let before = pending();
    block_on(ThreadSleep::new(Duration::from_millis(5)));
    block_on(async {
        // Several at once, shortest last: each is woken, in any order.
        let a = ThreadSleep::new(Duration::from_millis(20));
        let b = ThreadSleep::new(Duration::from_millis(1));
        a.await;
        b.await;
    });
    assert_eq!(pending(), before);
    // A zero wait is ready without registering.
    let mut z = pin!(ThreadSleep::new(Duration::ZERO));
    assert!(z.as_mut().poll(&mut noop_cx()).is_ready());
    assert_eq!(pending(), before);
}

#[test]
fn an_earlier_wait_is_not_held_up_by_a_later_one() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // The thread sleeps towards an hour-long deadline; a 1 ms wait registered after it must
    // still complete (the thread is told about the earlier deadline).
    let mut long = Box::pin(ThreadSleep::new(Duration::from_secs(3600)));
    assert!(long.as_mut().poll(&mut noop_cx()).is_pending());
    block_on(ThreadSleep::new(Duration::from_millis(1)));
    drop(long);
}
