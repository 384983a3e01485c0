//! `ThreadPoolBulkheadConfig`: Resilience4j's thread-pool-bulkhead settings, defaults and
//! validation, and what each means on an async runtime.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::config::{below_minimum, check_non_negative_millis};
use crate::clock::{Clock, SystemClock};
use crate::config::SignedDuration;
use crate::error::ConfigError;

/// `DEFAULT_QUEUE_CAPACITY`: 100 calls.
pub const DEFAULT_QUEUE_CAPACITY: u32 = 100;
/// `DEFAULT_KEEP_ALIVE_DURATION`: 20 ms.
pub const DEFAULT_KEEP_ALIVE_DURATION: Duration = Duration::from_millis(20);

/// The number of CPUs Java's `Runtime.availableProcessors()` would report (at least 1),
/// read once per process (the OS query reads cgroup files: a long `baseConfig` chain builds
/// a config per link).
fn available_processors() -> u32 {
    static CPUS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1)
    })
}

/// The configuration of one thread-pool bulkhead: Resilience4j's `ThreadPoolBulkheadConfig`.
///
/// On an async runtime the "pool" is a concurrency limit plus a bounded FIFO queue (see
/// [`ThreadPoolBulkhead`](super::ThreadPoolBulkhead)):
///
/// | setting | here |
/// |---|---|
/// | `maxThreadPoolSize` | the most calls running at once |
/// | `queueCapacity` | the most calls waiting to run (0: none wait, a call finding every slot busy is rejected) |
/// | `coreThreadPoolSize` | validated (>= 1, <= `maxThreadPoolSize`) and reported in the metrics; no effect on admission |
/// | `keepAliveDuration` | validated (>= 0 ms) and reported; no effect (an async pool keeps no idle threads) |
/// | `writableStackTraceEnabled` | accepted; no effect |
///
/// Defaults are Resilience4j's: `maxThreadPoolSize` = the CPU count,
/// `coreThreadPoolSize` = the CPU count minus 1 (at least 1), `queueCapacity` 100,
/// `keepAliveDuration` 20 ms.
#[derive(Clone)]
pub struct ThreadPoolBulkheadConfig {
    pub(crate) max_thread_pool_size: u32,
    pub(crate) core_thread_pool_size: u32,
    pub(crate) queue_capacity: u32,
    pub(crate) keep_alive_duration: Duration,
    pub(crate) writable_stack_trace_enabled: bool,
    pub(crate) clock: Arc<dyn Clock>,
}

impl Default for ThreadPoolBulkheadConfig {
    fn default() -> Self {
        let cpus = available_processors();
        ThreadPoolBulkheadConfig {
            max_thread_pool_size: cpus,
            core_thread_pool_size: cpus.saturating_sub(1).max(1),
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
            keep_alive_duration: DEFAULT_KEEP_ALIVE_DURATION,
            writable_stack_trace_enabled: true,
            clock: SystemClock::shared(),
        }
    }
}

impl ThreadPoolBulkheadConfig {
    /// A builder starting from Resilience4j's defaults (`ThreadPoolBulkheadConfig.custom()`).
    pub fn builder() -> ThreadPoolBulkheadConfigBuilder {
        ThreadPoolBulkheadConfig::default().to_builder()
    }

    /// A builder starting from a copy of this config (`ThreadPoolBulkheadConfig.from(base)`,
    /// which in Resilience4j mutates and returns `base` itself; here `base` is unchanged).
    pub fn to_builder(&self) -> ThreadPoolBulkheadConfigBuilder {
        ThreadPoolBulkheadConfigBuilder {
            max_thread_pool_size: i64::from(self.max_thread_pool_size),
            core_thread_pool_size: i64::from(self.core_thread_pool_size),
            queue_capacity: i64::from(self.queue_capacity),
            keep_alive_duration: self.keep_alive_duration.into(),
            writable_stack_trace_enabled: self.writable_stack_trace_enabled,
            clock: self.clock.clone(),
        }
    }

    /// `maxThreadPoolSize`: the most calls running at once (>= 1).
    pub fn max_thread_pool_size(&self) -> u32 {
        self.max_thread_pool_size
    }
    /// `coreThreadPoolSize` (>= 1, <= `maxThreadPoolSize`): reported, no effect.
    pub fn core_thread_pool_size(&self) -> u32 {
        self.core_thread_pool_size
    }
    /// `queueCapacity`: the most calls waiting to run (>= 0).
    pub fn queue_capacity(&self) -> u32 {
        self.queue_capacity
    }
    /// `keepAliveDuration` (whole ms, >= 0): reported, no effect.
    pub fn keep_alive_duration(&self) -> Duration {
        self.keep_alive_duration
    }
    /// `writableStackTraceEnabled`: no effect in Rust.
    pub fn writable_stack_trace_enabled(&self) -> bool {
        self.writable_stack_trace_enabled
    }
    /// The clock of event times.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }
}

impl fmt::Debug for ThreadPoolBulkheadConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPoolBulkheadConfig")
            .field("max_thread_pool_size", &self.max_thread_pool_size)
            .field("core_thread_pool_size", &self.core_thread_pool_size)
            .field("queue_capacity", &self.queue_capacity)
            .field("keep_alive_duration", &self.keep_alive_duration)
            .field(
                "writable_stack_trace_enabled",
                &self.writable_stack_trace_enabled,
            )
            .finish_non_exhaustive()
    }
}

/// Builds a validated [`ThreadPoolBulkheadConfig`] (Resilience4j's
/// `ThreadPoolBulkheadConfig.Builder`).
#[derive(Clone)]
pub struct ThreadPoolBulkheadConfigBuilder {
    max_thread_pool_size: i64,
    core_thread_pool_size: i64,
    queue_capacity: i64,
    keep_alive_duration: SignedDuration,
    writable_stack_trace_enabled: bool,
    clock: Arc<dyn Clock>,
}

