//! Registering meters with whatever recorder is installed, and telling whether one is.

use std::collections::BTreeMap;

use metrics::{Counter, Gauge, Histogram, Key, Label, Level, Metadata, Recorder};

use crate::names;

static METADATA: Metadata<'static> =
    Metadata::new("breaker_metrics", Level::INFO, Some("breaker_metrics"));

/// Whether a `metrics` recorder is installed (globally, or locally on this thread). Without
/// one the facade hands out no-op handles, and this crate subscribes to no instance's events,
/// so an uninstrumented service pays nothing per call.
///
/// The facade's no-op recorder is a zero-sized type and every real recorder holds state, so
/// the recorder's size tells them apart.
pub fn recorder_installed() -> bool {
    metrics::with_recorder(|r: &dyn Recorder| std::mem::size_of_val(r) != 0)
}

/// Writes every meter's `# HELP` text to the installed recorder.
pub(crate) fn describe_all() {
    metrics::with_recorder(|r| {
        for (name, description) in names::DESCRIPTIONS {
            let key = metrics::KeyName::from_const_str(name);
            if name.ends_with(".total") {
                r.describe_counter(key, None, description.into());
            } else if name == names::CB_CALLS {
                r.describe_histogram(key, None, description.into());
            } else {
                r.describe_gauge(key, None, description.into());
            }
        }
    });
}

/// The tags of one meter, sorted by key as Micrometer prints them: the instance's base tags
/// (global and module tags, then `name`) and the meter's own (`kind`, `state`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tags(BTreeMap<String, String>);

impl Tags {
    /// Tags from `(key, value)` pairs; a later pair wins on the same key.
    pub fn new<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        Tags(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    /// These tags plus `key=value` (which wins over an existing `key`).
    pub fn with(&self, key: &str, value: &str) -> Tags {
        let mut t = self.0.clone();
        t.insert(key.to_string(), value.to_string());
        Tags(t)
    }

    /// These tags, then `other`'s (which win on the same key).
    pub fn and(&self, other: &Tags) -> Tags {
        let mut t = self.0.clone();
        t.extend(other.0.clone());
        Tags(t)
    }

    /// The tags as `(key, value)` pairs, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    fn key(&self, name: &'static str) -> Key {
        let labels: Vec<Label> = self
            .0
            .iter()
            .map(|(k, v)| Label::new(k.clone(), v.clone()))
            .collect();
        Key::from_parts(name, labels)
    }
}

pub(crate) fn gauge(name: &'static str, tags: &Tags) -> Gauge {
    let key = tags.key(name);
    metrics::with_recorder(|r| r.register_gauge(&key, &METADATA))
}

pub(crate) fn counter(name: &'static str, tags: &Tags) -> Counter {
    let key = tags.key(name);
    metrics::with_recorder(|r| r.register_counter(&key, &METADATA))
}

pub(crate) fn histogram(name: &'static str, tags: &Tags) -> Histogram {
    let key = tags.key(name);
    metrics::with_recorder(|r| r.register_histogram(&key, &METADATA))
}
