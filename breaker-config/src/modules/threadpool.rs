//! `resilience4j.thread-pool-bulkhead` (`CommonThreadPoolBulkheadConfigurationProperties`,
//! bulkhead/rate-limiter spec §4.2). Its sizes are Java `int`s whose unset value is 0 (sizes)
//! or -1 (queue), so a size of 0 or less and a negative queue are ignored, not refused;
//! `contextPropagators` add up along the base chain; `maxThreadPoolSize` below
//! `coreThreadPoolSize` fails the build. The two sizes default to the machine's processors.

use std::time::Duration;

use serde_json::{json, Value};

use crate::bind::{Block, Bound};
use crate::error::{ConfigError, Warning};
use crate::model::{Base, Setting, ValueSource};
use crate::schema::{Kind, Schema, Val};
use crate::validate::COUNT_ALLOWED;

use super::common::{
    at_least_one, bool_at, buffer_size, build_error, core_error, duration_at, int_at, ms, object,
    set, source, unsigned,
};
use super::family::{Merged, Module};

/// A bindable `resilience4j.thread-pool-bulkhead` property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum ThreadPoolKey {
    MaxThreadPoolSize,
    CoreThreadPoolSize,
    QueueCapacity,
    KeepAliveDuration,
    WritableStackTraceEnabled,
    ContextPropagators,
    EventConsumerBufferSize,
    BaseConfig,
}

use ThreadPoolKey as K;

/// The effective configuration of one thread-pool bulkhead, each setting with its source.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedThreadPoolBulkhead {
    /// The instance name, or `default` for the default config.
    pub name: String,
    /// What it builds on.
    pub base: Base,
    /// `maxThreadPoolSize`, >= 1; `None` = the machine's processor count (the default).
    pub max_thread_pool_size: Setting<Option<i32>>,
    /// `coreThreadPoolSize`, >= 1; `None` = processors - 1, at least 1 (the default).
    pub core_thread_pool_size: Setting<Option<i32>>,
    /// `queueCapacity`: calls waiting for a worker, >= 0; 0 = direct hand-off (default 100).
    pub queue_capacity: Setting<i32>,
    /// `keepAliveDuration`: idle time before workers above the core size stop (default 20 ms).
    pub keep_alive_duration: Setting<Duration>,
    /// `writableStackTraceEnabled` (default true).
    pub writable_stack_trace_enabled: Setting<bool>,
    /// `contextPropagators` class names, base chain first; `None` when not configured.
    pub context_propagators: Setting<Option<Vec<String>>>,
    /// `eventConsumerBufferSize`, >= 1 (default 100).
    pub event_consumer_buffer_size: Setting<i32>,
}

/// `Runtime.availableProcessors()`, read once per process.
pub(crate) fn available_processors() -> i32 {
    static CPUS: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| i32::try_from(n.get()).unwrap_or(i32::MAX))
            .unwrap_or(1)
    })
}

impl ResolvedThreadPoolBulkhead {
    /// `maxThreadPoolSize` with the machine default applied.
    pub fn max_threads(&self) -> i32 {
        self.max_thread_pool_size
            .value
            .unwrap_or_else(available_processors)
    }

    /// `coreThreadPoolSize` with the machine default applied (processors - 1, at least 1).
    pub fn core_threads(&self) -> i32 {
        self.core_thread_pool_size
            .value
            .unwrap_or_else(|| (available_processors() - 1).max(1))
    }
}

/// `resilience4j.thread-pool-bulkhead`.
pub(crate) struct ThreadPoolBulkhead;

