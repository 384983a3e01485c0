//! What the binder needs to know about one `resilience4j.<section>`: its name, its map keys,
//! its settings with their Java types, Spring's setter checks, and the advice for keys that
//! bind nothing. The circuit breaker (`circuit_breaker_schema.rs`) and every other module (`modules/`) describe
//! themselves with one [`Schema`] and share the binder (`bind.rs`).

use std::fmt::Debug;

use crate::duration::JavaDuration;

/// One `resilience4j.<section>` as Spring binds it (`Common*ConfigurationProperties`).
pub(crate) trait Schema {
    /// The section's setting identifiers.
    type Id: Copy + Ord + Eq + Debug + 'static;
    /// The section name after `resilience4j.`, compared relaxed (`thread-pool-bulkhead`).
    const SECTION: &'static str;
    /// The canonical key prefix used in messages, e.g. `resilience4j.retry`.
    const PREFIX: &'static str;
    /// The module in prose, e.g. `circuit-breaker` or `retry`.
    const NOUN: &'static str;
    /// The map names that hold instances: `instances` first, then its aliases.
    const INSTANCE_MAPS: &'static [&'static str];
    /// Every key directly under the section that Spring binds (maps, aspect order, tags,
    /// metrics).
    const TOP_LEVEL: &'static [&'static str];
    /// Every bindable setting of an entry: `(id, camelCase name, Java type)`.
    const SETTINGS: &'static [(Self::Id, &'static str, Kind)];
    /// Keys that bind nothing although users write them, with advice.
    const LEGACY: &'static [(&'static str, &'static str)];
    /// Keys directly under the section that bind nothing although users write them, with
    /// advice (e.g. the time limiter's `backends`).
    const MISPLACED_TOP_LEVEL: &'static [(&'static str, &'static str)] = &[];
    /// The `baseConfig` setting (a String, taken as written).
    const BASE_CONFIG: Self::Id;
    /// An example setting for messages, e.g. `slidingWindowSize: 10`.
    const EXAMPLE: &'static str;

    /// Spring's setter check for `id`: `(message, allowed)` when the setter throws.
    fn check(id: Self::Id, v: &Val) -> Result<(), (String, &'static str)>;

    /// What `id` accepts when its text does not convert, when narrower than `fallback`
    /// (what the Java type accepts).
    fn conversion_allowed(_id: Self::Id, fallback: &'static str) -> &'static str {
        fallback
    }

    /// For a setting that names a Java class that cannot be loaded in Rust: what to do
    /// instead (the warning names the class first).
    fn class_advice(_id: Self::Id) -> Option<&'static str> {
        None
    }
}

/// Looks a relaxed setting name up in `S`'s table.
pub(crate) fn find<S: Schema>(uniform_name: &str) -> Option<(S::Id, &'static str, Kind)> {
    S::SETTINGS
        .iter()
        .copied()
        .find(|(_, n, _)| crate::relaxed::uniform(n) == uniform_name)
}

/// The Java type Spring converts the text to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Float,
    Double,
    Int,
    Bool,
    Duration,
    WindowType,
    State,
    ClassList,
    Text,
}

/// A typed, converted property value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val {
    Float(f32),
    Double(f64),
    Int(i32),
    Bool(bool),
    Duration(JavaDuration),
    Window(crate::model::SlidingWindowType),
    State(crate::model::State),
    Names(Vec<String>),
    Text(String),
}
