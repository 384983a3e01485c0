//! [`Actuator`]: what the endpoints read (the registries, the management settings) and how
//! they are served.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use breaker_config::modules::ModuleRegistries;
use breaker_config::{LiveConfig, ManagementConfig, ShowDetails};
use breaker_core::ratelimiter::{RateLimiter, RateLimiterEvent};
use breaker_core::{RecentEvents, Registry, RegistryEntryEvent, SubscriptionId};
use breaker_metrics::{MeteredRegistry, MetricsPublisher};

/// A rate limiter's settings that only the actuator reads (Resilience4j's Spring
/// `InstanceProperties`; they are not part of `RateLimiterConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimiterSettings {
    /// `subscribeForEvents`: whether `ratelimiterevents` keeps the limiter's recent events.
    pub subscribe_for_events: bool,
    /// `eventConsumerBufferSize`: how many (>= 1; default 100).
    pub event_consumer_buffer_size: usize,
    /// `registerHealthIndicator`: whether the `rateLimiters` health component reports it.
    pub register_health_indicator: bool,
    /// `allowHealthIndicatorToFail`: whether a limiter that makes calls wait longer than its
    /// timeout reports `DOWN` (else `RATE_LIMITED`).
    pub allow_health_indicator_to_fail: bool,
}

type ManagementSource = Arc<dyn Fn() -> ManagementConfig + Send + Sync>;
type RateLimiterLookup = Arc<dyn Fn(&str) -> RateLimiterSettings + Send + Sync>;

/// Spring Boot Actuator's Resilience4j endpoints over a service's registries, served by
/// [`router`](Self::router) (integration spec §4, §5).
///
/// Built from a [`LiveConfig`] ([`from_live`](Self::from_live)) it follows the file's
/// `management.*` settings as Spring Boot does (only `health` exposed unless
/// `management.endpoints.web.exposure.include` says more; details only with
/// `management.endpoint.health.show-details: always`; the health components only with
/// `management.health.circuitbreakers.enabled` / `ratelimiters.enabled`), and each
/// instance's `registerHealthIndicator`, `allowHealthIndicatorToFail`,
/// `eventConsumerBufferSize` and (rate limiters) `subscribeForEvents`. Built in code
/// ([`new`](Self::new)) every endpoint is exposed, details are shown and both health
/// components are on, unless [`management`](Self::management) says otherwise.
///
/// The state-changing `POST /actuator/circuitbreakers/{name}` is off unless
/// [`allow_state_changes`](Self::allow_state_changes) turns it on.
#[derive(Clone)]
pub struct Actuator {
    pub(crate) breakers: Registry,
    pub(crate) modules: ModuleRegistries,
    pub(crate) management: ManagementSource,
    pub(crate) rate_limiters: RateLimiterLookup,
    pub(crate) state_changes: bool,
    /// The drills of `/actuator/drills` (issue #28), and whether its POST is allowed.
    pub(crate) drills: Option<breaker_core::drill::DrillRegistry>,
    pub(crate) drill_changes: bool,
    #[cfg(feature = "prometheus")]
    pub(crate) prometheus: Option<metrics_exporter_prometheus::PrometheusHandle>,
    /// The buffers and meters every router of this actuator (and its clones) shares, made by
    /// the first router: a second router must not subscribe again, or every call would be
    /// counted twice.
    pub(crate) common: Arc<OnceLock<Arc<Common>>>,
}

impl std::fmt::Debug for Actuator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Actuator")
            .field("breakers", &self.breakers)
            .field("state_changes", &self.state_changes)
            .finish_non_exhaustive()
    }
}

/// What [`Actuator::new`] serves: every endpoint, with details, both health components.
fn everything() -> ManagementConfig {
    ManagementConfig {
        exposure_include: vec!["*".into()],
        show_details: ShowDetails::Always,
        health_circuit_breakers: true,
        health_rate_limiters: true,
        ..ManagementConfig::default()
    }
}

