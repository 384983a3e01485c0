//! `GET /actuator/drills` and the opt-in `POST /actuator/drills/{name}` (issue #28): list the
//! drills, start or stop one at run time. breaker's own endpoint (Resilience4j has no drills),
//! present when the actuator has a drill registry ([`Actuator::from_live`] or
//! [`Actuator::drills`]); the POST follows the state POST's rules: off (403) unless
//! [`Actuator::allow_drill_changes`] turns it on, JSON bodies only (415 otherwise).
//!
//! [`Actuator::from_live`]: crate::Actuator::from_live
//! [`Actuator::drills`]: crate::Actuator::drills
//! [`Actuator::allow_drill_changes`]: crate::Actuator::allow_drill_changes

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use breaker_core::drill::{DrillConfig, DrillErrorKind, DrillRegistry, Fault, Latency, Rejection};
use serde_json::{json, Value};

use crate::actuator::Shared;

type S = State<Arc<Shared>>;

/// Adds the drill routes under `base` when the actuator has a drill registry.
pub(crate) fn routes(r: Router<Arc<Shared>>, base: &str, shared: &Shared) -> Router<Arc<Shared>> {
    if shared.actuator.drills.is_none() {
        return r;
    }
    r.route(&format!("{base}/drills"), get(list))
        .route(&format!("{base}/drills/{{name}}"), post(change))
}

/// The body of `GET /actuator/drills`: `{"drills": {name: {"active", "config", "injected",
/// "injectedErrors", "injectedLatency", "injectedHangs", "passed"}}}`.
pub(crate) fn report(drills: &DrillRegistry) -> Value {
    let now = drills.clock().now_nanos();
    let map: serde_json::Map<String, Value> = drills
        .drills()
        .into_iter()
        .map(|(name, d)| {
            let m = d.metrics();
            let v = json!({
                "active": d.is_active(now),
                "fault": d.config().map(|c| c.fault.kind()),
                "injected": m.injected(),
                "injectedErrors": m.injected_errors,
                "injectedLatency": m.injected_latency,
                "injectedHangs": m.injected_hangs,
                "passed": m.passed,
            });
            (name, v)
        })
        .collect();
    json!({ "drills": map })
}

async fn list(State(s): S) -> Response {
    match &s.actuator.drills {
        Some(d) => crate::response::json(200, &report(d)),
        None => crate::response::error(404, "no drills".into()),
    }
}

async fn change(
    State(s): S,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(drills) = &s.actuator.drills else {
        return crate::response::error(404, "no drills".into());
    };
    if !s.actuator.drill_changes {
        return crate::response::error(
            403,
            "starting and stopping drills is turned off; turn it on with Actuator::allow_drill_changes(true)".into(),
        );
    }
    if !crate::media::consumes_json(&headers) {
        return crate::response::error(
            415,
            format!(
                "the body's Content-Type must be one of {}",
                crate::media::WRITE_CONSUMES.join(", ")
            ),
        );
    }
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return crate::response::error(400, "the body must be a JSON object".into());
    };
    if body.get("stop").and_then(Value::as_bool) == Some(true) {
        let stopped = drills.stop(&name);
        tracing::warn!(target: "breaker::actuator", name, stopped, "drill of '{name}' stopped through the actuator (POST /actuator/drills/{name})");
        return crate::response::json(200, &json!({"name": name, "stopped": stopped}));
    }
    let config = match parse(&body) {
        Ok(c) => c,
        Err(m) => return crate::response::error(400, m),
    };
    if let Err(e) = drills.start(&name, config) {
        return crate::response::error(400, e.to_string());
    }
    tracing::warn!(target: "breaker::actuator", name, "drill of '{name}' started through the actuator (POST /actuator/drills/{name})");
    crate::response::json(200, &json!({"name": name, "started": true}))
}

const SHAPE: &str = "the body must be {\"stop\": true} or {\"fault\": \"error\" | \"latency\" | \"hang\", \"error\": \"timeout\" (for error), \"latencyMs\" or \"latencyMinMs\" and \"latencyMaxMs\" (for latency), optional \"percentage\", \"delayMs\", \"durationMs\", \"calls\", \"seed\"}";

/// A drill from a POST body.
fn parse(b: &Value) -> Result<DrillConfig, String> {
    let ms = |k: &str| b.get(k).and_then(Value::as_u64).map(Duration::from_millis);
    let fault = match b.get("fault").and_then(Value::as_str) {
        Some("error") => {
            let e = b.get("error").and_then(Value::as_str).ok_or(SHAPE)?;
            Fault::Error(match Rejection::parse(e) {
                Some(r) => DrillErrorKind::Rejection(r),
                None => DrillErrorKind::Named(e.to_owned()),
            })
        }
        Some("latency") => match (ms("latencyMs"), ms("latencyMinMs"), ms("latencyMaxMs")) {
            (Some(d), None, None) => Fault::Latency(Latency::Fixed(d)),
            (None, Some(min), Some(max)) => Fault::Latency(Latency::Uniform { min, max }),
            _ => return Err(SHAPE.into()),
        },
        Some("hang") => Fault::Hang,
        _ => return Err(SHAPE.into()),
    };
    let mut c = DrillConfig::new(fault).after(ms("delayMs"), ms("durationMs"));
    if let Some(p) = b.get("percentage") {
        c.percentage = p.as_f64().ok_or(SHAPE)?;
    }
    c.max_calls = b.get("calls").and_then(Value::as_u64);
    c.seed = b.get("seed").and_then(Value::as_u64);
    Ok(c)
}

/// Adds `"underDrill": true` to an instance's health details while a drill injects into it
/// (the status stays the breaker's own: a drill is judged by what the breaker does).
pub(crate) fn mark(s: &Shared, name: &str, details: &mut Value) {
    let Some(drills) = &s.actuator.drills else {
        return;
    };
    if !drills.any() {
        return;
    }
    let now = drills.clock().now_nanos();
    if drills.drill(name).is_some_and(|d| d.is_active(now)) {
        if let Value::Object(m) = details {
            m.insert("underDrill".into(), Value::Bool(true));
        }
    }
}
