//! The drills of a set of instances: [`DrillRegistry`].

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use arc_swap::ArcSwap;

use super::config::{DrillConfig, DrillConfigError};
use super::events::{DrillEvent, DrillEventKind};
use super::instance::{Drill, InjectedError, Injection, Running};
use crate::events::SubscriptionId;
use crate::publisher::EventPublisher;
use crate::{Clock, SystemClock};

/// Drills configured in every registry of the process: the stacks' one relaxed load.
static CONFIGURED_ANYWHERE: AtomicUsize = AtomicUsize::new(0);

/// Whether any [`DrillRegistry`] of the process has a drill set (one relaxed atomic load):
/// the check the attribute stack makes on every call before looking for a drill.
#[inline(always)]
pub fn any_configured() -> bool {
    CONFIGURED_ANYWHERE.load(Ordering::Relaxed) != 0
}

struct Inner {
    clock: Arc<dyn Clock>,
    drills: ArcSwap<BTreeMap<String, Arc<Drill>>>,
    /// Drills set in this registry (running, waiting for their start, or over).
    configured: AtomicUsize,
    /// Serialises start, stop and apply.
    write: Mutex<()>,
    publisher: EventPublisher<DrillEvent>,
    /// Makers of named errors, by (name, error type).
    factories: RwLock<HashMap<(String, TypeId), Factory>>,
}

type Factory = Arc<dyn Fn() -> Box<dyn Any> + Send + Sync>;

impl Drop for Inner {
    fn drop(&mut self) {
        let n = *self.configured.get_mut();
        CONFIGURED_ANYWHERE.fetch_sub(n, Ordering::Relaxed);
    }
}