impl Actuator {
    /// The endpoints of `breakers` (and of the module registries given with
    /// [`modules`](Self::modules)): every endpoint exposed, details shown, both health
    /// components on. Rate limiters keep their events and are left out of health unless
    /// [`rate_limiter_settings`](Self::rate_limiter_settings) says otherwise.
    pub fn new(breakers: Registry) -> Self {
        let management = everything();
        Actuator {
            breakers,
            modules: ModuleRegistries::default(),
            management: Arc::new(move || management.clone()),
            rate_limiters: Arc::new(|_| RateLimiterSettings {
                subscribe_for_events: true,
                event_consumer_buffer_size: breaker_core::DEFAULT_EVENT_CONSUMER_BUFFER_SIZE,
                register_health_indicator: false,
                allow_health_indicator_to_fail: false,
            }),
            state_changes: false,
            drills: None,
            drill_changes: false,
            #[cfg(feature = "prometheus")]
            prometheus: None,
            common: Arc::default(),
        }
    }

    /// The endpoints of everything `live` holds, following its files' `management.*` and
    /// instance settings, reloads included (the base path and the exposed endpoints are
    /// read once, when the router is built).
    pub fn from_live(live: &LiveConfig) -> Self {
        let l = live.clone();
        let m = live.clone();
        Actuator {
            breakers: live.registry().clone(),
            modules: live.module_registries().clone(),
            management: Arc::new(move || l.management()),
            rate_limiters: Arc::new(move |name| {
                let modules = m.modules();
                let rl = &modules.rate_limiter;
                let listed = rl.instances.get(name);
                match listed.or(rl.default_config.as_ref().ok()) {
                    Some(r) => RateLimiterSettings {
                        subscribe_for_events: listed.is_some() && r.subscribe_for_events.value,
                        event_consumer_buffer_size: r.event_consumer_buffer_size.value.max(1)
                            as usize,
                        register_health_indicator: r.register_health_indicator.value,
                        allow_health_indicator_to_fail: r.allow_health_indicator_to_fail.value,
                    },
                    None => RateLimiterSettings {
                        subscribe_for_events: false,
                        event_consumer_buffer_size:
                            breaker_core::DEFAULT_EVENT_CONSUMER_BUFFER_SIZE,
                        register_health_indicator: false,
                        allow_health_indicator_to_fail: false,
                    },
                }
            }),
            state_changes: false,
            drills: Some(live.drills().clone()),
            drill_changes: false,
            #[cfg(feature = "prometheus")]
            prometheus: None,
            common: Arc::default(),
        }
    }

    /// Serves the retries, time limiters, bulkheads, thread-pool bulkheads and rate limiters
    /// of `modules` too.
    pub fn modules(mut self, modules: ModuleRegistries) -> Self {
        self.modules = modules;
        self.common = Arc::default();
        self
    }

    /// Uses `management` (exposure, base path, health settings, metric tags) instead of
    /// what [`new`](Self::new) or [`from_live`](Self::from_live) chose.
    pub fn management(mut self, management: ManagementConfig) -> Self {
        self.management = Arc::new(move || management.clone());
        self.common = Arc::default();
        self
    }

    /// Says, for each rate limiter name, whether its events are kept and whether health
    /// reports it (Resilience4j's `subscribeForEvents`, `registerHealthIndicator`, ...).
    pub fn rate_limiter_settings(
        mut self,
        f: impl Fn(&str) -> RateLimiterSettings + Send + Sync + 'static,
    ) -> Self {
        self.rate_limiters = Arc::new(f);
        self.common = Arc::default();
        self
    }

    /// Serves `GET /actuator/drills` for `drills` (set by [`from_live`](Self::from_live) to
    /// the config's drills), breaker's own endpoint (issue #28).
    pub fn drills(mut self, drills: breaker_core::drill::DrillRegistry) -> Self {
        self.drills = Some(drills);
        self
    }

    /// Turns on `POST /actuator/drills/{name}` (off by default: 403), which starts
    /// (`{"fault": "error", "error": "timeout", "durationMs": 5000}`) or stops
    /// (`{"stop": true}`) a drill at run time; JSON bodies only (415 otherwise), as the state
    /// POST. Protect it as you protect that one.
    pub fn allow_drill_changes(mut self, allow: bool) -> Self {
        self.drill_changes = allow;
        self
    }

    /// Turns on `POST /actuator/circuitbreakers/{name}` (`{"updateState": "CLOSE" |
    /// "FORCE_OPEN" | "DISABLE"}`), which changes a breaker's state. Off by default: anyone
    /// who reaches the endpoint could open every breaker. A name the registry does not have
    /// is a 404; nothing is created (Resilience4j creates the breaker).
    pub fn allow_state_changes(mut self, allow: bool) -> Self {
        self.state_changes = allow;
        self
    }

