//! The routes: every exposed endpoint under the base path.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::actuator::{Actuator, Common, Shared};
use crate::dto::CircuitBreakerDetails;
use crate::events::{self, EventsEndpoint, Listed};
use crate::health;
use crate::response::{error, json as json_response};

type S = State<Arc<Shared>>;

fn events_body(key: &str, events: Vec<Listed>) -> Response {
    let list: Vec<Value> = events.into_iter().map(|e| e.json).collect();
    let mut o = Map::new();
    o.insert(key.to_string(), Value::Array(list));
    json_response(200, &Value::Object(o))
}

/// The routes of one `*events` endpoint.
fn events_routes(
    r: Router<Arc<Shared>>,
    base: &str,
    e: &'static EventsEndpoint,
) -> Router<Arc<Shared>> {
    let all = move |State(s): S| async move {
        let events = if e.id == "bulkheadevents" {
            events::all_bulkhead_events(&s)
        } else {
            e.all(&s)
        };
        events_body(e.key, events)
    };
    let one = move |State(s): S, Path(name): Path<String>| async move {
        events_body(e.key, (e.one)(&s, &name))
    };
    let typed = move |State(s): S, Path((name, kind)): Path<(String, String)>| async move {
        match e.event_type(&kind) {
            Some(t) => events_body(
                e.key,
                (e.one)(&s, &name)
                    .into_iter()
                    .filter(|ev| ev.kind == t)
                    .collect(),
            ),
            None => error(
                400,
                format!(
                    "'{kind}' is not an event type of {}; one of {}",
                    e.id,
                    e.types.join(", ")
                ),
            ),
        }
    };
    r.route(&format!("{base}/{}", e.id), get(all))
        .route(&format!("{base}/{}/{{name}}", e.id), get(one))
        .route(
            &format!("{base}/{}/{{name}}/{{event_type}}", e.id),
            get(typed),
        )
}

fn names_body(key: &str, mut names: Vec<String>) -> Response {
    names.sort();
    let mut o = Map::new();
    o.insert(key.to_string(), Value::from(names));
    json_response(200, &Value::Object(o))
}

// `Actuator::router` lives here, by the routes it builds, so that `actuator.rs` (which the
// handlers import for `Shared`) imports nothing of this crate.
impl Actuator {
    /// The router: every exposed endpoint under `management.endpoints.web.base-path`
    /// (`/actuator`). Mount it in your app (`app.merge(actuator.router())`) or serve it on
    /// its own port. The first router built turns on the registries' event buffers (every
    /// call then builds its events, as in Spring) and binds the meters when Prometheus is
    /// served; later routers of the same actuator (or its clones) share them. Build one
    /// actuator per set of registries: a second would bind the meters again and count every
    /// call twice.
    pub fn router(&self) -> axum::Router {
        let common = self.common.get_or_init(|| Common::new(self)).clone();
        router(Arc::new(Shared {
            actuator: self.clone(),
            common,
        }))
    }
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let m = shared.actuator.management_config();
    let base = if m.base_path == "/" {
        String::new()
    } else {
        m.base_path.clone()
    };
    let mut r: Router<Arc<Shared>> = Router::new();
    let exposed: Vec<&str> = ENDPOINTS
        .iter()
        .copied()
        .filter(|id| m.exposes(id))
        .collect();
    let ids = exposed.clone();
    let root = base.clone();
    r = r.route(
        if base.is_empty() { "/" } else { &base },
        get(move |headers: HeaderMap| async move { links(&headers, &root, &ids) }),
    );
    for id in &exposed {
        r = match *id {
            "health" => r
                .route(
                    &format!("{base}/health"),
                    get(|State(s): S| async move {
                        let (status, body) = health::health(&s);
                        json_response(status, &body)
                    }),
                )
                .route(
                    &format!("{base}/health/{{component}}"),
                    get(|State(s): S, Path(c): Path<String>| async move {
                        match health::health_of(&s, &c, None) {
                            Some((status, body)) => json_response(status, &body),
                            None => StatusCode::NOT_FOUND.into_response(),
                        }
                    }),
                )
                .route(
                    &format!("{base}/health/{{component}}/{{instance}}"),
                    get(
                        |State(s): S, Path((c, i)): Path<(String, String)>| async move {
                            match health::health_of(&s, &c, Some(&i)) {
                                Some((status, body)) => json_response(status, &body),
                                None => StatusCode::NOT_FOUND.into_response(),
                            }
                        },
                    ),
                ),
            "circuitbreakers" => r
                .route(
                    &format!("{base}/circuitbreakers"),
                    get(|State(s): S| async move {
                        let map: BTreeMap<String, CircuitBreakerDetails> = s
                            .actuator
                            .breakers
                            .all()
                            .iter()
                            .map(|b| (b.name().to_string(), CircuitBreakerDetails::of(b)))
                            .collect();
                        json_response(200, &json!({"circuitBreakers": map}))
                    }),
                )
                .route(
                    &format!("{base}/circuitbreakers/{{name}}"),
                    post(update_state),
                ),
            "circuitbreakerevents" => events_routes(r, &base, &events::CIRCUIT_BREAKER),
            "retries" => r.route(
                &format!("{base}/retries"),
                get(|State(s): S| async move {
                    names_body(
                        "retries",
                        s.actuator
                            .modules
                            .retry
                            .all()
                            .iter()
                            .map(|i| i.name().to_string())
                            .collect(),
                    )
                }),
            ),
            "retryevents" => events_routes(r, &base, &events::RETRY),
            "bulkheads" => r.route(
                &format!("{base}/bulkheads"),
                get(|State(s): S| async move {
                    let m = &s.actuator.modules;
                    let mut names: Vec<String> = m
                        .bulkhead
                        .all()
                        .iter()
                        .map(|i| i.name().to_string())
                        .collect();
                    names.extend(
                        m.thread_pool_bulkhead
                            .all()
                            .iter()
                            .map(|i| i.name().to_string()),
                    );
                    names_body("bulkheads", names)
                }),
            ),
            "bulkheadevents" => events_routes(r, &base, &events::BULKHEAD),
            "ratelimiters" => r.route(
                &format!("{base}/ratelimiters"),
                get(|State(s): S| async move {
                    names_body(
                        "rateLimiters",
                        s.actuator
                            .modules
                            .rate_limiter
                            .all()
                            .iter()
                            .map(|i| i.name().to_string())
                            .collect(),
                    )
                }),
            ),
            "ratelimiterevents" => events_routes(r, &base, &events::RATE_LIMITER),
            "timelimiters" => r.route(
                &format!("{base}/timelimiters"),
                get(|State(s): S| async move {
                    names_body(
                        "timeLimiters",
                        s.actuator
                            .modules
                            .time_limiter
                            .all()
                            .iter()
                            .map(|i| i.name().to_string())
                            .collect(),
                    )
                }),
            ),
            "timelimiterevents" => events_routes(r, &base, &events::TIME_LIMITER),
            "prometheus" => r.route(
                &format!("{base}/prometheus"),
                get(crate::prometheus::scrape),
            ),
            _ => r,
        };
    }
    r = crate::drill::routes(r, &base, &shared);
    r.with_state(shared)
}

