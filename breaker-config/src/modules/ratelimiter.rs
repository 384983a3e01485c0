//! `resilience4j.ratelimiter` (`CommonRateLimiterConfigurationProperties`, bulkhead/rate-limiter
//! spec §4.3): the core settings (`limitForPeriod`, `limitRefreshPeriod`, `timeoutDuration`,
//! `writableStackTraceEnabled`) and the Spring-only ones (`subscribeForEvents`,
//! `registerHealthIndicator`, `allowHealthIndicatorToFail`, `eventConsumerBufferSize`). The
//! instance map's alias is `limiters`. A limiter gets an event buffer only when its own
//! properties, as they stand when it is registered, say `subscribeForEvents: true`, so a name
//! not listed never gets one.

use std::time::Duration;

use serde_json::{json, Value};

use crate::bind::Block;
use crate::error::ConfigError;
use crate::model::{Base, Setting, ValueSource};
use crate::schema::{Kind, Schema, Val};
use crate::validate::COUNT_ALLOWED;

use super::common::{
    at_least_one, bool_at, buffer_size, core_error, duration_at, from_merged, int_at, merged_bool,
    ms, object, set, source, unsigned,
};
use super::family::{Merged, Module};

/// A bindable `resilience4j.ratelimiter` property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum RateLimiterKey {
    LimitForPeriod,
    LimitRefreshPeriod,
    TimeoutDuration,
    WritableStackTraceEnabled,
    SubscribeForEvents,
    RegisterHealthIndicator,
    AllowHealthIndicatorToFail,
    EventConsumerBufferSize,
    BaseConfig,
}

use RateLimiterKey as K;

/// The effective configuration of one rate limiter, each setting with its source.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedRateLimiter {
    /// The instance name, or `default` for the default config.
    pub name: String,
    /// What it builds on.
    pub base: Base,
    /// `limitForPeriod`: permits per refresh period, >= 1 (default 50).
    pub limit_for_period: Setting<i32>,
    /// `limitRefreshPeriod`: the cycle length, >= 1 ns (default 500 ns).
    pub limit_refresh_period: Setting<Duration>,
    /// `timeoutDuration`: how long a call waits for a permit, >= 0 (default 5 s).
    pub timeout_duration: Setting<Duration>,
    /// `writableStackTraceEnabled` (default true).
    pub writable_stack_trace_enabled: Setting<bool>,
    /// `subscribeForEvents`: whether the limiter gets an event buffer (default false; always
    /// false for a name not listed).
    pub subscribe_for_events: Setting<bool>,
    /// `registerHealthIndicator` (default false).
    pub register_health_indicator: Setting<bool>,
    /// `allowHealthIndicatorToFail` (default false).
    pub allow_health_indicator_to_fail: Setting<bool>,
    /// `eventConsumerBufferSize`, >= 1 (default 100).
    pub event_consumer_buffer_size: Setting<i32>,
}

/// `resilience4j.ratelimiter`.
pub(crate) struct RateLimiter;

