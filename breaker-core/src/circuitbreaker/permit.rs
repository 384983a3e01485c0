//! [`Permit`]: one admitted call, on which its outcome is recorded.

use std::time::Duration;

use crate::breaker::CircuitBreaker;
use crate::classify::Outcome;
use crate::state::State;
use crate::throwable::Throwable;

/// Permission for one call, returned by
/// [`CircuitBreaker::try_acquire_permission`]. It remembers when the call started, so the
/// recording methods measure the call's duration for slow-call detection.
///
/// It also remembers the state episode that admitted it (see [`episode`](Self::episode)):
/// in HALF_OPEN only the trial calls admitted by that HALF_OPEN state decide it and give
/// trial permissions back; the outcome of a call admitted earlier (in CLOSED, or in an
/// earlier HALF_OPEN) that finishes there is published but changes nothing (see the crate
/// docs, "Where this differs from Resilience4j").
///
/// Record exactly one outcome. A permit dropped without one (a cancelled future) hands its
/// HALF_OPEN trial permission back if the HALF_OPEN state that granted it is still current,
/// so a cancelled call never leaves the breaker stuck in HALF_OPEN. A permit dropped while
/// the thread is panicking records a failure: a panic inside a protected call counts as an
/// error.
#[must_use = "record the call's outcome on the permit, or drop it to release it"]
#[derive(Debug)]
pub struct Permit<'a> {
    breaker: &'a CircuitBreaker,
    start_nanos: u64,
    /// The admitting state in the low 3 bits, its generation (episode) above: the breaker's
    /// state word as it was when the permission was granted.
    admitted: u64,
}

impl<'a> Permit<'a> {
    #[inline]
    pub(crate) fn new(breaker: &'a CircuitBreaker, start_nanos: u64, admitted: u64) -> Self {
        Permit {
            breaker,
            start_nanos,
            admitted,
        }
    }

    /// The state that admitted this call: CLOSED, DISABLED, METRICS_ONLY, or HALF_OPEN for a
    /// trial call (an OPEN breaker whose wait has passed admits its first trial call as
    /// HALF_OPEN).
    #[inline]
    pub fn admitted_in(&self) -> State {
        State::from_u8((self.admitted & 7) as u8)
    }

    /// The state episode that admitted this call. A breaker's first state is episode 0 and
    /// every new state is the next one: each transition, a transition to the same state
    /// (which starts that state afresh), and `reset()`. Two permits with the same episode
    /// were admitted by the same state object.
    #[inline]
    pub fn episode(&self) -> u64 {
        self.admitted >> 3
    }