/// The drills of a set of instances, by instance name: the fault-injection layer's state.
///
/// Empty by default: with no drill set, [`decide`](Self::decide) is one relaxed atomic
/// load. Cheap to clone; clones share everything. Resilience4j has no drills; this is
/// breaker's own feature, configured under `breaker.drill.instances.<name>` in a file.
///
/// Starting or stopping a drill logs one INFO line (target `breaker::drill`) and publishes a
/// [`DrillEvent`]; so does the first call after a drill's end time or call limit.
///
/// ```
/// use breaker_core::drill::{DrillConfig, DrillRegistry, Fault, DrillErrorKind};
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let drills = DrillRegistry::new();
/// drills.start("inventory", DrillConfig::new(Fault::Error(
///     DrillErrorKind::Named("java.io.IOException".into())))).unwrap();
/// let r: Result<u32, String> = drills
///     .call("inventory", async { Ok(1) }, |e| e.to_string())
///     .await;
/// assert_eq!(r.unwrap_err(), "drill of 'inventory' injected java.io.IOException");
/// assert_eq!(drills.drill("inventory").unwrap().metrics().injected_errors, 1);
/// # }
/// ```
#[derive(Clone)]
pub struct DrillRegistry {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for DrillRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DrillRegistry")
            .field(
                "drills",
                &self.inner.drills.load().keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Default for DrillRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl DrillRegistry {
    /// An empty registry on the shared [`SystemClock`].
    pub fn new() -> Self {
        Self::with_clock(SystemClock::shared())
    }

    /// An empty registry whose windows and latencies run on `clock` (a `ManualClock` in
    /// tests: an injected latency completes when the clock is advanced past it).
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        DrillRegistry {
            inner: Arc::new(Inner {
                clock,
                drills: ArcSwap::from_pointee(BTreeMap::new()),
                configured: AtomicUsize::new(0),
                write: Mutex::new(()),
                publisher: EventPublisher::default(),
                factories: RwLock::new(HashMap::new()),
            }),
        }
    }

    /// The clock of windows and latencies.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    /// Sets (or replaces) the drill of `name`; its window and call limit count from now.
    ///
    /// # Errors
    /// [`DrillConfigError`] when `config` is out of range; nothing changes.
    pub fn start(&self, name: &str, config: DrillConfig) -> Result<(), DrillConfigError> {
        config.validate()?;
        let _w = self.inner.write.lock().unwrap_or_else(|p| p.into_inner());
        self.set(name, config);
        Ok(())
    }

    /// Removes the drill of `name`; `false` if it had none. Counters are kept.
    pub fn stop(&self, name: &str) -> bool {
        let _w = self.inner.write.lock().unwrap_or_else(|p| p.into_inner());
        self.clear(name)
    }

    /// Makes `drills` the set of drills (a config reload): drills not in it stop, new ones
    /// start, changed ones restart, unchanged ones keep running (and their call count).
    ///
    /// # Errors
    /// The first [`DrillConfigError`] (with the instance name); nothing changes.
    pub fn apply(
        &self,
        drills: &BTreeMap<String, DrillConfig>,
    ) -> Result<(), (String, DrillConfigError)> {
        for (name, c) in drills {
            c.validate().map_err(|e| (name.clone(), e))?;
        }
        let _w = self.inner.write.lock().unwrap_or_else(|p| p.into_inner());
        let current = self.inner.drills.load_full();
        for (name, d) in current.iter() {
            if d.running.load().is_some() && !drills.contains_key(name) {
                self.clear(name);
            }
        }
        for (name, c) in drills {
            let same = current
                .get(name)
                .and_then(|d| d.config())
                .is_some_and(|old| old == *c);
            if !same {
                self.set(name, c.clone());
            }
        }
        Ok(())
    }

    fn set(&self, name: &str, config: DrillConfig) {
        let drill = self.drill_or_insert(name);
        let old = drill.running.swap(Some(Arc::new(Running::new(
            config.clone(),
            self.inner.clock.now_nanos(),
        ))));
        if old.is_none() {
            self.inner.configured.fetch_add(1, Ordering::Relaxed);
            CONFIGURED_ANYWHERE.fetch_add(1, Ordering::Relaxed);
        }
        tracing::info!(
            target: "breaker::drill",
            name,
            fault = config.fault.kind(),
            percentage = config.percentage,
            "drill started: {name} injects {} into {}% of calls",
            describe(&config),
            config.percentage
        );
        self.publish(name, DrillEventKind::Started(config));
    }

    fn clear(&self, name: &str) -> bool {
        let Some(drill) = self.inner.drills.load().get(name).cloned() else {
            return false;
        };
        if drill.running.swap(None).is_none() {
            return false;
        }
        self.inner.configured.fetch_sub(1, Ordering::Relaxed);
        CONFIGURED_ANYWHERE.fetch_sub(1, Ordering::Relaxed);
        let m = drill.metrics();
        tracing::info!(
            target: "breaker::drill",
            name,
            injected = m.injected(),
            "drill stopped: {name} ({} calls injected in all)",
            m.injected()
        );
        self.publish(name, DrillEventKind::Stopped);
        true
    }

    fn drill_or_insert(&self, name: &str) -> Arc<Drill> {
        if let Some(d) = self.inner.drills.load().get(name) {
            return Arc::clone(d);
        }
        let drill = Arc::new(Drill::new(name));
        self.inner.drills.rcu(|m| {
            let mut m = BTreeMap::clone(m);
            m.entry(name.to_owned())
                .or_insert_with(|| Arc::clone(&drill));
            m
        });
        Arc::clone(&self.inner.drills.load()[name])
    }

    /// The drill slot of `name` (`None`: never drilled). It stays after the drill stops,
    /// with its counters.
    pub fn drill(&self, name: &str) -> Option<Arc<Drill>> {
        self.inner.drills.load().get(name).cloned()
    }

    /// Every instance ever drilled, with its slot, by name.
    pub fn drills(&self) -> BTreeMap<String, Arc<Drill>> {
        BTreeMap::clone(&self.inner.drills.load())
    }

    /// The names of the instances whose drill injects now (health's "under drill").
    pub fn active(&self) -> Vec<String> {
        let now = self.inner.clock.now_nanos();
        self.inner
            .drills
            .load()
            .iter()
            .filter(|(_, d)| d.is_active(now))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Whether any drill is set in this registry (one relaxed load).
    #[inline(always)]
    pub fn any(&self) -> bool {
        self.inner.configured.load(Ordering::Relaxed) != 0
    }

    /// What the drill of `name` does to the next call (counted in its metrics, published as
    /// a [`DrillEventKind::Injected`] event). [`Injection::Pass`] when `name` has no drill:
    /// one relaxed atomic load when the registry has none at all.
    #[inline]
    pub fn decide(&self, name: &str) -> Injection {
        if !self.any() {
            return Injection::Pass;
        }
        self.decide_slow(name)
    }

    #[inline(never)]
    fn decide_slow(&self, name: &str) -> Injection {
        let Some(drill) = self.drill(name) else {
            return Injection::Pass;
        };
        let now = self.inner.clock.now_nanos();
        let d = drill.decide(now);
        if d.just_ended.is_some() {
            let m = drill.metrics();
            tracing::info!(
                target: "breaker::drill",
                name,
                injected = m.injected(),
                "drill ended: {name} reached its end time or call limit ({} calls injected in all)",
                m.injected()
            );
            self.publish(name, DrillEventKind::Ended);
        }
        if d.injection != Injection::Pass {
            self.publish(name, DrillEventKind::Injected(d.injection.clone()));
        }
        d.injection
    }

    /// Runs `call` under the drill of `name`, innermost (the drill stands in for the
    /// dependency): an injected error fails at once with `error(..)`'s value, an injected
    /// latency waits on the registry's clock then runs `call`, a hang never completes.
    pub async fn call<T, E, F>(
        &self,
        name: &str,
        call: F,
        error: impl FnOnce(InjectedError) -> E,
    ) -> Result<T, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        match self.decide(name) {
            Injection::Pass => call.await,
            Injection::Error(kind) => Err(error(InjectedError {
                drill: name.to_owned(),
                kind,
            })),
            Injection::Delay(d) => {
                self.inner.clock.sleep(d).await;
                call.await
            }
            Injection::Hang => std::future::pending().await,
        }
    }

    /// Registers how to make the error named `name` (e.g. `java.io.IOException`) as a
    /// value of type `E`, for drills whose file names that error: the attribute stack of a
    /// fn whose error type is `E` injects `make()`'s value. Registering the same name and
    /// type again replaces the maker.
    pub fn register_error<E: 'static>(
        &self,
        name: impl Into<String>,
        make: impl Fn() -> E + Send + Sync + 'static,
    ) -> &Self {
        let f: Factory = Arc::new(move || Box::new(make()) as Box<dyn Any>);
        self.inner
            .factories
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert((name.into(), TypeId::of::<E>()), f);
        self
    }

