//! Waiting on a [`Clock`](crate::Clock): the retry wait between attempts, a rate limiter's
//! reservation, a bulkhead's `maxWaitDuration`, a time limiter's `timeoutDuration`.
//!
//! [`Clock::sleep`](crate::Clock::sleep) returns a [`Sleep`] future. On the real clocks it is a
//! tokio timer (feature `tokio`, inside a runtime) or, outside a runtime, a timer thread; on a
//! [`ManualClock`](crate::ManualClock) it completes when the clock is advanced to its deadline,
//! so tests and simulations never sleep for real.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// A future that completes once its clock reaches a deadline. Dropping it cancels the wait.
///
/// Returned by [`Clock::sleep`](crate::Clock::sleep) and
/// [`Clock::sleep_until`](crate::Clock::sleep_until).
#[must_use = "a Sleep does nothing unless awaited"]
pub struct Sleep {
    inner: Pin<Box<dyn Future<Output = ()> + Send + 'static>>,
}

impl Sleep {
    /// Wraps any future as a `Sleep` (for [`Clock`](crate::Clock) implementations of
    /// custom time sources).
    pub fn from_future(future: impl Future<Output = ()> + Send + 'static) -> Self {
        Sleep {
            inner: Box::pin(future),
        }
    }

    /// A `Sleep` that is already complete.
    pub fn ready() -> Self {
        Sleep::from_future(std::future::ready(()))
    }

    /// Real time: a tokio timer when called inside a tokio runtime (feature `tokio`),
    /// otherwise a short-lived timer thread.
    pub fn real(duration: Duration) -> Self {
        if duration.is_zero() {
            return Sleep::ready();
        }
        #[cfg(feature = "tokio")]
        if tokio::runtime::Handle::try_current().is_ok() {
            return Sleep::from_future(tokio::time::sleep(duration));
        }
        Sleep::from_future(ThreadSleep::new(duration))
    }
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.inner.as_mut().poll(cx)
    }
}

impl fmt::Debug for Sleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sleep")
    }
}

// ----- outside a runtime: one timer thread per wait ---------------------------------------

struct ThreadShared {
    done: bool,
    waker: Option<Waker>,
}

/// Real-time sleep without a runtime: a thread sleeps, then wakes the task.
struct ThreadSleep {
    duration: Duration,
    shared: Option<Arc<Mutex<ThreadShared>>>,
}

impl ThreadSleep {
    fn new(duration: Duration) -> Self {
        ThreadSleep {
            duration,
            shared: None,
        }
    }
}

impl Future for ThreadSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let duration = self.duration;
        let shared = self.shared.get_or_insert_with(|| {
            let shared = Arc::new(Mutex::new(ThreadShared {
                done: false,
                waker: None,
            }));
            let theirs = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name("breaker-sleep".into())
                .spawn(move || {
                    std::thread::sleep(duration);
                    let mut s = theirs.lock().unwrap_or_else(|p| p.into_inner());
                    s.done = true;
                    if let Some(w) = s.waker.take() {
                        w.wake();
                    }
                });
            if spawned.is_err() {
                // No thread: block this task for the duration rather than never waking it.
                std::thread::sleep(duration);
                shared.lock().unwrap_or_else(|p| p.into_inner()).done = true;
            }
            shared
        });
        let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
        if s.done {
            Poll::Ready(())
        } else {
            s.waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

// ----- ManualClock: sleepers woken by advance() ------------------------------------------

/// The waiting tasks of one [`ManualClock`](crate::ManualClock), by (deadline, id).
#[derive(Default)]
pub(crate) struct Sleepers {
    next_id: u64,
    waiting: BTreeMap<(u64, u64), Option<Waker>>,
}

impl fmt::Debug for Sleepers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sleepers")
            .field("waiting", &self.waiting.len())
            .finish()
    }
}

impl Sleepers {
    /// Wakes every sleeper whose deadline is at or before `now`.
    pub(crate) fn wake_due(this: &Mutex<Sleepers>, now: u64) {
        let due: Vec<Waker> = {
            let mut s = this.lock().unwrap_or_else(|p| p.into_inner());
            let later = s.waiting.split_off(&(now.saturating_add(1), 0));
            let due = std::mem::replace(&mut s.waiting, later);
            due.into_values().flatten().collect()
        };
        for w in due {
            w.wake();
        }
    }

    pub(crate) fn len(this: &Mutex<Sleepers>) -> usize {
        this.lock().unwrap_or_else(|p| p.into_inner()).waiting.len()
    }

    pub(crate) fn next_deadline(this: &Mutex<Sleepers>) -> Option<u64> {
        let s = this.lock().unwrap_or_else(|p| p.into_inner());
        s.waiting.keys().next().map(|(deadline, _)| *deadline)
    }
}

/// A wait on a manual clock: registered at its deadline until the clock gets there.
pub(crate) struct ManualSleep {
    pub(crate) deadline: u64,
    pub(crate) now: Arc<dyn Fn() -> u64 + Send + Sync>,
    pub(crate) sleepers: Weak<Mutex<Sleepers>>,
    pub(crate) id: Option<u64>,
}

impl Future for ManualSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if (self.now)() >= self.deadline {
            self.unregister();
            return Poll::Ready(());
        }
        let Some(sleepers) = self.sleepers.upgrade() else {
            // The clock is gone: nobody can advance it any more.
            return Poll::Pending;
        };
        let mut s = sleepers.lock().unwrap_or_else(|p| p.into_inner());
        let id = match self.id {
            Some(id) => id,
            None => {
                let id = s.next_id;
                s.next_id += 1;
                id
            }
        };
        s.waiting
            .insert((self.deadline, id), Some(cx.waker().clone()));
        drop(s);
        self.id = Some(id);
        // The clock may have moved between the check and the registration.
        if (self.now)() >= self.deadline {
            self.unregister();
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl ManualSleep {
    fn unregister(&mut self) {
        if let (Some(id), Some(sleepers)) = (self.id.take(), self.sleepers.upgrade()) {
            let mut s = sleepers.lock().unwrap_or_else(|p| p.into_inner());
            s.waiting.remove(&(self.deadline, id));
        }
    }
}

impl Drop for ManualSleep {
    fn drop(&mut self) {
        self.unregister();
    }
}
