//! Shared state: the hook through which a store outside the process (the `breaker-redis`
//! crate) makes the breakers of many processes behave as one (issue #16).
//!
//! A breaker without a store (the default) never calls into this module: its hot paths pay
//! one "is a store attached" check on a recorded outcome, nothing in CLOSED permission checks.
//!
//! With a store, each process keeps its own breaker and its own sliding window; the store
//! shares the *transitions*:
//! * the breaker tells the store about every transition it makes
//!   ([`SharedState::on_transition`](crate::SharedState::on_transition)), after the fact and
//!   outside its lock;
//! * in HALF_OPEN, every trial permission the breaker grants is confirmed by the store
//!   ([`SharedState::acquire_trial`](crate::SharedState::acquire_trial)), which caps the
//!   trial calls of all processes together, and every trial's end is reported
//!   ([`SharedState::end_trial`](crate::SharedState::end_trial));
//! * the store moves the breaker to the shared state with
//!   [`CircuitBreaker::apply_shared_state`](crate::CircuitBreaker::apply_shared_state), which
//!   does not call the store back.

use std::time::Duration;

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

/// How a HALF_OPEN trial call ended, as reported to
/// [`SharedState::end_trial`](crate::SharedState::end_trial).
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