    /// The error named `name` as a value of type `E`, if a maker was registered for both
    /// ([`register_error`](Self::register_error)).
    pub fn make_error<E: 'static>(&self, name: &str) -> Option<E> {
        let f = self
            .inner
            .factories
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(name.to_owned(), TypeId::of::<E>()))
            .cloned()?;
        f().downcast::<E>().ok().map(|b| *b)
    }

    /// Subscribes to every drill's events.
    pub fn subscribe(&self, f: impl Fn(&DrillEvent) + Send + Sync + 'static) -> SubscriptionId {
        self.inner.publisher.subscribe(f)
    }

    /// Removes a subscriber; `false` if it was not subscribed.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        self.inner.publisher.unsubscribe(id)
    }

    fn publish(&self, name: &str, kind: DrillEventKind) {
        if self.inner.publisher.any() {
            self.inner.publisher.publish(&DrillEvent {
                name: name.to_owned(),
                at_nanos: self.inner.clock.now_nanos(),
                kind,
            });
        }
    }
}

fn describe(c: &DrillConfig) -> String {
    use super::config::{Fault, Latency};
    match &c.fault {
        Fault::Error(k) => format!("error {k}"),
        Fault::Latency(Latency::Fixed(d)) => format!("latency {d:?}"),
        Fault::Latency(Latency::Uniform { min, max }) => format!("latency {min:?}..{max:?}"),
        Fault::Hang => "hangs".into(),
    }
}
