//! Binding registries: each bound registry's instances, kept in step with it, and read
//! through [`breaker_metrics::readings`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use breaker_core::bulkhead::{Bulkhead, ThreadPoolBulkhead};
use breaker_core::ratelimiter::RateLimiter;
use breaker_core::retry::Retry;
use breaker_core::timelimiter::TimeLimiter;
use breaker_core::{
    CircuitBreaker, InstanceRegistry, Registry, RegistryEntryEvent, RegistryEvent,
    RegistryInstance, SubscriptionId,
};
use breaker_metrics::names::NAME;
use breaker_metrics::readings::{self, Reading};
use opentelemetry::KeyValue;

use crate::instruments::{with, PerCall};

/// The instances of one bound registry, as the observable instruments see them.
pub trait Family: Send + Sync {
    /// Hands the value of `meter` (a name of `breaker_metrics::names`) of every instance to
    /// `f`, with its attributes.
    #[doc(hidden)]
    fn observe(&self, meter: &'static str, f: &mut dyn FnMut(f64, &[KeyValue]));
}

/// An instance type whose meters are in [`breaker_metrics::readings`].
pub trait Readable: Clone + Send + Sync + 'static {
    /// One reading of every gauge and counter of the instance.
    #[doc(hidden)]
    fn read(&self) -> Vec<Reading>;
    /// Starts the per-call instruments of the instance (a breaker's event subscription).
    #[doc(hidden)]
    fn attach(&self, _per_call: &Arc<PerCall>, _attrs: &[KeyValue]) -> Option<SubscriptionId> {
        None
    }
    /// Stops what [`attach`](Self::attach) started.
    #[doc(hidden)]
    fn detach(&self, _id: SubscriptionId) {}
}

impl Readable for CircuitBreaker {
    fn read(&self) -> Vec<Reading> {
        readings::circuit_breaker(self).to_vec()
    }
    fn attach(&self, per_call: &Arc<PerCall>, attrs: &[KeyValue]) -> Option<SubscriptionId> {
        let per_call = per_call.clone();
        let attrs = attrs.to_vec();
        Some(self.subscribe(move |e| per_call.on_event(e, &attrs)))
    }
    fn detach(&self, id: SubscriptionId) {
        self.unsubscribe(id);
    }
}

macro_rules! readable {
    ($instance:ty, $f:path) => {
        impl Readable for $instance {
            fn read(&self) -> Vec<Reading> {
                $f(self).to_vec()
            }
        }
    };
}

readable!(Retry, readings::retry);
readable!(TimeLimiter, readings::time_limiter);
readable!(Bulkhead, readings::bulkhead);
readable!(ThreadPoolBulkhead, readings::thread_pool_bulkhead);
readable!(RateLimiter, readings::rate_limiter);

struct Entry<I> {
    instance: I,
    /// The registry's attributes plus `name`.
    attrs: Vec<KeyValue>,
    subscription: Option<SubscriptionId>,
}

/// The instances of one registry.
pub(crate) struct Instances<I: Readable> {
    attrs: Vec<KeyValue>,
    per_call: Arc<PerCall>,
    entries: Mutex<BTreeMap<String, Entry<I>>>,
}

impl<I: Readable> Instances<I> {
    fn new(attrs: Vec<KeyValue>, per_call: Arc<PerCall>) -> Arc<Self> {
        Arc::new(Instances {
            attrs,
            per_call,
            entries: Mutex::new(BTreeMap::new()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Entry<I>>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn add(&self, name: &str, instance: &I) {
        let mut attrs = self.attrs.clone();
        attrs.retain(|kv| kv.key.as_str() != NAME);
        attrs.push(KeyValue::new(NAME, name.to_string()));
        attrs.sort_by(|a, b| a.key.as_str().cmp(b.key.as_str()));
        let subscription = instance.attach(&self.per_call, &attrs);
        let entry = Entry {
            instance: instance.clone(),
            attrs,
            subscription,
        };
        if let Some(old) = self.lock().insert(name.to_string(), entry) {
            if let Some(id) = old.subscription {
                old.instance.detach(id);
            }
        }
    }

    fn remove(&self, name: &str) {
        if let Some(old) = self.lock().remove(name) {
            if let Some(id) = old.subscription {
                old.instance.detach(id);
            }
        }
    }
}

impl<I: Readable> Family for Instances<I> {
    fn observe(&self, meter: &'static str, f: &mut dyn FnMut(f64, &[KeyValue])) {
        let entries: Vec<(I, Vec<KeyValue>)> = self
            .lock()
            .values()
            .map(|e| (e.instance.clone(), e.attrs.clone()))
            .collect();
        for (instance, attrs) in entries {
            for r in instance.read().iter().filter(|r| r.meter == meter) {
                match r.tag {
                    Some((k, v)) => f(r.value, &with(&attrs, k, v)),
                    None => f(r.value, &attrs),
                }
            }
        }
    }
}

/// A registry whose instances have Resilience4j meters: the circuit breakers' [`Registry`]
/// and the retry, time-limiter, bulkhead, thread-pool-bulkhead and rate-limiter registries.
pub trait OtelRegistry {
    #[doc(hidden)]
    fn family(&self, attrs: Vec<KeyValue>, per_call: Arc<PerCall>) -> Arc<dyn Family>;
}

impl OtelRegistry for Registry {
    fn family(&self, attrs: Vec<KeyValue>, per_call: Arc<PerCall>) -> Arc<dyn Family> {
        let family = Instances::<CircuitBreaker>::new(attrs, per_call);
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

impl<I: RegistryInstance + Readable> OtelRegistry for InstanceRegistry<I> {
    fn family(&self, attrs: Vec<KeyValue>, per_call: Arc<PerCall>) -> Arc<dyn Family> {
        let family = Instances::<I>::new(attrs, per_call);
        let f = family.clone();
        self.subscribe(move |e| match e {
            RegistryEntryEvent::Added(i) => f.add(i.name(), i),
            RegistryEntryEvent::Removed(i) => f.remove(i.name()),
            RegistryEntryEvent::Replaced { .. } => {}
        });
        for i in self.all() {
            family.add(i.name(), &i);
        }
        family
    }
}