impl Schema for ThreadPoolBulkhead {
    type Id = ThreadPoolKey;
    const SECTION: &'static str = "thread-pool-bulkhead";
    const PREFIX: &'static str = "resilience4j.thread-pool-bulkhead";
    const NOUN: &'static str = "thread-pool-bulkhead";
    const INSTANCE_MAPS: &'static [&'static str] = &["instances", "backends"];
    const TOP_LEVEL: &'static [&'static str] =
        &["configs", "instances", "backends", "tags", "metrics"];
    const MISPLACED_TOP_LEVEL: &'static [(&'static str, &'static str)] = &[(
        "threadPoolBulkheadAspectOrder",
        "not bound: the thread-pool bulkhead runs in the bulkhead aspect, ordered by resilience4j.bulkhead.bulkheadAspectOrder (Spring binds nothing for it)",
    )];
    const SETTINGS: &'static [(ThreadPoolKey, &'static str, Kind)] = &[
        (K::MaxThreadPoolSize, "maxThreadPoolSize", Kind::Int),
        (K::CoreThreadPoolSize, "coreThreadPoolSize", Kind::Int),
        (K::QueueCapacity, "queueCapacity", Kind::Int),
        (K::KeepAliveDuration, "keepAliveDuration", Kind::Duration),
        (
            K::WritableStackTraceEnabled,
            "writableStackTraceEnabled",
            Kind::Bool,
        ),
        (K::ContextPropagators, "contextPropagators", Kind::ClassList),
        (
            K::EventConsumerBufferSize,
            "eventConsumerBufferSize",
            Kind::Int,
        ),
        (K::BaseConfig, "baseConfig", Kind::Text),
    ];
    const LEGACY: &'static [(&'static str, &'static str)] = &[
        ("tags", "not an instance setting: tags apply to every instance of the section (resilience4j.thread-pool-bulkhead.tags)"),
        ("rejectedExecutionHandler", "not bindable from Spring configuration (set it in code with a customizer)"),
        ("maxConcurrentCalls", "a semaphore-bulkhead setting (resilience4j.bulkhead); the thread-pool bulkhead limits calls with maxThreadPoolSize and queueCapacity"),
        ("keepAliveTime", "a Resilience4j 1.x key that binds nothing in 2.x; use keepAliveDuration"),
    ];
    const BASE_CONFIG: ThreadPoolKey = K::BaseConfig;
    const EXAMPLE: &'static str = "maxThreadPoolSize: 4";

    fn check(id: ThreadPoolKey, v: &Val) -> Result<(), (String, &'static str)> {
        match id {
            K::EventConsumerBufferSize => {
                at_least_one("eventConsumerBufferSize", v).unwrap_or(Ok(()))
            }
            _ => Ok(()),
        }
    }

    fn conversion_allowed(id: ThreadPoolKey, fallback: &'static str) -> &'static str {
        match id {
            K::EventConsumerBufferSize => COUNT_ALLOWED,
            _ => fallback,
        }
    }

    fn class_advice(id: ThreadPoolKey) -> Option<&'static str> {
        match id {
            K::ContextPropagators => Some("context propagation across the bulkhead's tasks is the runtime's job in Rust (e.g. tracing spans); the names are kept for breaker check only"),
            _ => None,
        }
    }
}

impl ThreadPoolBulkhead {
    /// Warnings for values Resilience4j ignores without a word.
    pub(crate) fn lint(block: &Block<ThreadPoolKey>, warnings: &mut Vec<Warning>) {
        let mut warn = |b: &Bound, setting: &str, why: &str| {
            warnings.push(Warning::new(
                Some(b.origin.clone()),
                format!("{}.{setting}", block.path),
                why.to_string(),
            ));
        };
        for (id, b) in &block.values {
            match (*id, &b.val) {
                (K::MaxThreadPoolSize, Val::Int(v)) if *v <= 0 => warn(b, "maxThreadPoolSize", "Resilience4j ignores a size of 0 or less (the inherited or default size stays)"),
                (K::CoreThreadPoolSize, Val::Int(v)) if *v <= 0 => warn(b, "coreThreadPoolSize", "Resilience4j ignores a size of 0 or less (the inherited or default size stays)"),
                (K::QueueCapacity, Val::Int(v)) if *v < 0 => warn(b, "queueCapacity", "Resilience4j ignores a negative capacity (the inherited or default capacity stays)"),
                _ => {}
            }
        }
    }
}

impl Module for ThreadPoolBulkhead {
    type Resolved = ResolvedThreadPoolBulkhead;
    const MERGED: &'static [ThreadPoolKey] = &[K::EventConsumerBufferSize];
    const DEFAULT_COPY_FIRST: bool = true;

    fn library_defaults(name: &str) -> ResolvedThreadPoolBulkhead {
        ResolvedThreadPoolBulkhead {
            name: name.to_string(),
            base: Base::LibraryDefaults,
            max_thread_pool_size: Setting::default(None),
            core_thread_pool_size: Setting::default(None),
            queue_capacity: Setting::default(100),
            keep_alive_duration: Setting::default(Duration::from_millis(20)),
            writable_stack_trace_enabled: Setting::default(true),
            context_propagators: Setting::default(None),
            event_consumer_buffer_size: Setting::default(100),
        }
    }