    /// The time since the permission was granted, by the breaker's clock.
    #[inline]
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.breaker.now_nanos().saturating_sub(self.start_nanos))
    }

    /// The call succeeded (`onSuccess`); its duration is measured now.
    #[inline(always)]
    pub fn on_success(self) {
        self.finish_now(Outcome::Success, None);
    }

    /// The call failed with an error that is recorded (`onError`).
    #[inline(always)]
    pub fn on_error(self) {
        self.finish_now(Outcome::Failure, None);
    }

    /// The call failed with an ignored error: nothing is recorded, the permission is handed
    /// back (as Resilience4j's `releasePermission`) and `IGNORED_ERROR` is published.
    #[inline]
    pub fn on_ignored_error(self) {
        self.finish_now(Outcome::Ignored, None);
    }

    /// Records `outcome` with the duration measured now.
    #[inline]
    pub fn record(self, outcome: Outcome) {
        self.finish_now(outcome, None);
    }

    /// Takes the permit apart without running its `Drop` (which hands back an unused
    /// permission): every method that records an outcome or releases goes through here.
    /// No flag: a flag beside the three words made every move of a permit copy its padding
    /// byte by byte.
    #[inline(always)]
    fn into_parts(self) -> (&'a CircuitBreaker, u64, u64) {
        let this = std::mem::ManuallyDrop::new(self);
        (this.breaker, this.start_nanos, this.admitted)
    }

    /// Ends the call now: its duration runs to this clock reading.
    #[inline(always)]
    fn finish_now(self, outcome: Outcome, error: Option<Throwable>) {
        // The clock first: should a custom clock panic, the permit is still whole and its
        // drop records the failure.
        let end = self.breaker.now_nanos();
        let (breaker, start_nanos, admitted) = self.into_parts();
        breaker.record(
            admitted,
            outcome,
            end.saturating_sub(start_nanos),
            end,
            error,
        );
    }

    /// Records `outcome` with a duration measured by the caller (Resilience4j's
    /// `onSuccess(duration, unit)` / `onError(duration, unit, t)`).
    #[inline]
    pub fn record_with_duration(self, outcome: Outcome, elapsed: Duration) {
        self.finish(outcome, elapsed, None);
    }

    /// Records `outcome` naming the error's type in the event.
    #[inline]
    pub(crate) fn record_typed(self, outcome: Outcome, error: Option<Throwable>) {
        self.finish_now(outcome, error);
    }

    /// Records `outcome` for the call's `result`, its `ERROR` / `IGNORED_ERROR` event
    /// carrying the error as [`Throwable::of_any`] describes it (Resilience4j's
    /// `onError(duration, unit, throwable)`), like [`CircuitBreaker::call`] does. The error
    /// is described only when someone subscribes to the events; otherwise this is
    /// [`record`](Self::record).
    #[inline]
    pub fn record_result<T, E: std::any::Any>(self, outcome: Outcome, result: &Result<T, E>) {
        let error = describe(self.breaker, result);
        self.finish_now(outcome, error);
    }

    /// Gives the permission back without recording anything (Resilience4j's
    /// `releasePermission()`): in HALF_OPEN one more trial call is admitted if this permit
    /// is one of that HALF_OPEN state's trial calls (whichever state granted it, with
    /// [`exact_resilience4j`](crate::CircuitBreakerConfigBuilder::exact_resilience4j));
    /// in every other state nothing happens.
    pub fn release(self) {
        let (breaker, _, admitted) = self.into_parts();
        breaker.release(admitted);
    }

    #[inline]
    fn finish(self, outcome: Outcome, elapsed: Duration, error: Option<Throwable>) {
        let end = self.breaker.now_nanos();
        let (breaker, _, admitted) = self.into_parts();
        let nanos = elapsed.as_nanos().min(u128::from(u64::MAX)) as u64;
        breaker.record(admitted, outcome, nanos, end, error);
    }
}

impl Drop for Permit<'_> {
    /// Only a permit with no outcome recorded gets here (see `into_parts`).
    #[inline(always)]
    fn drop(&mut self) {
        self.drop_unfinished();
    }
}

impl Permit<'_> {
    /// Dropped without an outcome: a cancelled call, or a panic inside it.
    #[cold]
    #[inline(never)]
    fn drop_unfinished(&mut self) {
        if std::thread::panicking() {
            let end = self.breaker.now_nanos();
            self.breaker.record(
                self.admitted,
                Outcome::Failure,
                end.saturating_sub(self.start_nanos),
                end,
                Some(Throwable::new("panic", "")),
            );
        } else {
            self.breaker.release_if_current(self.admitted);
        }
    }
}

/// The error of `result` for its event, when someone subscribes to the events.
#[inline]
pub(crate) fn describe<T, E: std::any::Any>(
    breaker: &CircuitBreaker,
    result: &Result<T, E>,
) -> Option<Throwable> {
    match result {
        Err(e) if breaker.subscribed() => Some(describe_cold(e)),
        _ => None,
    }
}

#[cold]
#[inline(never)]
fn describe_cold<E: std::any::Any>(error: &E) -> Throwable {
    Throwable::of_any(error)
}

/// The error of `result` for its event, for a type that may not be `'static`: its type name
/// alone, when someone subscribes to the events.
#[inline]
pub(crate) fn describe_named<T, E>(
    breaker: &CircuitBreaker,
    result: &Result<T, E>,
) -> Option<Throwable> {
    match result {
        Err(_) if breaker.subscribed() => Some(Throwable::new(std::any::type_name::<E>(), "")),
        _ => None,
    }
}
