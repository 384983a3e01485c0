//! [`MetricsPublisher`]: binds registries to the `metrics` facade and refreshes their gauges
//! at scrape time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use breaker_core::bulkhead::{Bulkhead, ThreadPoolBulkhead};
use breaker_core::ratelimiter::RateLimiter;
use breaker_core::retry::Retry;
use breaker_core::timelimiter::TimeLimiter;
use breaker_core::{
    InstanceRegistry, Registry, RegistryEntryEvent, RegistryEvent, RegistryInstance,
};

use crate::circuit_breaker::CircuitBreakerMeters;
use crate::family::{Family, Meters, Refresh};
use crate::modules::ReadingMeters;
use crate::register::{describe_all, recorder_installed, Tags};

/// Publishes the meters of bound registries through the `metrics` facade, named, typed and
/// tagged as Resilience4j's Micrometer binders do (integration spec §3): every instance that
/// exists when a registry is bound and every one created later gets its meters
/// (Micrometer's `EntryAdded`); a removed one stops being refreshed (`EntryRemoved`).
///
/// Gauges, and the counters the instances keep themselves (retry, time limiter), are set
/// from each instance's metrics by [`refresh`](Self::refresh): call it right before a scrape
/// (the actuator's `/actuator/prometheus` does), or every few seconds for a push exporter.
/// Only the circuit breaker's call timer and not-permitted counter are fed per call, by the
/// breaker's events, and only while a recorder is installed: with none, binding subscribes
/// to nothing and a call costs what it costs unbound. A recorder installed after binding is
/// picked up by the next `refresh`.
///
/// ```
/// use breaker_core::Registry;
/// use breaker_metrics::MetricsPublisher;
///
/// let registry = Registry::new();
/// let publisher = MetricsPublisher::new([("application", "checkout")]);
/// publisher.bind(&registry);
/// registry.circuit_breaker("payments");
/// publisher.refresh(); // resilience4j_circuitbreaker_state{application,name,state} ...
/// ```
///
/// Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct MetricsPublisher {
    inner: Arc<Inner>,
}

struct Inner {
    tags: Tags,
    families: Mutex<Vec<Arc<dyn Refresh>>>,
    described: AtomicBool,
    /// Held while the gauges are set and while a snapshot of them is rendered, so that no
    /// scrape reads a gauge another refresh is setting.
    snapshot: Mutex<()>,
}

impl std::fmt::Debug for MetricsPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsPublisher")
            .field("tags", &self.inner.tags)
            .finish_non_exhaustive()
    }
}

impl Default for MetricsPublisher {
    fn default() -> Self {
        Self::new(std::iter::empty::<(String, String)>())
    }
}

impl MetricsPublisher {
    /// A publisher that adds `tags` to every meter (Spring Boot's
    /// `management.metrics.tags.*`, e.g. `application`).
    pub fn new<K: Into<String>, V: Into<String>>(tags: impl IntoIterator<Item = (K, V)>) -> Self {
        MetricsPublisher {
            inner: Arc::new(Inner {
                tags: Tags::new(tags),
                families: Mutex::new(Vec::new()),
                described: AtomicBool::new(false),
                snapshot: Mutex::new(()),
            }),
        }
    }

    /// Publishes the meters of every instance of `registry`, now and later.
    pub fn bind<R: MeteredRegistry>(&self, registry: &R) -> &Self {
        self.bind_tagged(registry, std::iter::empty::<(String, String)>())
    }

    /// [`bind`](Self::bind), adding `tags` to the registry's meters (Resilience4j's
    /// `resilience4j.<module>.tags`; they win over the publisher's tags on the same key).
    pub fn bind_tagged<R: MeteredRegistry, K: Into<String>, V: Into<String>>(
        &self,
        registry: &R,
        tags: impl IntoIterator<Item = (K, V)>,
    ) -> &Self {
        self.describe();
        let family = registry.meters(self.inner.tags.and(&Tags::new(tags)));
        self.inner
            .families
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(family);
        self
    }

