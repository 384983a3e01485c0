//! `/actuator/health` (integration spec §5): the `circuitBreakers` and `rateLimiters`
//! components (and Spring Boot's `ping`), each instance opted in by
//! `registerHealthIndicator`, statuses mapped and aggregated as Spring Boot does.

use std::collections::BTreeMap;

use breaker_config::ManagementConfig;
use breaker_core::State;
use serde_json::{json, Map, Value};

use crate::actuator::Shared;
use crate::dto::{CircuitBreakerDetails, CircuitBreakerHealthDetails};

/// A health result: a status and, when shown, details or components.
pub(crate) struct Health {
    pub status: String,
    pub details: Option<Value>,
}

/// Spring Boot's `SimpleStatusAggregator`: statuses not in `order` are dropped, the first of
/// the rest by `order` wins, none is `UNKNOWN`.
pub(crate) fn aggregate<'a>(
    order: &[String],
    statuses: impl IntoIterator<Item = &'a str>,
) -> String {
    statuses
        .into_iter()
        .filter_map(|s| order.iter().position(|o| o.eq_ignore_ascii_case(s)))
        .min()
        .map_or_else(|| "UNKNOWN".to_string(), |i| order[i].to_ascii_uppercase())
}

/// The HTTP status Spring Boot answers a health status with: 503 for `DOWN` and
/// `OUT_OF_SERVICE`, else 200.
pub(crate) fn http_status(status: &str) -> u16 {
    match status {
        "DOWN" | "OUT_OF_SERVICE" => 503,
        _ => 200,
    }
}

/// One breaker's status (spec §5.2).
fn breaker_status(state: State, allow_fail: bool) -> &'static str {
    match state {
        State::Closed => "UP",
        State::Open if allow_fail => "DOWN",
        State::Open => "CIRCUIT_OPEN",
        State::HalfOpen => "CIRCUIT_HALF_OPEN",
        State::Disabled | State::ForcedOpen | State::MetricsOnly => "UNKNOWN",
    }
}

/// Every instance of a component: name -> (status, details).
type Instances = BTreeMap<String, (String, Value)>;

fn circuit_breakers(s: &Shared) -> Instances {
    let mut out = BTreeMap::new();
    for cb in s.actuator.breakers.all() {
        let c = cb.config();
        let settings = c.instance_settings();
        if !settings.register_health_indicator {
            continue;
        }
        let d = CircuitBreakerDetails::of(&cb);
        let status = breaker_status(
            d.state.parse().unwrap_or(State::Closed),
            settings.allow_health_indicator_to_fail,
        );
        let mut details =
            serde_json::to_value(CircuitBreakerHealthDetails::from(d)).unwrap_or(Value::Null);
        crate::drill::mark(s, cb.name(), &mut details);
        out.insert(cb.name().to_string(), (status.to_string(), details));
    }
    out
}

fn rate_limiters(s: &Shared) -> Instances {
    let mut out = BTreeMap::new();
    for rl in s.actuator.modules.rate_limiter.all() {
        let settings = (s.actuator.rate_limiters)(rl.name());
        if !settings.register_health_indicator {
            continue;
        }
        let m = rl.metrics();
        let timeout = rl.config().timeout_duration().as_nanos() as i64;
        let status = if m.available_permissions > 0 || m.number_of_waiting_threads == 0 {
            "UP"
        } else if m.nanos_to_wait > timeout {
            if settings.allow_health_indicator_to_fail {
                "DOWN"
            } else {
                "RATE_LIMITED"
            }
        } else {
            "UNKNOWN"
        };
        out.insert(
            rl.name().to_string(),
            (
                status.to_string(),
                json!({
                    "availablePermissions": m.available_permissions,
                    "numberOfWaitingThreads": m.number_of_waiting_threads,
                }),
            ),
        );
    }
    out
}

fn component(m: &ManagementConfig, instances: Instances) -> Health {
    let status = aggregate(&m.status_order, instances.values().map(|(s, _)| s.as_str()));
    let details = (m.show_details.shown() && !instances.is_empty()).then(|| {
        let map: Map<String, Value> = instances
            .into_iter()
            .map(|(n, (s, d))| (n, json!({"status": s, "details": d})))
            .collect();
        Value::Object(map)
    });
    Health { status, details }
}

/// The enabled components, by name.
pub(crate) fn components(s: &Shared, m: &ManagementConfig) -> BTreeMap<&'static str, Health> {
    let mut out = BTreeMap::new();
    if m.health_circuit_breakers {
        out.insert("circuitBreakers", component(m, circuit_breakers(s)));
    }
    if m.health_ping {
        out.insert(
            "ping",
            Health {
                status: "UP".into(),
                details: None,
            },
        );
    }
    if m.health_rate_limiters {
        out.insert("rateLimiters", component(m, rate_limiters(s)));
    }
    out
}

fn to_json(h: &Health) -> Value {
    let mut o = Map::new();
    o.insert("status".into(), Value::from(h.status.clone()));
    if let Some(d) = &h.details {
        o.insert("details".into(), d.clone());
    }
    Value::Object(o)
}

/// `GET /actuator/health`: the aggregate status, and the components when shown.
pub(crate) fn health(s: &Shared) -> (u16, Value) {
    let m = s.actuator.management_config();
    let components = components(s, &m);
    let status = aggregate(
        &m.status_order,
        components.values().map(|h| h.status.as_str()),
    );
    let mut o = Map::new();
    o.insert("status".into(), Value::from(status.clone()));
    if m.components_shown() {
        let c: Map<String, Value> = components
            .iter()
            .map(|(n, h)| ((*n).to_string(), to_json(h)))
            .collect();
        o.insert("components".into(), Value::Object(c));
    }
    (http_status(&status), Value::Object(o))
}

/// `GET /actuator/health/{component}[/{instance}]`; `None` for an unknown one.
pub(crate) fn health_of(
    s: &Shared,
    component: &str,
    instance: Option<&str>,
) -> Option<(u16, Value)> {
    let m = s.actuator.management_config();
    if !m.components_shown() {
        return None;
    }
    let mut components = components(s, &m);
    let h = components.remove(component)?;
    match instance {
        None => Some((http_status(&h.status), to_json(&h))),
        Some(name) => {
            let v = h.details?.get(name)?.clone();
            let status = v["status"].as_str().unwrap_or("UNKNOWN").to_string();
            Some((http_status(&status), v))
        }
    }
}
