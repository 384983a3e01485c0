//! The circuit-breaker property names Spring binds (`InstanceProperties`, spec §3.3), their
//! types, and the Resilience4j 1.x names that no longer bind.

use crate::schema::Kind;

/// One bindable circuit-breaker property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Id {
    FailureRateThreshold,
    SlowCallRateThreshold,
    SlowCallDurationThreshold,
    WaitDurationInOpenState,
    MaxWaitDurationInHalfOpenState,
    TransitionToStateAfterWaitDuration,
    SlidingWindowType,
    SlidingWindowSize,
    MinimumNumberOfCalls,
    PermittedNumberOfCallsInHalfOpenState,
    AutomaticTransitionFromOpenToHalfOpenEnabled,
    InitialState,
    WritableStackTraceEnabled,
    RecordExceptions,
    IgnoreExceptions,
    RecordFailurePredicate,
    RecordResultPredicate,
    IgnoreExceptionPredicate,
    BaseConfig,
    EnableExponentialBackoff,
    ExponentialBackoffMultiplier,
    ExponentialMaxWaitDurationInOpenState,
    EnableRandomizedWait,
    RandomizedWaitFactor,
    RegisterHealthIndicator,
    AllowHealthIndicatorToFail,
    EventConsumerBufferSize,
    IgnoreClassBindingExceptions,
}

/// `(id, camelCase name, kind)` for every bindable property.
pub(crate) const SETTINGS: &[(Id, &str, Kind)] = &[
    (
        Id::FailureRateThreshold,
        "failureRateThreshold",
        Kind::Float,
    ),
    (
        Id::SlowCallRateThreshold,
        "slowCallRateThreshold",
        Kind::Float,
    ),
    (
        Id::SlowCallDurationThreshold,
        "slowCallDurationThreshold",
        Kind::Duration,
    ),
    (
        Id::WaitDurationInOpenState,
        "waitDurationInOpenState",
        Kind::Duration,
    ),
    (
        Id::MaxWaitDurationInHalfOpenState,
        "maxWaitDurationInHalfOpenState",
        Kind::Duration,
    ),
    (
        Id::TransitionToStateAfterWaitDuration,
        "transitionToStateAfterWaitDuration",
        Kind::State,
    ),
    (Id::SlidingWindowType, "slidingWindowType", Kind::WindowType),
    (Id::SlidingWindowSize, "slidingWindowSize", Kind::Int),
    (Id::MinimumNumberOfCalls, "minimumNumberOfCalls", Kind::Int),
    (
        Id::PermittedNumberOfCallsInHalfOpenState,
        "permittedNumberOfCallsInHalfOpenState",
        Kind::Int,
    ),
    (
        Id::AutomaticTransitionFromOpenToHalfOpenEnabled,
        "automaticTransitionFromOpenToHalfOpenEnabled",
        Kind::Bool,
    ),
    (Id::InitialState, "initialState", Kind::State),
    (
        Id::WritableStackTraceEnabled,
        "writableStackTraceEnabled",
        Kind::Bool,
    ),
    (Id::RecordExceptions, "recordExceptions", Kind::ClassList),
    (Id::IgnoreExceptions, "ignoreExceptions", Kind::ClassList),
    (
        Id::RecordFailurePredicate,
        "recordFailurePredicate",
        Kind::Text,
    ),
    (
        Id::RecordResultPredicate,
        "recordResultPredicate",
        Kind::Text,
    ),
    (
        Id::IgnoreExceptionPredicate,
        "ignoreExceptionPredicate",
        Kind::Text,
    ),
    (Id::BaseConfig, "baseConfig", Kind::Text),
    (
        Id::EnableExponentialBackoff,
        "enableExponentialBackoff",
        Kind::Bool,
    ),
    (
        Id::ExponentialBackoffMultiplier,
        "exponentialBackoffMultiplier",
        Kind::Double,
    ),
    (
        Id::ExponentialMaxWaitDurationInOpenState,
        "exponentialMaxWaitDurationInOpenState",
        Kind::Duration,
    ),
    (Id::EnableRandomizedWait, "enableRandomizedWait", Kind::Bool),
    (
        Id::RandomizedWaitFactor,
        "randomizedWaitFactor",
        Kind::Double,
    ),
    (
        Id::RegisterHealthIndicator,
        "registerHealthIndicator",
        Kind::Bool,
    ),
    (
        Id::AllowHealthIndicatorToFail,
        "allowHealthIndicatorToFail",
        Kind::Bool,
    ),
    (
        Id::EventConsumerBufferSize,
        "eventConsumerBufferSize",
        Kind::Int,
    ),
    (
        Id::IgnoreClassBindingExceptions,
        "ignoreClassBindingExceptions",
        Kind::Bool,
    ),
];

/// Keys that bind nothing in current Resilience4j, with advice.
pub(crate) const LEGACY: &[(&str, &str)] = &[
    ("ringBufferSizeInClosedState", "a Resilience4j 1.x key that binds nothing in 2.x; use slidingWindowSize (with minimumNumberOfCalls)"),
    ("ringBufferSizeInHalfOpenState", "a Resilience4j 1.x key that binds nothing in 2.x; use permittedNumberOfCallsInHalfOpenState"),
    ("waitInterval", "a Resilience4j 1.x key that binds nothing in 2.x; use waitDurationInOpenState"),
    ("slidingWindowSynchronizationStrategy", "not bindable from Spring configuration (set it in code with a customizer)"),
    ("ignoreExceptionsPrecedenceEnabled", "not bindable from Spring configuration (set it in code with a customizer)"),
];

/// Keys directly under `resilience4j.circuitbreaker` besides `configs` / `instances` / `backends`.
pub(crate) const TOP_LEVEL: &[&str] = &[
    "configs",
    "instances",
    "backends",
    "circuitBreakerAspectOrder",
    "tags",
    "metrics",
];
