//! Real timers for `maxWaitDurationInHalfOpenState` and the automatic OPEN -> HALF_OPEN
//! transition, on the tokio runtime (feature `tokio`; waiting on tokio's timer, or on the
//! library's timer thread in a runtime built without `enable_time`). Without a runtime, or
//! with a [`ManualClock`](crate::ManualClock), timers fire lazily on the breaker's next
//! operation.

use std::time::Duration;

use crate::breaker::CircuitBreaker;

/// Spawns a task that wakes at `at` (epoch ns by the breaker's clock) and fires due timers.
/// The task holds only a weak reference: a dropped breaker ends it.
pub(crate) fn schedule(cb: &CircuitBreaker, at: u64) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let weak = cb.downgrade();
    let mut delay = at.saturating_sub(cb.now_nanos());
    handle.spawn(async move {
        // A few retries cover a runtime that wakes early; a clock that does not follow real
        // time (ManualClock) leaves the timer to fire lazily on the next operation.
        for _ in 0..4 {
            // The library's timer when the runtime was built without timers: the automatic
            // transition still happens on time, never silently lazily.
            crate::sleep::Sleep::real(Duration::from_nanos(delay)).await;
            let Some(inner) = weak.upgrade() else { return };
            let cb = CircuitBreaker::from_inner(inner);
            // The breaker reads the cached clock, which a loaded machine's ticker thread may
            // have left milliseconds behind: catch it up so the deadline is seen as reached.
            crate::clock::refresh_cached_reading();
            cb.poll_timers();
            // The same timer still pending (the runtime woke a little early): sleep again.
            match cb.next_timer() {
                Some(next) if next == at => {
                    delay = at.saturating_sub(cb.now_nanos()).max(1_000_000)
                }
                _ => return,
            }
        }
    });
}