    fn build(
        mut r: ResolvedThreadPoolBulkhead,
        block: &Block<ThreadPoolKey>,
        _merged: &Merged<ThreadPoolKey>,
        l: &ValueSource,
    ) -> Result<ResolvedThreadPoolBulkhead, Box<ConfigError>> {
        // Java `int`s whose unset values are 0 and -1: out-of-range values are skipped.
        let queue = int_at(block, K::QueueCapacity).filter(|(_, v)| *v >= 0);
        let core_size = int_at(block, K::CoreThreadPoolSize).filter(|(_, v)| *v > 0);
        let max_size = int_at(block, K::MaxThreadPoolSize).filter(|(_, v)| *v > 0);
        let keep_alive = duration_at(block, K::KeepAliveDuration);
        // `buildConfig(from(base), props)`: the core builder checks this level, in Spring's
        // order, then maxThreadPoolSize >= coreThreadPoolSize.
        let mut core = r.to_core_builder();
        if let Some((_, v)) = queue {
            core = core.queue_capacity(i64::from(v));
        }
        if let Some((_, v)) = core_size {
            core = core.core_thread_pool_size(i64::from(v));
        }
        if let Some((_, v)) = max_size {
            core = core.max_thread_pool_size(i64::from(v));
        }
        if let Some((_, d)) = keep_alive {
            core = core.keep_alive_duration(d);
        }
        core.build().map_err(|e| {
            let at = match e.setting() {
                "keepAliveDuration" => keep_alive.map(|v| v.0),
                "queueCapacity" => queue.map(|v| v.0),
                "coreThreadPoolSize" => core_size.map(|v| v.0),
                // Below the core size: point at the size this block set.
                _ => match (max_size, core_size) {
                    (None, Some((b, _))) => {
                        let allowed = match r.max_thread_pool_size.value {
                            Some(max) => format!(
                                "at most maxThreadPoolSize ({max}, set in {})",
                                r.max_thread_pool_size.source
                            ),
                            None => format!(
                                "at most maxThreadPoolSize, which is not set and defaults to the CPU count: {} (Runtime.availableProcessors() on this machine); set maxThreadPoolSize to allow a larger core size",
                                available_processors()
                            ),
                        };
                        let message = e.message().to_string();
                        return build_error(
                            &block.path,
                            "coreThreadPoolSize",
                            b,
                            message,
                            &allowed,
                        );
                    }
                    (max, _) => max.map(|v| v.0),
                },
            };
            core_error(&block.path, &e, at)
        })?;
        if let Some((b, v)) = queue {
            set(&mut r.queue_capacity, v, b, l);
        }
        if let Some((b, v)) = core_size {
            set(&mut r.core_thread_pool_size, Some(v), b, l);
        }
        if let Some((b, v)) = max_size {
            set(&mut r.max_thread_pool_size, Some(v), b, l);
        }
        if let Some((b, d)) = keep_alive {
            set(&mut r.keep_alive_duration, unsigned(d), b, l);
        }
        if let Some((b, v)) = bool_at(block, K::WritableStackTraceEnabled) {
            set(&mut r.writable_stack_trace_enabled, v, b, l);
        }
        // The builder accumulates propagators: the base chain's first.
        if let Some(b) = block.get(K::ContextPropagators) {
            if let Val::Names(n) = &b.val {
                let mut all = r.context_propagators.value.clone().unwrap_or_default();
                all.extend(n.iter().cloned());
                set(&mut r.context_propagators, Some(all), b, l);
            }
        }
        Ok(r)
    }

    fn identify(r: &mut ResolvedThreadPoolBulkhead, name: &str, base: Base) {
        r.name = name.to_string();
        r.base = base;
    }

    fn finish(
        r: &mut ResolvedThreadPoolBulkhead,
        _registered: &Merged<ThreadPoolKey>,
        last: &Merged<ThreadPoolKey>,
        _listed: bool,
    ) {
        r.event_consumer_buffer_size = buffer_size(last, K::EventConsumerBufferSize);
    }
}

impl ResolvedThreadPoolBulkhead {
    /// The settings as in `NN.modules.expected.json` (durations in ms; the machine-dependent
    /// sizes as `"availableProcessors"` / `"availableProcessors-1"`).
    pub fn to_json(&self) -> Value {
        let size = |v: Option<i32>, default: &str| v.map_or(json!(default), |n| json!(n));
        object(vec![
            (
                "maxThreadPoolSize",
                size(self.max_thread_pool_size.value, "availableProcessors"),
            ),
            (
                "coreThreadPoolSize",
                size(self.core_thread_pool_size.value, "availableProcessors-1"),
            ),
            ("queueCapacity", json!(self.queue_capacity.value)),
            ("keepAliveDuration", ms(self.keep_alive_duration.value)),
            (
                "writableStackTraceEnabled",
                json!(self.writable_stack_trace_enabled.value),
            ),
            ("contextPropagators", json!(self.context_propagators.value)),
            (
                "eventConsumerBufferSize",
                json!(self.event_consumer_buffer_size.value),
            ),
        ])
    }

    /// Where each setting came from.
    pub fn sources_json(&self) -> Value {
        object(vec![
            ("maxThreadPoolSize", source(&self.max_thread_pool_size)),
            ("coreThreadPoolSize", source(&self.core_thread_pool_size)),
            ("queueCapacity", source(&self.queue_capacity)),
            ("keepAliveDuration", source(&self.keep_alive_duration)),
            (
                "writableStackTraceEnabled",
                source(&self.writable_stack_trace_enabled),
            ),
            ("contextPropagators", source(&self.context_propagators)),
            (
                "eventConsumerBufferSize",
                source(&self.event_consumer_buffer_size),
            ),
        ])
    }
}