/// The endpoint ids served here, in Spring Boot's link order.
pub(crate) const ENDPOINTS: [&str; 12] = [
    "health",
    "circuitbreakers",
    "circuitbreakerevents",
    "retries",
    "retryevents",
    "bulkheads",
    "bulkheadevents",
    "ratelimiters",
    "ratelimiterevents",
    "timelimiters",
    "timelimiterevents",
    "prometheus",
];

/// `GET /actuator`: Spring Boot's `_links`, one per exposed endpoint.
fn links(headers: &HeaderMap, base: &str, ids: &[&str]) -> Response {
    // Spring's links are absolute, built from the request's host.
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let mut l = Map::new();
    let link = |href: String, templated: bool| json!({"href": href, "templated": templated});
    let prefix = format!("http://{host}{base}");
    l.insert("self".into(), link(prefix.clone(), false));
    for id in ids {
        l.insert((*id).to_string(), link(format!("{prefix}/{id}"), false));
        if id.ends_with("events") {
            l.insert(
                format!("{id}-name"),
                link(format!("{prefix}/{id}/{{name}}"), true),
            );
            l.insert(
                format!("{id}-name-eventType"),
                link(format!("{prefix}/{id}/{{name}}/{{eventType}}"), true),
            );
        }
        if *id == "health" {
            l.insert(
                "health-path".into(),
                link(format!("{prefix}/health/{{*path}}"), true),
            );
        }
    }
    json_response(200, &json!({"_links": l}))
}

/// `POST /actuator/circuitbreakers/{name}` (spec §4.4).
async fn update_state(
    State(s): S,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !s.actuator.state_changes {
        return error(
            403,
            "changing a circuit breaker's state is turned off; turn it on with Actuator::allow_state_changes(true)".into(),
        );
    }
    if !crate::media::consumes_json(&headers) {
        return error(
            415,
            format!(
                "the body's Content-Type must be one of {}",
                crate::media::WRITE_CONSUMES.join(", ")
            ),
        );
    }
    let Some(cb) = s.actuator.breakers.find(&name) else {
        return error(404, format!("no circuit breaker named '{name}'"));
    };
    let requested = serde_json::from_slice::<Value>(&body).ok().and_then(|v| {
        v.get("updateState")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let from = cb.state();
    let result = match requested.as_deref() {
        Some("CLOSE") => cb.transition_to_closed_state(),
        Some("FORCE_OPEN") => cb.transition_to_forced_open_state(),
        Some("DISABLE") => cb.transition_to_disabled_state(),
        _ => {
            return error(
                400,
                "the body must be {\"updateState\": \"CLOSE\" | \"FORCE_OPEN\" | \"DISABLE\"}"
                    .into(),
            )
        }
    };
    if let Err(e) = result {
        return error(409, e.to_string());
    }
    let to = cb.state();
    // The breaker's own transition event says what changed; this says who asked.
    tracing::warn!(
        target: "breaker::actuator",
        name,
        from = from.name(),
        to = to.name(),
        update_state = requested.as_deref().unwrap_or_default(),
        "CircuitBreaker '{name}' changed state from {from} to {to} through the actuator \
         (POST /actuator/circuitbreakers/{name}, updateState {})",
        requested.as_deref().unwrap_or_default()
    );
    json_response(
        200,
        &json!({
            "circuitBreakerName": name,
            "currentState": cb.state().name(),
            "message": format!("{name} state has been changed successfully"),
        }),
    )
}