impl Schema for RateLimiter {
    type Id = RateLimiterKey;
    const SECTION: &'static str = "ratelimiter";
    const PREFIX: &'static str = "resilience4j.ratelimiter";
    const NOUN: &'static str = "rate-limiter";
    const INSTANCE_MAPS: &'static [&'static str] = &["instances", "limiters"];
    const TOP_LEVEL: &'static [&'static str] = &[
        "configs",
        "instances",
        "limiters",
        "rateLimiterAspectOrder",
        "tags",
        "metrics",
    ];
    const MISPLACED_TOP_LEVEL: &'static [(&'static str, &'static str)] = &[(
        "backends",
        "not bound for the rate limiter, whose alias of instances is limiters (Spring binds nothing for it)",
    )];
    const SETTINGS: &'static [(RateLimiterKey, &'static str, Kind)] = &[
        (K::LimitForPeriod, "limitForPeriod", Kind::Int),
        (K::LimitRefreshPeriod, "limitRefreshPeriod", Kind::Duration),
        (K::TimeoutDuration, "timeoutDuration", Kind::Duration),
        (
            K::WritableStackTraceEnabled,
            "writableStackTraceEnabled",
            Kind::Bool,
        ),
        (K::SubscribeForEvents, "subscribeForEvents", Kind::Bool),
        (
            K::RegisterHealthIndicator,
            "registerHealthIndicator",
            Kind::Bool,
        ),
        (
            K::AllowHealthIndicatorToFail,
            "allowHealthIndicatorToFail",
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
        ("tags", "not an instance setting: tags apply to every instance of the section (resilience4j.ratelimiter.tags)"),
        (
            "drainPermissionsOnResult",
            "not bindable from Spring configuration (set it in code with a customizer)",
        ),
        (
            "limitRefreshPeriodInMillis",
            "a Resilience4j 0.x key that binds nothing; use limitRefreshPeriod",
        ),
        (
            "timeoutInMillis",
            "a Resilience4j 0.x key that binds nothing; use timeoutDuration",
        ),
    ];
    const BASE_CONFIG: RateLimiterKey = K::BaseConfig;
    const EXAMPLE: &'static str = "limitForPeriod: 10";

    fn check(id: RateLimiterKey, v: &Val) -> Result<(), (String, &'static str)> {
        match (id, v) {
            (K::LimitForPeriod, Val::Int(n)) if *n < 1 => Err((
                format!("Illegal argument limitForPeriod: {n} is less than 1"),
                COUNT_ALLOWED,
            )),
            (K::EventConsumerBufferSize, _) => {
                at_least_one("eventConsumerBufferSize", v).unwrap_or(Ok(()))
            }
            _ => Ok(()),
        }
    }

    fn conversion_allowed(id: RateLimiterKey, fallback: &'static str) -> &'static str {
        match id {
            K::LimitForPeriod | K::EventConsumerBufferSize => COUNT_ALLOWED,
            _ => fallback,
        }
    }
}

impl Module for RateLimiter {
    type Resolved = ResolvedRateLimiter;
    const MERGED: &'static [RateLimiterKey] = &[
        K::RegisterHealthIndicator,
        K::AllowHealthIndicatorToFail,
        K::SubscribeForEvents,
        K::EventConsumerBufferSize,
    ];

    fn library_defaults(name: &str) -> ResolvedRateLimiter {
        ResolvedRateLimiter {
            name: name.to_string(),
            base: Base::LibraryDefaults,
            limit_for_period: Setting::default(50),
            limit_refresh_period: Setting::default(Duration::from_nanos(500)),
            timeout_duration: Setting::default(Duration::from_secs(5)),
            writable_stack_trace_enabled: Setting::default(true),
            subscribe_for_events: Setting::default(false),
            register_health_indicator: Setting::default(false),
            allow_health_indicator_to_fail: Setting::default(false),
            event_consumer_buffer_size: Setting::default(100),
        }
    }

    fn build(
        mut r: ResolvedRateLimiter,
        block: &Block<RateLimiterKey>,
        _merged: &Merged<RateLimiterKey>,
        l: &ValueSource,
    ) -> Result<ResolvedRateLimiter, Box<ConfigError>> {
        let limit = int_at(block, K::LimitForPeriod);
        let refresh = duration_at(block, K::LimitRefreshPeriod);
        let timeout = duration_at(block, K::TimeoutDuration);
        let writable = bool_at(block, K::WritableStackTraceEnabled);
        // `buildConfig(from(base), props)`: the core builder checks this level.
        let mut core = r.to_core_builder();
        if let Some((_, v)) = limit {
            core = core.limit_for_period(i64::from(v));
        }
        if let Some((_, d)) = refresh {
            core = core.limit_refresh_period(d);
        }
        if let Some((_, d)) = timeout {
            core = core.timeout_duration(d);
        }
        core.build().map_err(|e| {
            let at = match e.setting() {
                "limitForPeriod" => limit.map(|v| v.0),
                "limitRefreshPeriod" => refresh.map(|v| v.0),
                _ => timeout.map(|v| v.0),
            };
            core_error(&block.path, &e, at)
        })?;
        if let Some((b, v)) = limit {
            set(&mut r.limit_for_period, v, b, l);
        }
        if let Some((b, d)) = refresh {
            set(&mut r.limit_refresh_period, unsigned(d), b, l);
        }
        if let Some((b, d)) = timeout {
            set(&mut r.timeout_duration, unsigned(d), b, l);
        }
        if let Some((b, v)) = writable {
            set(&mut r.writable_stack_trace_enabled, v, b, l);
        }
        Ok(r)
    }

    fn identify(r: &mut ResolvedRateLimiter, name: &str, base: Base) {
        r.name = name.to_string();
        r.base = base;
    }

    fn finish(
        r: &mut ResolvedRateLimiter,
        registered: &Merged<RateLimiterKey>,
        last: &Merged<RateLimiterKey>,
        listed: bool,
    ) {
        let flag = |m: &Merged<RateLimiterKey>, id| {
            merged_bool(m, id).map_or(Setting::default(false), |(v, e)| from_merged(v, e))
        };
        r.register_health_indicator = flag(last, K::RegisterHealthIndicator);
        r.allow_health_indicator_to_fail = flag(last, K::AllowHealthIndicatorToFail);
        r.subscribe_for_events = if listed {
            flag(registered, K::SubscribeForEvents)
        } else {
            Setting::default(false)
        };
        r.event_consumer_buffer_size = buffer_size(last, K::EventConsumerBufferSize);
    }
}

impl ResolvedRateLimiter {
    /// The settings as in `NN.modules.expected.json` (durations in ms, 500 ns = 0.0005).
    pub fn to_json(&self) -> Value {
        object(vec![
            ("limitForPeriod", json!(self.limit_for_period.value)),
            ("limitRefreshPeriod", ms(self.limit_refresh_period.value)),
            ("timeoutDuration", ms(self.timeout_duration.value)),
            (
                "writableStackTraceEnabled",
                json!(self.writable_stack_trace_enabled.value),
            ),
            ("subscribeForEvents", json!(self.subscribe_for_events.value)),
            (
                "registerHealthIndicator",
                json!(self.register_health_indicator.value),
            ),
            (
                "allowHealthIndicatorToFail",
                json!(self.allow_health_indicator_to_fail.value),
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
            ("limitForPeriod", source(&self.limit_for_period)),
            ("limitRefreshPeriod", source(&self.limit_refresh_period)),
            ("timeoutDuration", source(&self.timeout_duration)),
            (
                "writableStackTraceEnabled",
                source(&self.writable_stack_trace_enabled),
            ),
            ("subscribeForEvents", source(&self.subscribe_for_events)),
            (
                "registerHealthIndicator",
                source(&self.register_health_indicator),
            ),
            (
                "allowHealthIndicatorToFail",
                source(&self.allow_health_indicator_to_fail),
            ),
            (
                "eventConsumerBufferSize",
                source(&self.event_consumer_buffer_size),
            ),
        ])
    }
}