impl ThreadPoolBulkheadConfigBuilder {
    /// `maxThreadPoolSize`; allowed 1..=2147483647 and >= `coreThreadPoolSize`; default the
    /// CPU count.
    pub fn max_thread_pool_size(mut self, size: i64) -> Self {
        self.max_thread_pool_size = size;
        self
    }
    /// `coreThreadPoolSize`; allowed 1..=`maxThreadPoolSize`; default the CPU count minus 1
    /// (at least 1).
    pub fn core_thread_pool_size(mut self, size: i64) -> Self {
        self.core_thread_pool_size = size;
        self
    }
    /// `queueCapacity`; allowed 0..=2147483647; default 100.
    pub fn queue_capacity(mut self, capacity: i64) -> Self {
        self.queue_capacity = capacity;
        self
    }
    /// `keepAliveDuration`; allowed >= 0 ms; default 20 ms.
    pub fn keep_alive_duration(mut self, d: impl Into<SignedDuration>) -> Self {
        self.keep_alive_duration = d.into();
        self
    }
    /// `writableStackTraceEnabled`; default true; no effect in Rust.
    pub fn writable_stack_trace_enabled(mut self, enabled: bool) -> Self {
        self.writable_stack_trace_enabled = enabled;
        self
    }
    /// The clock of event times (default: the shared system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Validates the settings as Resilience4j's builder does, in the order Spring sets them
    /// (`queueCapacity`, `coreThreadPoolSize`, `maxThreadPoolSize`, `keepAliveDuration`), then
    /// `maxThreadPoolSize >= coreThreadPoolSize`.
    ///
    /// # Errors
    /// A [`ConfigError`] with Resilience4j's message, e.g. `maxThreadPoolSize must be a
    /// positive integer value >= 1` or `maxThreadPoolSize must be a greater than or equals to
    /// coreThreadPoolSize`.
    pub fn build(self) -> Result<ThreadPoolBulkheadConfig, ConfigError> {
        const INT_MAX: i64 = i32::MAX as i64;
        let int_error = |setting: &'static str, v: i64, allowed: &'static str, min: &str| {
            below_minimum(setting, v.to_string(), allowed, min)
        };
        if !(0..=INT_MAX).contains(&self.queue_capacity) {
            return Err(int_error(
                "queueCapacity",
                self.queue_capacity,
                "0 to 2147483647 (calls)",
                "0",
            ));
        }
        if !(1..=INT_MAX).contains(&self.core_thread_pool_size) {
            return Err(int_error(
                "coreThreadPoolSize",
                self.core_thread_pool_size,
                "1 to 2147483647",
                "1",
            ));
        }
        if !(1..=INT_MAX).contains(&self.max_thread_pool_size) {
            return Err(int_error(
                "maxThreadPoolSize",
                self.max_thread_pool_size,
                "1 to 2147483647 (calls)",
                "1",
            ));
        }
        check_non_negative_millis("keepAliveDuration", self.keep_alive_duration)?;
        if self.max_thread_pool_size < self.core_thread_pool_size {
            return Err(ConfigError::new(
                "maxThreadPoolSize",
                self.max_thread_pool_size.to_string(),
                "at least coreThreadPoolSize",
                "maxThreadPoolSize must be a greater than or equals to coreThreadPoolSize"
                    .to_string(),
            ));
        }
        Ok(ThreadPoolBulkheadConfig {
            max_thread_pool_size: self.max_thread_pool_size as u32,
            core_thread_pool_size: self.core_thread_pool_size as u32,
            queue_capacity: self.queue_capacity as u32,
            keep_alive_duration: Duration::from_millis(
                self.keep_alive_duration
                    .as_millis_floor()
                    .clamp(0, u64::MAX as i128) as u64,
            ),
            writable_stack_trace_enabled: self.writable_stack_trace_enabled,
            clock: self.clock,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_keep_alive_gets_resilience4j_s_message() {
        // -0.5 ms is -1 ms by Java's toMillis() (floor).
        let e = ThreadPoolBulkheadConfig::builder()
            .keep_alive_duration(SignedDuration::from_nanos(-500_000))
            .build()
            .unwrap_err();
        assert_eq!(
            e.message(),
            "keepAliveDuration must be a positive integer value >= 0"
        );
        assert_eq!((e.setting(), e.value()), ("keepAliveDuration", "-1ms"));
    }

    #[test]
    fn defaults_follow_the_cpu_count() {
        let c = ThreadPoolBulkheadConfig::default();
        let cpus = available_processors();
        assert_eq!(c.max_thread_pool_size(), cpus);
        assert_eq!(c.core_thread_pool_size(), (cpus - 1).max(1));
        assert_eq!(c.queue_capacity(), 100);
        assert_eq!(c.keep_alive_duration(), Duration::from_millis(20));
    }

    #[test]
    fn a_core_size_above_the_default_max_fails_as_in_spring() {
        let e = ThreadPoolBulkheadConfig::builder()
            .core_thread_pool_size(i64::from(available_processors()) + 1)
            .build()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "maxThreadPoolSize must be a greater than or equals to coreThreadPoolSize"
        );
    }

    #[test]
    fn to_builder_copies() {
        let base = ThreadPoolBulkheadConfig::builder()
            .max_thread_pool_size(4)
            .core_thread_pool_size(2)
            .build()
            .unwrap();
        let derived = base.to_builder().queue_capacity(7).build().unwrap();
        assert_eq!(derived.queue_capacity(), 7);
        assert_eq!(
            base.queue_capacity(),
            100,
            "the base is not mutated (Java's is)"
        );
    }
}
