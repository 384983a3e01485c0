//! Waiting on a [`Clock`](crate::Clock): the retry wait between attempts, a rate limiter's
//! reservation, a bulkhead's `maxWaitDuration`, a time limiter's `timeoutDuration`.
//!
//! [`Clock::sleep`](crate::Clock::sleep) returns a [`Sleep`] future. On the real clocks it is a
//! tokio timer (feature `tokio`, inside a runtime whose timers are enabled) or else the
//! library's own timer thread (one per process, a deadline queue, a dropped wait removed at
//! once); on a [`ManualClock`](crate::ManualClock) it completes when the clock is advanced to
//! its deadline, so tests and simulations never sleep for real.
//!
//! A tokio runtime built without `enable_time` (`Builder::new_current_thread().build()`)
//! panics when a tokio timer is created ("A Tokio 1.x context was found, but timers are
//! disabled"), and tokio offers no way to ask first. So the first wait on each thread in
//! each runtime makes one tokio timer inside `catch_unwind` and remembers the answer (per
//! thread, by runtime id); that probe's panic message is not printed (a panic hook that
//! forwards every other panic to the hook it replaced is installed the first time a probe
//! runs). With `panic = "abort"` nothing can be probed: a tokio runtime is assumed to have
//! timers, as before.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};

use crate::timer_thread::ThreadSleep;
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

    /// Real time: a tokio timer when called inside a tokio runtime whose timers are enabled
    /// (feature `tokio`; tokio's paused test time applies), otherwise the library's timer
    /// thread (see the module docs of `sleep`). Never panics for want of a timer.
    pub fn real(duration: Duration) -> Self {
        if duration.is_zero() {
            return Sleep::ready();
        }
        #[cfg(feature = "tokio")]
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            if tokio_probe::timers_enabled(&handle) {
                return Sleep::from_future(tokio::time::sleep(duration));
            }
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

// ----- whether the current tokio runtime has timers ---------------------------------------

#[cfg(feature = "tokio")]
pub(crate) mod tokio_probe {
    use std::cell::Cell;
    use std::sync::Once;

    thread_local! {
        /// The last runtime this thread asked about, and the answer.
        static LAST: Cell<Option<(tokio::runtime::Id, bool)>> = const { Cell::new(None) };
        /// Set while this thread probes: the probe's panic is not reported.
        static PROBING: Cell<bool> = const { Cell::new(false) };
    }

    /// Whether `handle`'s runtime was built with timers (`enable_time` / `enable_all`).
    pub(crate) fn timers_enabled(handle: &tokio::runtime::Handle) -> bool {
        let id = handle.id();
        if let Some((last, enabled)) = LAST.with(Cell::get) {
            if last == id {
                return enabled;
            }
        }
        let enabled = probe(handle);
        LAST.with(|l| l.set(Some((id, enabled))));
        enabled
    }

    fn probe(handle: &tokio::runtime::Handle) -> bool {
        if cfg!(panic = "abort") {
            return true;
        }
        static QUIET: Once = Once::new();
        QUIET.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if !PROBING.with(Cell::get) {
                    previous(info);
                }
            }));
        });
        let _entered = handle.enter();
        PROBING.with(|p| p.set(true));
        let made = std::panic::catch_unwind(|| drop(tokio::time::sleep(std::time::Duration::ZERO)));
        PROBING.with(|p| p.set(false));
        made.is_ok()
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
