//! The five aspect orders (`resilience4j.retry.retryAspectOrder`, ...; integration spec §1.1):
//! Spring nests the layers by them, the lowest value outermost. Missing keys take Spring Boot
//! 3's defaults, which nest `Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(fn)))))`.

use serde_json::{json, Value};

use crate::convert;
use crate::error::ConfigError;
use crate::model::{Setting, ValueSource};
use crate::placeholders::Resolver;
use crate::property::Document;

/// The aspect order of each layer, with where it is set. A lower value is an outer layer.
#[derive(Clone, Debug, PartialEq)]
pub struct AspectOrder {
    /// `resilience4j.retry.retryAspectOrder` (default 2147483642).
    pub retry: Setting<i32>,
    /// `resilience4j.circuitbreaker.circuitBreakerAspectOrder` (default 2147483643).
    pub circuit_breaker: Setting<i32>,
    /// `resilience4j.ratelimiter.rateLimiterAspectOrder` (default 2147483644).
    pub rate_limiter: Setting<i32>,
    /// `resilience4j.timelimiter.timeLimiterAspectOrder` (default 2147483645).
    pub time_limiter: Setting<i32>,
    /// `resilience4j.bulkhead.bulkheadAspectOrder` (default 2147483646); the thread-pool
    /// bulkhead runs in the same aspect.
    pub bulkhead: Setting<i32>,
}

/// `(layer, section, key, Boot 3 default)`, in the default nesting, outermost first.
const KEYS: [(&str, &str, &str, i32); 5] = [
    ("retry", "retry", "retryAspectOrder", i32::MAX - 5),
    (
        "circuitbreaker",
        "circuitbreaker",
        "circuitBreakerAspectOrder",
        i32::MAX - 4,
    ),
    (
        "ratelimiter",
        "ratelimiter",
        "rateLimiterAspectOrder",
        i32::MAX - 3,
    ),
    (
        "timelimiter",
        "timelimiter",
        "timeLimiterAspectOrder",
        i32::MAX - 2,
    ),
    ("bulkhead", "bulkhead", "bulkheadAspectOrder", i32::MAX - 1),
];

impl Default for AspectOrder {
    fn default() -> Self {
        AspectOrder {
            retry: Setting::default(KEYS[0].3),
            circuit_breaker: Setting::default(KEYS[1].3),
            rate_limiter: Setting::default(KEYS[2].3),
            time_limiter: Setting::default(KEYS[3].3),
            bulkhead: Setting::default(KEYS[4].3),
        }
    }
}

impl AspectOrder {
    fn slots(&self) -> [(&'static str, &Setting<i32>); 5] {
        [
            (KEYS[0].0, &self.retry),
            (KEYS[1].0, &self.circuit_breaker),
            (KEYS[2].0, &self.rate_limiter),
            (KEYS[3].0, &self.time_limiter),
            (KEYS[4].0, &self.bulkhead),
        ]
    }

    /// The layers (`retry`, `circuitbreaker`, `ratelimiter`, `timelimiter`, `bulkhead`)
    /// outermost first. Spring leaves the relative order of equal values undefined; they
    /// keep the default nesting here.
    pub fn outermost_first(&self) -> Vec<(&'static str, i32)> {
        let mut v: Vec<(&'static str, i32)> =
            self.slots().iter().map(|(n, s)| (*n, s.value)).collect();
        v.sort_by_key(|(_, o)| *o);
        v
    }

    /// `{"retry": .., "circuitbreaker": .., "ratelimiter": .., "timelimiter": .., "bulkhead": ..}`.
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for (n, s) in self.slots() {
            m.insert(n.to_string(), json!(s.value));
        }
        Value::Object(m)
    }

    /// Where each order came from.
    pub fn sources_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for (n, s) in self.slots() {
            m.insert(n.to_string(), super::common::source(s));
        }
        Value::Object(m)
    }
}

/// Reads the five orders from the active documents (the highest-precedence one that has a
/// key wins); values that are not an `int` are errors, as Spring's binding fails on them.
pub(crate) fn read(docs: &[&Document], resolver: &Resolver<'_>) -> (AspectOrder, Vec<ConfigError>) {
    let mut order = AspectOrder::default();
    let mut errors = Vec::new();
    for (i, (_, section, key, _)) in KEYS.iter().enumerate() {
        let found = docs.iter().rev().find_map(|d| {
            d.properties.iter().rev().find(|p| {
                p.name.len() == 3
                    && p.name[0].is("resilience4j")
                    && p.name[1].is(section)
                    && p.name[2].is(key)
            })
        });
        let Some(p) = found else { continue };
        let text = match resolver.resolve(&p.value) {
            Ok(t) => t,
            Err(message) => {
                errors.push(ConfigError {
                    origin: Some(p.value_origin.clone()),
                    key: p.key.clone(),
                    value: Some(p.value.clone()),
                    message,
                    allowed: "a value whose ${...} placeholders resolve".into(),
                });
                continue;
            }
        };
        let text = text.trim();
        if text.is_empty() {
            continue; // Spring converts "" to null: the default stays
        }
        match convert::int(text) {
            Ok(v) => {
                let s = Setting {
                    value: v,
                    source: ValueSource::Section,
                    origin: Some(p.value_origin.clone()),
                };
                match i {
                    0 => order.retry = s,
                    1 => order.circuit_breaker = s,
                    2 => order.rate_limiter = s,
                    3 => order.time_limiter = s,
                    _ => order.bulkhead = s,
                }
            }
            Err(allowed) => errors.push(ConfigError {
                origin: Some(p.value_origin.clone()),
                key: p.key.clone(),
                value: Some(text.to_string()),
                message: format!("Failed to convert '{text}' to int"),
                allowed: format!("{allowed} (a lower value is an outer layer)"),
            }),
        }
    }
    (order, errors)
}
