//! The Spring setter validations of `InstanceProperties` (spec §3.3), with their exact messages.

use crate::keys::Id;
use crate::schema::Val;
use crate::yaml::java_double;

/// What a count setting (`slidingWindowSize`, `minimumNumberOfCalls`,
/// `permittedNumberOfCallsInHalfOpenState`, `eventConsumerBufferSize`) accepts: a Java `int`
/// that its setter requires to be at least 1.
pub(crate) const COUNT_ALLOWED: &str = "a whole number from 1 to 2147483647";

/// What property `id` accepts when its text does not convert, when that is narrower than what
/// the Java type allows (`fallback`).
pub(crate) fn conversion_allowed(id: Id, fallback: &'static str) -> &'static str {
    match id {
        Id::SlidingWindowSize
        | Id::MinimumNumberOfCalls
        | Id::PermittedNumberOfCallsInHalfOpenState
        | Id::EventConsumerBufferSize => COUNT_ALLOWED,
        _ => fallback,
    }
}

/// Checks `v` for property `id` as the Spring setter does. On failure returns
/// `(Spring's message, what is allowed)`.
pub(crate) fn check(id: Id, v: &Val) -> Result<(), (String, &'static str)> {
    use crate::model::State;
    let fail = |m: &str, a: &'static str| Err((m.to_string(), a));
    match (id, v) {
        (Id::FailureRateThreshold, Val::Float(f)) if *f < 1.0 || *f > 100.0 => fail(
            "failureRateThreshold must be between 1 and 100.",
            "a percentage from 1 to 100",
        ),
        (Id::SlowCallRateThreshold, Val::Float(f)) if *f < 1.0 || *f > 100.0 => fail(
            "slowCallRateThreshold must be between 1 and 100.",
            "a percentage from 1 to 100",
        ),
        (Id::SlowCallDurationThreshold, Val::Duration(d)) => match d.nanos_checked() {
            None => fail(
                "slowCallDurationThreshold is too large to be expressed in nanoseconds",
                "a duration of at least 1ns and at most about 292 years",
            ),
            Some(n) if n < 1 => fail(
                "slowCallDurationThreshold must be greater than or equal to 1 nanos.",
                "a duration of at least 1ns",
            ),
            _ => Ok(()),
        },
        (Id::WaitDurationInOpenState, Val::Duration(d)) if d.millis() < 1 => fail(
            "waitDurationInOpenStateMillis must be greater than or equal to 1 millis.",
            "a duration of at least 1ms",
        ),
        (Id::MaxWaitDurationInHalfOpenState, Val::Duration(d)) if d.millis() < 0 => fail(
            "maxWaitDurationInHalfOpenState must be greater than or equal to 0 ms.",
            "a duration of at least 0ms (0 disables it)",
        ),
        (Id::TransitionToStateAfterWaitDuration, Val::State(s))
            if *s != State::Open && *s != State::Closed =>
        {
            fail(
                "transitionToStateAfterWaitDuration must be either OPEN or CLOSED",
                "OPEN or CLOSED",
            )
        }
        (Id::SlidingWindowSize, Val::Int(i)) if *i < 1 => fail(
            "slidingWindowSize must be greater than or equal to 1.",
            COUNT_ALLOWED,
        ),
        (Id::MinimumNumberOfCalls, Val::Int(i)) if *i < 1 => fail(
            "minimumNumberOfCalls must be greater than or equal to 1.",
            COUNT_ALLOWED,
        ),
        (Id::PermittedNumberOfCallsInHalfOpenState, Val::Int(i)) if *i < 1 => fail(
            "permittedNumberOfCallsInHalfOpenState must be greater than or equal to 1.",
            COUNT_ALLOWED,
        ),
        (Id::EventConsumerBufferSize, Val::Int(i)) if *i < 1 => fail(
            "eventConsumerBufferSize must be greater than or equal to 1.",
            COUNT_ALLOWED,
        ),
        (Id::ExponentialBackoffMultiplier, Val::Double(m)) if *m <= 0.0 => Err((
            format!(
                "Illegal argument exponentialBackoffMultiplier: {} is less or equal 0",
                java_double(*m)
            ),
            "a number > 0",
        )),
        (Id::ExponentialMaxWaitDurationInOpenState, Val::Duration(d)) if d.millis() < 1 => Err((
            format!(
                "Illegal argument interval: {} is less than 1 millisecond",
                d.java_string()
            ),
            "a duration of at least 1ms",
        )),
        (Id::RandomizedWaitFactor, Val::Double(f)) if *f < 0.0 || *f >= 1.0 => Err((
            format!(
                "Illegal argument randomizedWaitFactor: {} is not in range [0..1)",
                java_double(*f)
            ),
            "a number from 0 (inclusive) to 1 (exclusive)",
        )),
        _ => Ok(()),
    }
}

/// The message Resilience4j raises when both wait-interval flags are enabled on one block.
pub(crate) const BOTH_WAIT_POLICIES: &str = "you can not enable Exponential backoff policy and randomized delay at the same time , please enable only one of them";
