//! `resilience4j.timelimiter` (`CommonTimeLimiterConfigurationProperties`, retry/time-limiter
//! spec §4.4): `timeoutDuration`, `cancelRunningFuture`, `eventConsumerBufferSize`. Unlike the
//! other modules it has no `backends` alias.

use std::time::Duration;

use serde_json::{json, Value};

use crate::bind::Block;
use crate::error::ConfigError;
use crate::model::{Base, Setting, ValueSource};
use crate::schema::{Kind, Schema, Val};
use crate::validate::COUNT_ALLOWED;

use super::common::{
    at_least_one, bool_at, buffer_size, core_error, duration_at, ms, negative, object, set, source,
    unsigned,
};
use super::family::{Merged, Module};

/// A bindable `resilience4j.timelimiter` property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum TimeLimiterKey {
    TimeoutDuration,
    CancelRunningFuture,
    EventConsumerBufferSize,
    BaseConfig,
}

use TimeLimiterKey as K;

/// The effective configuration of one time limiter, each setting with its source.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedTimeLimiter {
    /// The instance name, or `default` for the default config.
    pub name: String,
    /// What it builds on.
    pub base: Base,
    /// `timeoutDuration`, >= 0 (default 1 s); Resilience4j uses whole milliseconds.
    pub timeout_duration: Setting<Duration>,
    /// `cancelRunningFuture` (default true).
    pub cancel_running_future: Setting<bool>,
    /// `eventConsumerBufferSize`, >= 1 (default 100).
    pub event_consumer_buffer_size: Setting<i32>,
}

/// `resilience4j.timelimiter`.
pub(crate) struct TimeLimiter;

impl Schema for TimeLimiter {
    type Id = TimeLimiterKey;
    const SECTION: &'static str = "timelimiter";
    const PREFIX: &'static str = "resilience4j.timelimiter";
    const NOUN: &'static str = "time-limiter";
    const INSTANCE_MAPS: &'static [&'static str] = &["instances"];
    const TOP_LEVEL: &'static [&'static str] = &[
        "configs",
        "instances",
        "timeLimiterAspectOrder",
        "tags",
        "metrics",
    ];
    const MISPLACED_TOP_LEVEL: &'static [(&'static str, &'static str)] = &[(
        "backends",
        "not bound for the time limiter, which has no backends alias (Spring binds nothing for it); use instances",
    )];
    const SETTINGS: &'static [(TimeLimiterKey, &'static str, Kind)] = &[
        (K::TimeoutDuration, "timeoutDuration", Kind::Duration),
        (K::CancelRunningFuture, "cancelRunningFuture", Kind::Bool),
        (
            K::EventConsumerBufferSize,
            "eventConsumerBufferSize",
            Kind::Int,
        ),
        (K::BaseConfig, "baseConfig", Kind::Text),
    ];
    const LEGACY: &'static [(&'static str, &'static str)] = &[
        ("tags", "not an instance setting: tags apply to every instance of the section (resilience4j.timelimiter.tags)"),
        ("timeout", "not a time-limiter setting; use timeoutDuration"),
        ("registerHealthIndicator", "not a time-limiter setting (only circuit breakers and rate limiters have health indicators)"),
    ];
    const BASE_CONFIG: TimeLimiterKey = K::BaseConfig;
    const EXAMPLE: &'static str = "timeoutDuration: 2s";

    fn check(id: TimeLimiterKey, v: &Val) -> Result<(), (String, &'static str)> {
        match id {
            K::EventConsumerBufferSize => {
                at_least_one("eventConsumerBufferSize", v).unwrap_or(Ok(()))
            }
            // Resilience4j's setter names the wrong property in this message.
            K::TimeoutDuration => match negative(v) {
                Some(d) => Err((
                    format!("Illegal argument exponentialMaxWaitDuration: {d} is negative"),
                    "a duration of at least 0ms",
                )),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    fn conversion_allowed(id: TimeLimiterKey, fallback: &'static str) -> &'static str {
        match id {
            K::EventConsumerBufferSize => COUNT_ALLOWED,
            _ => fallback,
        }
    }
}

impl Module for TimeLimiter {
    type Resolved = ResolvedTimeLimiter;
    const MERGED: &'static [TimeLimiterKey] = &[K::EventConsumerBufferSize];

    fn library_defaults(name: &str) -> ResolvedTimeLimiter {
        ResolvedTimeLimiter {
            name: name.to_string(),
            base: Base::LibraryDefaults,
            timeout_duration: Setting::default(Duration::from_secs(1)),
            cancel_running_future: Setting::default(true),
            event_consumer_buffer_size: Setting::default(100),
        }
    }

    fn build(
        mut r: ResolvedTimeLimiter,
        block: &Block<TimeLimiterKey>,
        _merged: &Merged<TimeLimiterKey>,
        l: &ValueSource,
    ) -> Result<ResolvedTimeLimiter, Box<ConfigError>> {
        let timeout = duration_at(block, K::TimeoutDuration);
        // `buildConfig(from(base), props)`: the core builder checks this level (Spring's
        // setter has already refused a negative timeout).
        let mut core = r.to_core_builder();
        if let Some((_, d)) = timeout {
            core = core.timeout_duration(d);
        }
        core.build()
            .map_err(|e| core_error(&block.path, &e, timeout.map(|v| v.0)))?;
        if let Some((b, d)) = timeout {
            set(&mut r.timeout_duration, unsigned(d), b, l);
        }
        if let Some((b, v)) = bool_at(block, K::CancelRunningFuture) {
            set(&mut r.cancel_running_future, v, b, l);
        }
        Ok(r)
    }

    fn identify(r: &mut ResolvedTimeLimiter, name: &str, base: Base) {
        r.name = name.to_string();
        r.base = base;
    }

    fn finish(
        r: &mut ResolvedTimeLimiter,
        _registered: &Merged<TimeLimiterKey>,
        last: &Merged<TimeLimiterKey>,
        _listed: bool,
    ) {
        r.event_consumer_buffer_size = buffer_size(last, K::EventConsumerBufferSize);
    }
}

impl ResolvedTimeLimiter {
    /// The settings as in `NN.modules.expected.json` (durations in ms).
    pub fn to_json(&self) -> Value {
        object(vec![
            ("timeoutDuration", ms(self.timeout_duration.value)),
            (
                "cancelRunningFuture",
                json!(self.cancel_running_future.value),
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
            ("timeoutDuration", source(&self.timeout_duration)),
            ("cancelRunningFuture", source(&self.cancel_running_future)),
            (
                "eventConsumerBufferSize",
                source(&self.event_consumer_buffer_size),
            ),
        ])
    }
}
