//! The `*events` endpoints (integration spec §4.2): every buffer's events sorted by time, one
//! instance's oldest first, or those of one type (case-insensitive, Resilience4j's enum
//! spelling).

use breaker_core::EventType;
use serde::Serialize;
use serde_json::Value;

use crate::actuator::{lock, Shared};
use crate::dto::{
    BulkheadEventDto, CircuitBreakerEventDto, RateLimiterEventDto, RetryEventDto,
    TimeLimiterEventDto,
};

/// One event as an endpoint lists it.
pub(crate) struct Listed {
    pub at: u64,
    pub kind: &'static str,
    pub json: Value,
}

fn listed<E, D: Serialize + for<'a> From<&'a E>>(
    events: Vec<E>,
    at: impl Fn(&E) -> u64,
    kind: impl Fn(&E) -> &'static str,
) -> Vec<Listed> {
    events
        .iter()
        .map(|e| Listed {
            at: at(e),
            kind: kind(e),
            json: serde_json::to_value(D::from(e)).unwrap_or(Value::Null),
        })
        .collect()
}

/// One `*events` endpoint.
pub(crate) struct EventsEndpoint {
    /// The endpoint id, e.g. `circuitbreakerevents`.
    pub id: &'static str,
    /// The top-level JSON key, e.g. `circuitBreakerEvents`.
    pub key: &'static str,
    /// The module's event types (Resilience4j's enum constants).
    pub types: &'static [&'static str],
    /// The events of the instance `name` (empty for an unknown name).
    pub one: fn(&Shared, &str) -> Vec<Listed>,
    /// The instance names whose events are kept.
    pub names: fn(&Shared) -> Vec<String>,
}

impl EventsEndpoint {
    /// Every instance's events, sorted by creation time (stable: an instance's events keep
    /// their order).
    pub(crate) fn all(&self, s: &Shared) -> Vec<Listed> {
        let mut all: Vec<Listed> = (self.names)(s)
            .iter()
            .flat_map(|n| (self.one)(s, n))
            .collect();
        all.sort_by_key(|e| e.at);
        all
    }

    /// The event type `written` names, as `Type.valueOf(written.toUpperCase())`.
    pub(crate) fn event_type(&self, written: &str) -> Option<&'static str> {
        let upper = written.to_uppercase();
        self.types.iter().copied().find(|t| *t == upper)
    }
}

const CB_TYPES: [&str; 10] = [
    EventType::Success.name(),
    EventType::Error.name(),
    EventType::IgnoredError.name(),
    EventType::NotPermitted.name(),
    EventType::StateTransition.name(),
    EventType::Reset.name(),
    "FORCED_OPEN",
    "DISABLED",
    EventType::FailureRateExceeded.name(),
    EventType::SlowCallRateExceeded.name(),
];

pub(crate) const CIRCUIT_BREAKER: EventsEndpoint = EventsEndpoint {
    id: "circuitbreakerevents",
    key: "circuitBreakerEvents",
    types: &CB_TYPES,
    one: |s, name| {
        listed::<_, CircuitBreakerEventDto>(
            s.actuator.breakers.recent_events(name).unwrap_or_default(),
            |e| e.creation_time_nanos,
            |e| e.event_type().name(),
        )
    },
    names: |s| {
        s.actuator
            .breakers
            .all()
            .iter()
            .map(|b| b.name().to_string())
            .collect()
    },
};

pub(crate) const RETRY: EventsEndpoint = EventsEndpoint {
    id: "retryevents",
    key: "retryEvents",
    types: &["RETRY", "ERROR", "SUCCESS", "IGNORED_ERROR"],
    one: |s, name| {
        listed::<_, RetryEventDto>(
            s.actuator
                .modules
                .retry
                .recent_events(name)
                .unwrap_or_default(),
            |e| e.creation_time_nanos,
            |e| e.event_type.name(),
        )
    },
    names: |s| {
        s.actuator
            .modules
            .retry
            .all()
            .iter()
            .map(|r| r.name().to_string())
            .collect()
    },
};

pub(crate) const TIME_LIMITER: EventsEndpoint = EventsEndpoint {
    id: "timelimiterevents",
    key: "timeLimiterEvents",
    types: &["SUCCESS", "TIMEOUT", "ERROR"],
    one: |s, name| {
        listed::<_, TimeLimiterEventDto>(
            s.actuator
                .modules
                .time_limiter
                .recent_events(name)
                .unwrap_or_default(),
            |e| e.creation_time_nanos,
            |e| e.event_type.name(),
        )
    },
    names: |s| {
        s.actuator
            .modules
            .time_limiter
            .all()
            .iter()
            .map(|t| t.name().to_string())
            .collect()
    },
};

pub(crate) const BULKHEAD: EventsEndpoint = EventsEndpoint {
    id: "bulkheadevents",
    key: "bulkheadEvents",
    types: &["CALL_PERMITTED", "CALL_REJECTED", "CALL_FINISHED"],
    // The semaphore bulkhead's buffer, else the thread-pool bulkhead's of that name.
    one: |s, name| {
        let m = &s.actuator.modules;
        let events = m
            .bulkhead
            .recent_events(name)
            .or_else(|| m.thread_pool_bulkhead.recent_events(name))
            .unwrap_or_default();
        listed::<_, BulkheadEventDto>(events, |e| e.creation_time_nanos, |e| e.event_type.name())
    },
    names: |_| Vec::new(),
};

/// Every bulkhead's events: the semaphore ones and the thread-pool ones (both kept, as
/// Spring keeps them under `<name>` and `ThreadPoolBulkhead-<name>`).
pub(crate) fn all_bulkhead_events(s: &Shared) -> Vec<Listed> {
    let m = &s.actuator.modules;
    let mut all = Vec::new();
    for b in m.bulkhead.all() {
        all.extend(listed::<_, BulkheadEventDto>(
            m.bulkhead.recent_events(b.name()).unwrap_or_default(),
            |e| e.creation_time_nanos,
            |e| e.event_type.name(),
        ));
    }
    for b in m.thread_pool_bulkhead.all() {
        all.extend(listed::<_, BulkheadEventDto>(
            m.thread_pool_bulkhead
                .recent_events(b.name())
                .unwrap_or_default(),
            |e| e.creation_time_nanos,
            |e| e.event_type.name(),
        ));
    }
    all.sort_by_key(|e| e.at);
    all
}

pub(crate) const RATE_LIMITER: EventsEndpoint = EventsEndpoint {
    id: "ratelimiterevents",
    key: "rateLimiterEvents",
    types: &["FAILED_ACQUIRE", "SUCCESSFUL_ACQUIRE", "DRAINED"],
    one: |s, name| {
        let events = lock(&s.common.rate_limiter_events)
            .get(name)
            .map(|b| b.events.events())
            .unwrap_or_default();
        listed::<_, RateLimiterEventDto>(events, |e| e.creation_time_nanos, |e| e.event_type.name())
    },
    names: |s| {
        lock(&s.common.rate_limiter_events)
            .keys()
            .cloned()
            .collect()
    },
};
