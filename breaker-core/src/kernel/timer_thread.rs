//! The library's own timer: one thread per process with a deadline queue, for real-time
//! waits where no tokio timer is available (breaker-core without its `tokio` feature, smol,
//! async-std, a plain executor, or a tokio runtime built without `enable_time`).
//!
//! A wait registers its deadline and waker; the thread sleeps until the earliest deadline,
//! then removes and wakes every entry that is due. Dropping a wait removes its entry at once,
//! so an abandoned wait costs nothing afterwards (it used to keep a thread sleeping out its
//! whole duration). The thread is started on the first wait and parks while there is none.
//! If it cannot be started, a wait asks to be polled again instead of blocking the executor,
//! and the next wait tries to start it again.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// The waits, by (deadline, id), and whether the thread runs.
#[derive(Default)]
struct Queue {
    next_id: u64,
    waiting: BTreeMap<(Instant, u64), Waker>,
    running: bool,
}

struct Timer {
    queue: Mutex<Queue>,
    /// Signalled when an earlier deadline arrives.
    changed: Condvar,
}

fn timer() -> &'static Timer {
    static TIMER: OnceLock<Timer> = OnceLock::new();
    TIMER.get_or_init(|| Timer {
        queue: Mutex::new(Queue::default()),
        changed: Condvar::new(),
    })
}

fn lock(t: &Timer) -> MutexGuard<'_, Queue> {
    t.queue.lock().unwrap_or_else(|p| p.into_inner())
}

/// The thread: wakes every due entry, then sleeps until the next deadline.
fn run(t: &'static Timer) {
    let mut q = lock(t);
    loop {
        let now = Instant::now();
        let later = q.waiting.split_off(&(now, u64::MAX));
        let due = std::mem::replace(&mut q.waiting, later);
        if !due.is_empty() {
            drop(q);
            due.into_values().for_each(Waker::wake);
            q = lock(t);
            continue;
        }
        q = match q.waiting.keys().next() {
            Some(&(deadline, _)) => {
                let wait = deadline.saturating_duration_since(now);
                t.changed
                    .wait_timeout(q, wait)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
            None => t.changed.wait(q).unwrap_or_else(|p| p.into_inner()),
        };
    }
}

/// Starts the thread if it does not run; `false` if it could not be started.
fn ensure_running(t: &'static Timer, q: &mut Queue) -> bool {
    if q.running {
        return true;
    }
    let spawned = std::thread::Builder::new()
        .name("breaker-timer".into())
        .spawn(move || run(t));
    q.running = spawned.is_ok();
    if !q.running {
        tracing::warn!("breaker: cannot start the timer thread; waits poll until due");
    }
    q.running
}

/// A real-time wait on the timer thread. Dropping it removes its entry.
pub(crate) struct ThreadSleep {
    deadline: Instant,
    id: Option<u64>,
}

impl ThreadSleep {
    pub(crate) fn new(duration: Duration) -> Self {
        let now = Instant::now();
        ThreadSleep {
            deadline: now
                .checked_add(duration)
                .unwrap_or(now + Duration::from_secs(1 << 40)),
            id: None,
        }
    }

    fn unregister(&mut self) {
        if let Some(id) = self.id.take() {
            lock(timer()).waiting.remove(&(self.deadline, id));
        }
    }
}

impl Future for ThreadSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            self.unregister();
            return Poll::Ready(());
        }
        let t = timer();
        let mut q = lock(t);
        let id = match self.id {
            Some(id) => id,
            None => {
                q.next_id += 1;
                q.next_id
            }
        };
        let key = (self.deadline, id);
        let earliest = q.waiting.keys().next().is_none_or(|k| key < *k);
        match q.waiting.get_mut(&key) {
            Some(w) if w.will_wake(cx.waker()) => {}
            Some(w) => w.clone_from(cx.waker()),
            None => {
                q.waiting.insert(key, cx.waker().clone());
            }
        }
        self.id = Some(id);
        if !ensure_running(t, &mut q) {
            drop(q);
            // No timer thread: be polled again rather than block the executor.
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        drop(q);
        if earliest {
            t.changed.notify_one();
        }
        Poll::Pending
    }
}

impl Drop for ThreadSleep {
    fn drop(&mut self) {
        self.unregister();
    }
}

/// The key a wait is registered under, once it is (tests).
#[cfg(all(test, not(loom)))]
impl ThreadSleep {
    pub(crate) fn key(&self) -> Option<(Instant, u64)> {
        self.id.map(|id| (self.deadline, id))
    }
}

/// Whether a wait with this key is registered with the timer thread (tests).
#[cfg(all(test, not(loom)))]
pub(crate) fn registered(key: (Instant, u64)) -> bool {
    lock(timer()).waiting.contains_key(&key)
}

#[cfg(all(test, not(loom)))]
#[path = "timer_thread_tests.rs"]
mod tests;
