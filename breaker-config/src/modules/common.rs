//! Small pieces every module's rules share: setting a resolved value with its source, reading
//! the copied properties, Spring's common setter checks, and the JSON form of values.

use std::time::Duration;

use serde_json::{json, Map, Value};

use breaker_core::SignedDuration;

use crate::bind::{Block, Bound};
use crate::duration::JavaDuration;
use crate::error::ConfigError;
use crate::model::{Setting, ValueSource};
use crate::schema::Val;
use crate::validate::COUNT_ALLOWED;

use super::family::Merged;

/// Replaces `target` with `value` written at `b` in the block `label`.
pub(crate) fn set<T>(target: &mut Setting<T>, value: T, b: &Bound, label: &ValueSource) {
    *target = Setting {
        value,
        source: label.clone(),
        origin: Some(b.origin.clone()),
    };
}

/// A copied boolean property (`enableExponentialBackoff`, `subscribeForEvents`, ...).
pub(crate) fn merged_bool<I: Ord>(m: &Merged<I>, id: I) -> Option<(bool, &(Bound, ValueSource))> {
    match m.get(&id) {
        Some(
            e @ (
                Bound {
                    val: Val::Bool(v), ..
                },
                _,
            ),
        ) => Some((*v, e)),
        _ => None,
    }
}

/// A copied integer property (`eventConsumerBufferSize`).
pub(crate) fn merged_int<I: Ord>(m: &Merged<I>, id: I) -> Option<(i32, &(Bound, ValueSource))> {
    match m.get(&id) {
        Some(
            e @ (
                Bound {
                    val: Val::Int(v), ..
                },
                _,
            ),
        ) => Some((*v, e)),
        _ => None,
    }
}

/// The setting a copied property gives: its value, where it was written, which block.
pub(crate) fn from_merged<T>(value: T, e: &(Bound, ValueSource)) -> Setting<T> {
    Setting {
        value,
        source: e.1.clone(),
        origin: Some(e.0.origin.clone()),
    }
}

/// `eventConsumerBufferSize` from an entry's properties (100 when unset).
pub(crate) fn buffer_size<I: Ord>(m: &Merged<I>, id: I) -> Setting<i32> {
    merged_int(m, id).map_or(Setting::default(100), |(v, e)| from_merged(v, e))
}

/// `eventConsumerBufferSize` and other counts: Spring's `< 1` check.
pub(crate) fn at_least_one(name: &str, v: &Val) -> Option<Result<(), (String, &'static str)>> {
    match v {
        Val::Int(i) if *i < 1 => Some(Err((
            format!("{name} must be greater than or equal to 1."),
            COUNT_ALLOWED,
        ))),
        _ => None,
    }
}

/// A negative duration, with Java's `Duration.toString()` of it.
pub(crate) fn negative(v: &Val) -> Option<String> {
    match v {
        Val::Duration(d) if d.0 < 0 => Some(d.java_string()),
        _ => None,
    }
}

/// Java's `Duration.toMillis()`; `None` where Java throws `ArithmeticException`.
pub(crate) fn to_millis(d: &JavaDuration) -> Option<u64> {
    i64::try_from(d.millis())
        .ok()
        .and_then(|m| u64::try_from(m).ok())
}

/// The error a core builder or factory throws for the value at `b` (written in the block
/// at `path`).
pub(crate) fn build_error(
    path: &str,
    setting: &str,
    b: &Bound,
    message: String,
    allowed: &str,
) -> Box<ConfigError> {
    Box::new(ConfigError {
        origin: Some(b.origin.clone()),
        key: format!("{path}.{setting}"),
        value: Some(b.text.clone()),
        message,
        allowed: allowed.to_string(),
    })
}

/// A duration in milliseconds: an integer when whole, else a fraction (500 ns = 0.0005).
pub(crate) fn ms(d: Duration) -> Value {
    let nanos = d.as_nanos();
    if nanos.is_multiple_of(1_000_000) {
        Value::from(u64::try_from(nanos / 1_000_000).unwrap_or(u64::MAX))
    } else {
        json!(nanos as f64 / 1e6)
    }
}

/// `{"from": ..., "at": ...}` for one setting.
pub(crate) fn source<T>(s: &Setting<T>) -> Value {
    match &s.origin {
        Some(o) => json!({"from": s.source.to_string(), "at": o.to_string()}),
        None => json!({"from": s.source.to_string()}),
    }
}

/// Builds a JSON object from `(key, value)` pairs.
pub(crate) fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<Map<String, Value>>(),
    )
}

/// The error breaker-core's builder returns for the value at `b` (written in the block at
/// `path`): Resilience4j's message and what is allowed come from the core, the position and
/// the text from the file.
pub(crate) fn core_error(
    path: &str,
    e: &breaker_core::ConfigError,
    b: Option<&Bound>,
) -> Box<ConfigError> {
    match b {
        Some(b) => build_error(path, e.setting(), b, e.message().to_string(), e.allowed()),
        None => Box::new(ConfigError {
            origin: None,
            key: format!("{path}.{}", e.setting()),
            value: Some(e.value().to_string()),
            message: e.message().to_string(),
            allowed: e.allowed().to_string(),
        }),
    }
}

/// The duration the block sets for `id`, as breaker-core's builders take it.
pub(crate) fn duration_at<I: Ord>(block: &Block<I>, id: I) -> Option<(&Bound, SignedDuration)> {
    match block.get(id) {
        Some(
            b @ Bound {
                val: Val::Duration(d),
                ..
            },
        ) => Some((b, SignedDuration::from_nanos(d.0))),
        _ => None,
    }
}

/// The integer the block sets for `id`.
pub(crate) fn int_at<I: Ord>(block: &Block<I>, id: I) -> Option<(&Bound, i32)> {
    match block.get(id) {
        Some(
            b @ Bound {
                val: Val::Int(v), ..
            },
        ) => Some((b, *v)),
        _ => None,
    }
}

/// The boolean the block sets for `id`.
pub(crate) fn bool_at<I: Ord>(block: &Block<I>, id: I) -> Option<(&Bound, bool)> {
    match block.get(id) {
        Some(
            b @ Bound {
                val: Val::Bool(v), ..
            },
        ) => Some((b, *v)),
        _ => None,
    }
}

/// The value of a checked duration (the core's builder has refused negative ones).
pub(crate) fn unsigned(d: SignedDuration) -> Duration {
    Duration::from_nanos(d.as_nanos().clamp(0, i128::from(u64::MAX)) as u64)
}