    /// Serves `/actuator/prometheus` from `handle` (the installed
    /// `metrics-exporter-prometheus` recorder's), with every registry's meters published
    /// through the `metrics` facade and refreshed before each scrape. See
    /// [`install_prometheus_recorder`](crate::install_prometheus_recorder).
    #[cfg(feature = "prometheus")]
    pub fn prometheus(mut self, handle: metrics_exporter_prometheus::PrometheusHandle) -> Self {
        self.prometheus = Some(handle);
        self.common = Arc::default();
        self
    }

    /// The management settings in force.
    pub fn management_config(&self) -> ManagementConfig {
        (self.management)()
    }
}

/// The state the handlers share.
pub(crate) struct Shared {
    pub(crate) actuator: Actuator,
    pub(crate) common: Arc<Common>,
}

/// What every router of one actuator shares.
pub(crate) struct Common {
    /// The rate limiters' event buffers (only those with `subscribeForEvents`).
    pub(crate) rate_limiter_events: Arc<Mutex<BTreeMap<String, LimiterBuffer>>>,
    pub(crate) metrics: Option<MetricsPublisher>,
}

pub(crate) struct LimiterBuffer {
    limiter: RateLimiter,
    pub(crate) events: RecentEvents<RateLimiterEvent>,
    subscription: SubscriptionId,
}

impl Common {
    pub(crate) fn new(actuator: &Actuator) -> Arc<Self> {
        let m = &actuator.modules;
        actuator.breakers.enable_event_buffers();
        m.retry.enable_event_buffers();
        m.time_limiter.enable_event_buffers();
        m.bulkhead.enable_event_buffers();
        m.thread_pool_bulkhead.enable_event_buffers();
        let buffers: Arc<Mutex<BTreeMap<String, LimiterBuffer>>> = Arc::default();
        {
            let buffers = buffers.clone();
            let settings = actuator.rate_limiters.clone();
            m.rate_limiter.subscribe(move |e| match e {
                RegistryEntryEvent::Added(l) => add_buffer(&buffers, &settings, l),
                RegistryEntryEvent::Removed(l) => {
                    if let Some(b) = lock(&buffers).remove(l.name()) {
                        b.limiter.unsubscribe(b.subscription);
                    }
                }
                RegistryEntryEvent::Replaced { .. } => {}
            });
        }
        for l in m.rate_limiter.all() {
            add_buffer(&buffers, &actuator.rate_limiters, &l);
        }
        Arc::new(Common {
            rate_limiter_events: buffers,
            metrics: actuator.metrics_publisher(),
        })
    }
}

impl Actuator {
    #[cfg(feature = "prometheus")]
    fn metrics_publisher(&self) -> Option<MetricsPublisher> {
        self.prometheus.as_ref()?;
        let m = self.management_config();
        let publisher = MetricsPublisher::new(m.metrics_tags.clone());
        fn bind<R: MeteredRegistry>(p: &MetricsPublisher, m: &ManagementConfig, r: &R) {
            if m.metrics_enabled(R::SECTION) {
                let section_tags = m
                    .modules
                    .get(R::SECTION)
                    .map(|s| s.tags.clone())
                    .unwrap_or_default();
                p.bind_tagged(r, section_tags);
            }
        }
        bind(&publisher, &m, &self.breakers);
        bind(&publisher, &m, &self.modules.retry);
        bind(&publisher, &m, &self.modules.time_limiter);
        bind(&publisher, &m, &self.modules.bulkhead);
        bind(&publisher, &m, &self.modules.thread_pool_bulkhead);
        bind(&publisher, &m, &self.modules.rate_limiter);
        Some(publisher)
    }

    #[cfg(not(feature = "prometheus"))]
    fn metrics_publisher(&self) -> Option<MetricsPublisher> {
        None
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn add_buffer(
    buffers: &Mutex<BTreeMap<String, LimiterBuffer>>,
    settings: &RateLimiterLookup,
    limiter: &RateLimiter,
) {
    let s = settings(limiter.name());
    if !s.subscribe_for_events {
        return;
    }
    let events = RecentEvents::new(s.event_consumer_buffer_size);
    let theirs = events.clone();
    let subscription = limiter.subscribe(move |e| theirs.push(e));
    let old = lock(buffers).insert(
        limiter.name().to_string(),
        LimiterBuffer {
            limiter: limiter.clone(),
            events,
            subscription,
        },
    );
    if let Some(b) = old {
        b.limiter.unsubscribe(b.subscription);
    }
}
