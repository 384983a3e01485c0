//! `resilience4j.bulkhead`, the semaphore bulkhead (`CommonBulkheadConfigurationProperties`,
//! bulkhead/rate-limiter spec §4.1): `maxConcurrentCalls`, `maxWaitDuration`,
//! `writableStackTraceEnabled`, `eventConsumerBufferSize`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::bind::Block;
use crate::error::ConfigError;
use crate::model::{Base, Setting, ValueSource};
use crate::schema::{Kind, Schema, Val};
use crate::validate::COUNT_ALLOWED;

use super::common::{
    at_least_one, bool_at, buffer_size, core_error, duration_at, int_at, ms, negative, object, set,
    source, unsigned,
};
use super::family::{Merged, Module};

/// A bindable `resilience4j.bulkhead` property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum BulkheadKey {
    MaxConcurrentCalls,
    MaxWaitDuration,
    WritableStackTraceEnabled,
    EventConsumerBufferSize,
    BaseConfig,
}

use BulkheadKey as K;

/// The effective configuration of one semaphore bulkhead, each setting with its source.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedBulkhead {
    /// The instance name, or `default` for the default config.
    pub name: String,
    /// What it builds on.
    pub base: Base,
    /// `maxConcurrentCalls`: calls in flight at once, >= 1 from Spring (default 25).
    pub max_concurrent_calls: Setting<i32>,
    /// `maxWaitDuration`: how long a call waits for a permit, >= 0 (default 0).
    pub max_wait_duration: Setting<Duration>,
    /// `writableStackTraceEnabled` (default true).
    pub writable_stack_trace_enabled: Setting<bool>,
    /// `eventConsumerBufferSize`, >= 1 (default 100).
    pub event_consumer_buffer_size: Setting<i32>,
}

/// `resilience4j.bulkhead`.
pub(crate) struct Bulkhead;