    /// Sets every gauge and instance-kept counter of every bound instance from its metrics,
    /// now. Reads each instance's metrics once (a breaker's takes its lock briefly, as
    /// `CircuitBreaker::metrics` does), so an instance's gauges (its six state series, its
    /// counts and rates) all come from one reading; never waits for a call. Waits for a
    /// [`snapshot`](Self::snapshot) or another refresh in progress.
    pub fn refresh(&self) {
        self.snapshot(|| ());
    }

    /// [`refresh`](Self::refresh), then `render` (e.g. `PrometheusHandle::render`), with no
    /// other refresh or snapshot of this publisher in between: what `render` reads is one
    /// consistent reading of every instance, even with several scrapers at once (an HA pair
    /// of Prometheus servers). The actuator's `/actuator/prometheus` renders this way.
    /// Calls made meanwhile still feed the per-call meters (the timer, the not-permitted
    /// counter).
    pub fn snapshot<R>(&self, render: impl FnOnce() -> R) -> R {
        let _snapshot = self
            .inner
            .snapshot
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        self.refresh_locked();
        render()
    }

    fn refresh_locked(&self) {
        self.describe();
        let families = self
            .inner
            .families
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for f in families {
            f.refresh();
        }
    }

    fn describe(&self) {
        if !self.inner.described.load(Ordering::Relaxed) && recorder_installed() {
            self.inner.described.store(true, Ordering::Relaxed);
            describe_all();
        }
    }
}

/// A registry whose instances have Resilience4j meters: the circuit breakers' [`Registry`]
/// and the retry, time-limiter, bulkhead, thread-pool-bulkhead and rate-limiter
/// registries.
pub trait MeteredRegistry {
    /// The Spring section of the module (`circuitbreaker`, `retry`, `timelimiter`,
    /// `bulkhead`, `thread-pool-bulkhead`, `ratelimiter`), whose `tags` and
    /// `metrics.enabled` apply to it.
    const SECTION: &'static str;

    #[doc(hidden)]
    fn meters(&self, tags: Tags) -> Arc<dyn Refresh>;
}

impl MeteredRegistry for Registry {
    const SECTION: &'static str = "circuitbreaker";

    fn meters(&self, tags: Tags) -> Arc<dyn Refresh> {
        let family = Family::<CircuitBreakerMeters>::new(tags);
        let f = family.clone();
        self.subscribe(move |e| match e {
            RegistryEvent::Added(b) => f.add(b.name(), b),
            RegistryEvent::Removed(b) => f.remove(b.name()),
            RegistryEvent::Replaced { .. } => {}
        });
        for b in self.all() {
            family.add(b.name(), &b);
        }
        family
    }
}

/// Binds an [`InstanceRegistry`] whose instances `M` meters.
fn bind_instances<I, M>(registry: &InstanceRegistry<I>, tags: Tags) -> Arc<dyn Refresh>
where
    I: RegistryInstance,
    M: Meters<Instance = I>,
{
    let family = Family::<M>::new(tags);
    let f = family.clone();
    registry.subscribe(move |e| match e {
        RegistryEntryEvent::Added(i) => f.add(i.name(), i),
        RegistryEntryEvent::Removed(i) => f.remove(i.name()),
        RegistryEntryEvent::Replaced { .. } => {}
    });
    for i in registry.all() {
        family.add(i.name(), &i);
    }
    family
}

macro_rules! metered {
    ($instance:ty, $meters:ty, $section:literal) => {
        impl MeteredRegistry for InstanceRegistry<$instance> {
            const SECTION: &'static str = $section;

            fn meters(&self, tags: Tags) -> Arc<dyn Refresh> {
                bind_instances::<$instance, $meters>(self, tags)
            }
        }
    };
}

metered!(Retry, ReadingMeters<Retry>, "retry");
metered!(TimeLimiter, ReadingMeters<TimeLimiter>, "timelimiter");
metered!(Bulkhead, ReadingMeters<Bulkhead>, "bulkhead");
metered!(
    ThreadPoolBulkhead,
    ReadingMeters<ThreadPoolBulkhead>,
    "thread-pool-bulkhead"
);
metered!(RateLimiter, ReadingMeters<RateLimiter>, "ratelimiter");
