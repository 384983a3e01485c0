//! The meters of the other modules (integration spec §3.3-§3.7), all read at scrape time
//! from each instance's metrics through [`readings`](crate::readings): the retry's and the
//! time limiter's counters are the instance's own (monotonic) counts, set as absolute
//! values, so no module costs anything per call.

use breaker_core::bulkhead::{Bulkhead, ThreadPoolBulkhead};
use breaker_core::ratelimiter::RateLimiter;
use breaker_core::retry::Retry;
use breaker_core::timelimiter::TimeLimiter;
use metrics::{Counter, Gauge};

use crate::family::Meters;
use crate::readings::{self, MeterKind, Reading};
use crate::register::{counter, gauge, Tags};

/// An instance whose meters are all in [`readings`](crate::readings).
pub(crate) trait ReadInstance: Clone + Send + Sync + 'static {
    /// One reading of every gauge and counter.
    fn read(&self) -> Vec<Reading>;
}

macro_rules! read_instance {
    ($instance:ty, $f:path) => {
        impl ReadInstance for $instance {
            fn read(&self) -> Vec<Reading> {
                $f(self).to_vec()
            }
        }
    };
}

read_instance!(Retry, readings::retry);
read_instance!(TimeLimiter, readings::time_limiter);
read_instance!(Bulkhead, readings::bulkhead);
read_instance!(ThreadPoolBulkhead, readings::thread_pool_bulkhead);
read_instance!(RateLimiter, readings::rate_limiter);

/// One registered meter.
enum Handle {
    Gauge(Gauge),
    Counter(Counter),
}

/// The meters of one instance, in the order of its readings.
pub(crate) struct ReadingMeters<I: ReadInstance> {
    instance: I,
    live: bool,
    handles: Vec<Handle>,
}

impl<I: ReadInstance> Meters for ReadingMeters<I> {
    type Instance = I;

    fn register(instance: &I, tags: &Tags, live: bool) -> Self {
        let handles = instance
            .read()
            .iter()
            .map(|r| {
                let tags = match r.tag {
                    Some((k, v)) => tags.with(k, v),
                    None => tags.clone(),
                };
                match r.kind {
                    MeterKind::Gauge => Handle::Gauge(gauge(r.meter, &tags)),
                    MeterKind::Counter => Handle::Counter(counter(r.meter, &tags)),
                }
            })
            .collect();
        ReadingMeters {
            instance: instance.clone(),
            live,
            handles,
        }
    }
    fn live(&self) -> bool {
        self.live
    }
    fn instance(&self) -> &I {
        &self.instance
    }
    fn refresh(&self) {
        for (h, r) in self.handles.iter().zip(self.instance.read()) {
            match h {
                Handle::Gauge(g) => g.set(r.value),
                Handle::Counter(c) => c.absolute(r.value as u64),
            }
        }
    }
}