impl Schema for Bulkhead {
    type Id = BulkheadKey;
    const SECTION: &'static str = "bulkhead";
    const PREFIX: &'static str = "resilience4j.bulkhead";
    const NOUN: &'static str = "bulkhead";
    const INSTANCE_MAPS: &'static [&'static str] = &["instances", "backends"];
    const TOP_LEVEL: &'static [&'static str] = &[
        "configs",
        "instances",
        "backends",
        "bulkheadAspectOrder",
        "tags",
        "metrics",
    ];
    const SETTINGS: &'static [(BulkheadKey, &'static str, Kind)] = &[
        (K::MaxConcurrentCalls, "maxConcurrentCalls", Kind::Int),
        (K::MaxWaitDuration, "maxWaitDuration", Kind::Duration),
        (
            K::WritableStackTraceEnabled,
            "writableStackTraceEnabled",
            Kind::Bool,
        ),
        (
            K::EventConsumerBufferSize,
            "eventConsumerBufferSize",
            Kind::Int,
        ),
        (K::BaseConfig, "baseConfig", Kind::Text),
    ];
    const LEGACY: &'static [(&'static str, &'static str)] = &[
        ("tags", "not an instance setting: tags apply to every instance of the section (resilience4j.bulkhead.tags)"),
        ("fairCallHandlingStrategyEnabled", "not bindable from Spring configuration (set it in code with a customizer)"),
        ("maxWaitTime", "a Resilience4j 0.x key that binds nothing; use maxWaitDuration"),
        ("type", "not a bulkhead setting: the thread-pool bulkhead is configured under resilience4j.thread-pool-bulkhead and chosen on the annotation"),
        ("registerHealthIndicator", "not a bulkhead setting (only circuit breakers and rate limiters have health indicators)"),
    ];
    const BASE_CONFIG: BulkheadKey = K::BaseConfig;
    const EXAMPLE: &'static str = "maxConcurrentCalls: 10";

    fn check(id: BulkheadKey, v: &Val) -> Result<(), (String, &'static str)> {
        match id {
            K::MaxConcurrentCalls => at_least_one("maxConcurrentCalls", v).unwrap_or(Ok(())),
            K::EventConsumerBufferSize => {
                at_least_one("eventConsumerBufferSize", v).unwrap_or(Ok(()))
            }
            K::MaxWaitDuration => match negative(v) {
                Some(_) => Err((
                    "maxWaitDuration must be greater than or equal to 0.".into(),
                    "a duration of at least 0ms",
                )),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    fn conversion_allowed(id: BulkheadKey, fallback: &'static str) -> &'static str {
        match id {
            K::MaxConcurrentCalls | K::EventConsumerBufferSize => COUNT_ALLOWED,
            _ => fallback,
        }
    }
}

impl Module for Bulkhead {
    type Resolved = ResolvedBulkhead;
    const MERGED: &'static [BulkheadKey] = &[K::EventConsumerBufferSize];

    fn library_defaults(name: &str) -> ResolvedBulkhead {
        ResolvedBulkhead {
            name: name.to_string(),
            base: Base::LibraryDefaults,
            max_concurrent_calls: Setting::default(25),
            max_wait_duration: Setting::default(Duration::ZERO),
            writable_stack_trace_enabled: Setting::default(true),
            event_consumer_buffer_size: Setting::default(100),
        }
    }

    fn build(
        mut r: ResolvedBulkhead,
        block: &Block<BulkheadKey>,
        _merged: &Merged<BulkheadKey>,
        l: &ValueSource,
    ) -> Result<ResolvedBulkhead, Box<ConfigError>> {
        let calls = int_at(block, K::MaxConcurrentCalls);
        let wait = duration_at(block, K::MaxWaitDuration);
        // `buildConfig(from(base), props)`: the core builder checks this level (Spring's
        // setters have already refused what it would).
        let mut core = r.to_core_builder();
        if let Some((_, v)) = calls {
            core = core.max_concurrent_calls(i64::from(v));
        }
        if let Some((_, d)) = wait {
            core = core.max_wait_duration(d);
        }
        core.build().map_err(|e| {
            let at = match e.setting() {
                "maxConcurrentCalls" => calls.map(|v| v.0),
                _ => wait.map(|v| v.0),
            };
            core_error(&block.path, &e, at)
        })?;
        if let Some((b, v)) = calls {
            set(&mut r.max_concurrent_calls, v, b, l);
        }
        if let Some((b, d)) = wait {
            set(&mut r.max_wait_duration, unsigned(d), b, l);
        }
        if let Some((b, v)) = bool_at(block, K::WritableStackTraceEnabled) {
            set(&mut r.writable_stack_trace_enabled, v, b, l);
        }
        Ok(r)
    }

    fn identify(r: &mut ResolvedBulkhead, name: &str, base: Base) {
        r.name = name.to_string();
        r.base = base;
    }

    fn finish(
        r: &mut ResolvedBulkhead,
        _registered: &Merged<BulkheadKey>,
        last: &Merged<BulkheadKey>,
        _listed: bool,
    ) {
        r.event_consumer_buffer_size = buffer_size(last, K::EventConsumerBufferSize);
    }
}

impl ResolvedBulkhead {
    /// The settings as in `NN.modules.expected.json` (durations in ms).
    pub fn to_json(&self) -> Value {
        object(vec![
            ("maxConcurrentCalls", json!(self.max_concurrent_calls.value)),
            ("maxWaitDuration", ms(self.max_wait_duration.value)),
            (
                "writableStackTraceEnabled",
                json!(self.writable_stack_trace_enabled.value),
            ),
            (
                "eventConsumerBufferSize",
                json!(self.event_consumer_buffer_size.value),
            ),
        ])
    }

    /// Where each setting came from.
    pub fn sources_json(&self) -> Value {
        object(vec![
            ("maxConcurrentCalls", source(&self.max_concurrent_calls)),
            ("maxWaitDuration", source(&self.max_wait_duration)),
            (
                "writableStackTraceEnabled",
                source(&self.writable_stack_trace_enabled),
            ),
            (
                "eventConsumerBufferSize",
                source(&self.event_consumer_buffer_size),
            ),
        ])
    }
}
