//! [`Family`]: the meters of every instance of one registry, kept in step with it (added for
//! each instance created, dropped for each one removed) and refreshed at scrape time.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::register::{recorder_installed, Tags};

/// The meters of one instance.
pub(crate) trait Meters: Send + 'static {
    /// The instance type (a cheap handle).
    type Instance: Clone + Send + Sync + 'static;

    /// Registers the instance's meters with `tags` (`name` included). `live`: a recorder is
    /// installed, so per-call meters subscribe to the instance's events.
    fn register(instance: &Self::Instance, tags: &Tags, live: bool) -> Self;
    /// Whether the meters were registered with a recorder installed.
    fn live(&self) -> bool;
    /// The instance the meters read.
    fn instance(&self) -> &Self::Instance;
    /// Sets every gauge and snapshot counter from the instance, now.
    fn refresh(&self);
    /// Stops the per-call meters (unsubscribes).
    fn detach(&self) {}
}

/// What a [`MetricsPublisher`](crate::MetricsPublisher) refreshes.
#[doc(hidden)]
pub trait Refresh: Send + Sync {
    /// Sets the gauges from the instances.
    fn refresh(&self);
}

/// The meters of every instance of one registry.
pub(crate) struct Family<M: Meters> {
    /// Global and module tags.
    tags: Tags,
    meters: Mutex<BTreeMap<String, M>>,
}

impl<M: Meters> Family<M> {
    pub(crate) fn new(tags: Tags) -> Arc<Self> {
        Arc::new(Family {
            tags,
            meters: Mutex::new(BTreeMap::new()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, M>> {
        self.meters.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers the meters of `instance` (Micrometer's `EntryAdded`).
    pub(crate) fn add(&self, name: &str, instance: &M::Instance) {
        let m = M::register(
            instance,
            &self.tags.with(crate::names::NAME, name),
            recorder_installed(),
        );
        if let Some(old) = self.lock().insert(name.to_string(), m) {
            old.detach();
        }
    }

    /// Drops the meters of `name` (Micrometer's `EntryRemoved`): they are no longer
    /// refreshed, and per-call meters stop.
    pub(crate) fn remove(&self, name: &str) {
        if let Some(old) = self.lock().remove(name) {
            old.detach();
        }
    }
}

impl<M: Meters> Refresh for Family<M> {
    fn refresh(&self) {
        let live = recorder_installed();
        let mut map = self.lock();
        for (name, m) in map.iter_mut() {
            if live && !m.live() {
                // The recorder came after the instance: register again, with it.
                let fresh = M::register(
                    m.instance(),
                    &self.tags.with(crate::names::NAME, name),
                    true,
                );
                m.detach();
                *m = fresh;
            }
            m.refresh();
        }
    }
}
