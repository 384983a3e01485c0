//! Shared state: the hook through which a store outside the process (the `breaker-redis`
//! crate) makes the breakers of many processes behave as one (issue #16).
//!
//! A breaker without a store (the default) never calls into this module: its hot paths pay
//! one "is a store attached" check on a recorded outcome, nothing in CLOSED permission checks.
//!
//! With a store, each process keeps its own breaker and its own sliding window; the store
//! shares the *transitions*:
//! * the breaker tells the store about every transition it makes
//!   ([`SharedState::on_transition`]), after the fact and outside its lock;
//! * in HALF_OPEN, every trial permission the breaker grants is confirmed by the store
//!   ([`SharedState::acquire_trial`]), which caps the trial calls of all processes together,
//!   and every trial's end is reported ([`SharedState::end_trial`]);
//! * the store moves the breaker to the shared state with
//!   [`CircuitBreaker::apply_shared_state`], which does not call the store back.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::breaker::{CircuitBreaker, Inner};
use crate::state::State;

/// What the store says about a HALF_OPEN trial permission the breaker has granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialGrant {
    /// The store holds a trial slot for the call: run it.
    Granted,
    /// The store cannot be asked (unreachable, timed out): run it on local state alone.
    Local,
    /// Every shared trial slot is taken, or the shared state is no longer HALF_OPEN (the
    /// store has applied it already): the call is refused. `until` is when a slot may free
    /// (epoch ns by the breaker's clock), 0 when unknown; it becomes the rejection's
    /// [`retry_after`](crate::CallNotPermitted::retry_after).
    Refused {
        /// Epoch ns by the breaker's clock; 0 when unknown.
        until: u64,
    },
}

/// How a HALF_OPEN trial call ended, as reported to [`SharedState::end_trial`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialEnd {
    /// A recorded outcome: `failed` (an error that counts) or a success, and how long the
    /// call took (the store compares it with `slowCallDurationThreshold`).
    Outcome {
        /// The call failed with a recorded error.
        failed: bool,
        /// The call's duration.
        elapsed: Duration,
    },
    /// Nothing recorded: an ignored error, `release()`, or a dropped permit. The slot is
    /// handed back.
    Released,
}

/// The shared state a store tells a breaker to adopt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedView {
    /// CLOSED: an OPEN or HALF_OPEN breaker moves to a fresh CLOSED state.
    Closed,
    /// OPEN until `until` (epoch ns by the breaker's clock): calls are rejected up to it,
    /// and the first request strictly after it moves to HALF_OPEN.
    Open {
        /// Epoch ns by the breaker's clock.
        until: u64,
    },
    /// HALF_OPEN: a CLOSED or OPEN breaker moves to HALF_OPEN (from CLOSED through an
    /// already-expired OPEN, since CLOSED -> HALF_OPEN is not a transition Resilience4j has).
    HalfOpen,
}

/// A store that shares a breaker's state with other processes. Implemented by
/// `breaker_redis`; attach one with [`CircuitBreaker::attach_shared_state`].
///
/// Every method is called on the caller's thread, outside the breaker's lock, and must
/// return within a bound the implementation documents (they sit on the call path of
/// transitions and HALF_OPEN trial calls).
pub trait SharedState: Send + Sync + 'static {
    /// The breaker made the transition `from -> to`: through its calls (`manual` false:
    /// a window that tripped, a HALF_OPEN that decided, an OPEN wait that passed) or through
    /// a `transition_to_*` / `reset()` call (`manual` true). Not called for the changes the
    /// store makes itself with [`CircuitBreaker::apply_shared_state`].
    fn on_transition(&self, breaker: &CircuitBreaker, from: State, to: State, manual: bool);

    /// The breaker granted a HALF_OPEN trial permission in episode `episode`
    /// ([`Permit::episode`](crate::Permit::episode)); may the call run?
    fn acquire_trial(&self, breaker: &CircuitBreaker, episode: u64) -> TrialGrant;

    /// A trial call granted in `episode` ended.
    fn end_trial(&self, breaker: &CircuitBreaker, episode: u64, end: TrialEnd);
}

/// A handle to a breaker that does not keep it alive (a store's list of its breakers).
#[derive(Clone, Debug)]
pub struct WeakCircuitBreaker(pub(crate) Weak<Inner>);

impl WeakCircuitBreaker {
    /// The breaker, if some handle still holds it.
    pub fn upgrade(&self) -> Option<CircuitBreaker> {
        self.0.upgrade().map(CircuitBreaker::from_inner)
    }
}

/// The breaker's attached store, if any: set once.
pub(crate) type SharedSlot = std::sync::OnceLock<Arc<dyn SharedState>>;
