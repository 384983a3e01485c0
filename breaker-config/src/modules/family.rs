//! How Resilience4j's Spring support resolves the retry, time-limiter, bulkhead,
//! thread-pool-bulkhead and rate-limiter sections (`Common*ConfigurationProperties.create*Config`),
//! which differs from the circuit breaker's:
//!
//! * `baseConfig: B` builds on config `B`, itself resolved the same way (chains work);
//! * otherwise a name other than `default` builds on `configs.default` when it exists, so a
//!   named config inherits `configs.default` too, an instance named like a config gets nothing
//!   special from it, and `instances.default` builds on the library defaults;
//! * before building on a base, a few properties that are not part of the core config
//!   (`eventConsumerBufferSize`, the retry's backoff flags, ...) are copied from the base's
//!   properties into the entry's own where the entry leaves them unset. Spring does this by
//!   mutating the bound properties, so the result can depend on the order in which configs
//!   and instances are built; this module replays that order exactly (see `java_order`).
//!
//! Startup, as Spring runs it: every `configs` entry is built (the registry's configs), then
//! every `instances` entry, each followed by its registration (event buffer), which copies
//! the same properties from `configs.default`.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::bind::{Block, Bound, Section};
use crate::error::{ConfigError, Warning};
use crate::model::{Base, ValueSource};
use crate::schema::{Schema, Val};

use super::java_order;

/// The non-config properties of one entry as they stand after the copies so far, each with
/// the block it was written in.
pub(crate) type Merged<I> = BTreeMap<I, (Bound, ValueSource)>;

/// One module's settings and rules, on top of its binding [`Schema`].
pub(crate) trait Module: Schema {
    /// The resolved settings of one instance.
    type Resolved: Clone;
    /// Properties copied from a base's properties into an entry's unset ones before the
    /// entry is built (`ConfigUtils.mergePropertiesIfAny`).
    const MERGED: &'static [Self::Id];
    /// Whether an instance's registration copy from `configs.default` happens before it is
    /// built rather than after (the thread-pool bulkhead looks its properties up with
    /// `getBackendProperties` first).
    const DEFAULT_COPY_FIRST: bool = false;

    /// Resilience4j's defaults (`*Config.ofDefaults()` and Spring's defaults).
    fn library_defaults(name: &str) -> Self::Resolved;

    /// `buildConfig(from(base), props)`: every value `block` sets replaces the base's;
    /// `merged` is the entry's non-config properties after the copies. Fails with the
    /// message the core builder or factory throws.
    fn build(
        base: Self::Resolved,
        block: &Block<Self::Id>,
        merged: &Merged<Self::Id>,
        label: &ValueSource,
    ) -> Result<Self::Resolved, Box<ConfigError>>;

    /// Sets the name and base of a resolved entry.
    fn identify(r: &mut Self::Resolved, name: &str, base: Base);

    /// Sets the non-config settings of a resolved instance from its properties as they stand
    /// at the end (`last`), and as they stood when it was registered (`registered`); for the
    /// default config, both are `configs.default`'s and `listed` is false.
    fn finish(
        r: &mut Self::Resolved,
        registered: &Merged<Self::Id>,
        last: &Merged<Self::Id>,
        listed: bool,
    );

    /// Warnings about a resolved entry that Spring accepts but that will fail or surprise at
    /// run time.
    fn lint(_r: &Self::Resolved, _warnings: &mut Vec<Warning>) {}

    /// Warnings about settings an instance's own block writes that have no effect on the
    /// instance as resolved (`r`).
    fn lint_instance(_block: &Block<Self::Id>, _r: &Self::Resolved, _warnings: &mut Vec<Warning>) {}
}

/// The resolved section of one module.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleConfig<R> {
    /// Every entry under `instances` (or its alias) that Resilience4j builds.
    pub instances: BTreeMap<String, R>,
    /// Entries Resilience4j refuses, by instance name or `configs.<name>`.
    pub errors: BTreeMap<String, ConfigError>,
    /// What a name not listed gets (`configs.default` over the library defaults), or why
    /// that config is invalid.
    pub default_config: Result<R, ConfigError>,
    /// Every valid `configs` entry as Spring builds it for the registry (`default` included):
    /// the configs an annotation's `configuration` attribute can name.
    pub configs: BTreeMap<String, R>,
}

impl<R> ModuleConfig<R> {
    /// The configuration the annotation `@Retry(name = "<name>")` (and its siblings) gets in
    /// Spring: the instance's entry when listed; else, as the aspects look a config up by the
    /// name, the config of that name when there is one; else the default config. `None` when
    /// that entry or config is invalid.
    ///
    /// ```
    /// let yaml = "
    /// resilience4j.bulkhead:
    ///   configs:
    ///     default: { maxConcurrentCalls: 5 }
    ///     reports: { maxConcurrentCalls: 2 }
    /// ";
    /// let loaded = breaker_config::Loader::new().env(Default::default())
    ///     .load_str("application.yml", breaker_config::Format::Yaml, yaml).unwrap();
    /// let b = &loaded.modules.bulkhead;
    /// assert_eq!(b.config_for("reports").unwrap().max_concurrent_calls.value, 2);
    /// assert_eq!(b.config_for("anything").unwrap().max_concurrent_calls.value, 5);
    /// ```
    pub fn config_for(&self, name: &str) -> Option<&R> {
        if let Some(i) = self.instances.get(name) {
            return Some(i);
        }
        if self.errors.contains_key(name) || self.errors.contains_key(&format!("configs.{name}")) {
            return None;
        }
        match self.configs.get(name) {
            Some(c) if name != "default" => Some(c),
            _ => self.default_config.as_ref().ok(),
        }
    }

    /// Every error, each once. Empty means Spring Boot would start with this section.
    pub fn all_errors(&self) -> Vec<&ConfigError> {
        let mut out: Vec<&ConfigError> = Vec::new();
        let default = self.default_config.as_ref().err();
        for e in self.errors.values().chain(default) {
            if !out.contains(&e) {
                out.push(e);
            }
        }
        out
    }
}

type Key = (bool, String);

struct Sim<'s, M: Module> {
    sec: &'s Section<M::Id>,
    state: HashMap<Key, Merged<M::Id>>,
}

fn label(key: &Key) -> ValueSource {
    if key.0 {
        ValueSource::Config(key.1.clone())
    } else {
        ValueSource::Instance
    }
}

fn base_name<I: Ord>(block: &Block<I>, id: I) -> Option<(&str, &Bound)> {
    match block.get(id) {
        Some(
            b @ Bound {
                val: Val::Text(t), ..
            },
        ) if !t.is_empty() => Some((t.as_str(), b)),
        _ => None,
    }
}

impl<'s, M: Module> Sim<'s, M> {
    fn new(sec: &'s Section<M::Id>) -> Self {
        let mut state = HashMap::new();
        let blocks = sec
            .configs
            .iter()
            .map(|(n, b)| ((true, n.clone()), b))
            .chain(sec.instances.iter().map(|(n, b)| ((false, n.clone()), b)));
        for (key, block) in blocks {
            let own: Merged<M::Id> = M::MERGED
                .iter()
                .filter_map(|id| block.get(*id).map(|b| (*id, (b.clone(), label(&key)))))
                .collect();
            state.insert(key, own);
        }
        Sim { sec, state }
    }

    fn block(&self, key: &Key) -> Option<&'s Block<M::Id>> {
        if key.0 {
            self.sec.configs.get(&key.1)
        } else {
            self.sec.instances.get(&key.1)
        }
    }

    /// `ConfigUtils.mergePropertiesIfAny(from, to)`: fills `to`'s unset copied properties.
    fn copy(&mut self, from: &Key, to: &Key) {
        let source = self.state.get(from).cloned().unwrap_or_default();
        let target = self.state.entry(to.clone()).or_default();
        for (id, v) in source {
            target.entry(id).or_insert(v);
        }
    }

    /// `create*Config(props, name)`. `chain` holds the configs being built, outermost first.
    ///
    /// Resilience4j recurses once per base; this walks the chain in a loop, copying each
    /// base's properties into the entry on the way in as Spring does before it recurses, and
    /// then builds from the innermost base outwards: a chain of any length costs no stack.
    fn create(
        &mut self,
        name: &str,
        entry: Option<&Key>,
        chain: &mut Vec<String>,
    ) -> Result<M::Resolved, Box<ConfigError>> {
        let chain_len = chain.len();
        let r = self.walk(name, entry, chain);
        chain.truncate(chain_len);
        r
    }

    fn walk(
        &mut self,
        name: &str,
        entry: Option<&Key>,
        chain: &mut Vec<String>,
    ) -> Result<M::Resolved, Box<ConfigError>> {
        // The entries on the way down, each with what it builds on.
        let mut links: Vec<(String, Option<Key>, Base)> = Vec::new();
        // The configs of `chain`, for a membership test that stays O(1) on a long chain.
        let mut in_chain: HashSet<String> = chain.iter().cloned().collect();
        let (mut name, mut entry) = (name.to_string(), entry.cloned());
        let innermost = loop {
            let block = entry.as_ref().and_then(|k| self.block(k));
            if let Some(e) = block.and_then(|b| b.errors.first()) {
                return Err(Box::new(e.clone()));
            }
            let explicit = block.and_then(|b| base_name(b, M::BASE_CONFIG));
            let (base_key, kind) = if let Some((bn, bound)) = explicit {
                if !self.sec.configs.contains_key(bn) {
                    return Err(Box::new(unknown_base::<M>(bn, bound, block, self.sec)));
                }
                ((true, bn.to_string()), Base::BaseConfig(bn.to_string()))
            } else if name != "default" && self.sec.configs.contains_key("default") {
                ((true, "default".to_string()), Base::DefaultConfig)
            } else {
                let mut r = M::library_defaults(&name);
                if let Some(b) = block {
                    let merged = entry.as_ref().and_then(|k| self.state.get(k)).cloned();
                    r = M::build(r, b, &merged.unwrap_or_default(), &label_of(entry.as_ref()))?;
                }
                M::identify(&mut r, &name, Base::LibraryDefaults);
                break r;
            };
            if in_chain.contains(&base_key.1) {
                return Err(Box::new(cycle::<M>(chain, &base_key.1, explicit, block)));
            }
            if let Some(e) = &entry {
                self.copy(&base_key, e);
            }
            chain.push(base_key.1.clone());
            in_chain.insert(base_key.1.clone());
            links.push((name, entry, kind));
            name = base_key.1.clone();
            entry = Some(base_key);
        };
        let mut r = innermost;
        for (name, entry, kind) in links.into_iter().rev() {
            if let Some(b) = entry.as_ref().and_then(|k| self.block(k)) {
                let merged = entry.as_ref().and_then(|k| self.state.get(k)).cloned();
                r = M::build(r, b, &merged.unwrap_or_default(), &label_of(entry.as_ref()))?;
            }
            M::identify(&mut r, &name, kind);
        }
        Ok(r)
    }
}

fn label_of(entry: Option<&Key>) -> ValueSource {
    entry.map_or(ValueSource::Default, label)
}

fn unknown_base<M: Module>(
    name: &str,
    bound: &Bound,
    block: Option<&Block<M::Id>>,
    sec: &Section<M::Id>,
) -> ConfigError {
    let known: Vec<&str> = sec.configs.keys().map(String::as_str).collect();
    ConfigError {
        origin: Some(bound.origin.clone()),
        key: format!("{}.baseConfig", block.map_or("", |b| b.path.as_str())),
        value: Some(name.to_string()),
        message: format!("Configuration with name '{name}' does not exist"),
        allowed: if known.is_empty() {
            format!(
                "the name of a config under {}.configs (none is defined)",
                M::PREFIX
            )
        } else {
            format!("one of the configs: {}", known.join(", "))
        },
    }
}

/// A `baseConfig` chain that comes back to a config being built (Resilience4j recurses
/// until the stack overflows). `chain` is the configs being built, `next` the one the current
/// block leads to (explicitly, or implicitly `default`).
fn cycle<M: Module>(
    chain: &[String],
    next: &str,
    explicit: Option<(&str, &Bound)>,
    block: Option<&Block<M::Id>>,
) -> ConfigError {
    let start = chain.iter().position(|c| c == next).unwrap_or(0);
    let mut names: Vec<&str> = chain[start..].iter().map(String::as_str).collect();
    names.push(next);
    let path = block.map_or(String::new(), |b| b.path.clone());
    let (origin, key) = match explicit {
        Some((_, bound)) => (Some(bound.origin.clone()), format!("{path}.baseConfig")),
        None => (None, path.clone()),
    };
    ConfigError {
        origin,
        key,
        value: explicit.map(|(n, _)| n.to_string()),
        message: match explicit {
            Some(_) => format!(
                "Circular reference detected in instance config: {}",
                names.join(" -> ")
            ),
            // The link that closes the loop is the implicit one: name it, it is not written.
            None => format!(
                "Circular reference detected in instance config: {} ({} has no baseConfig, so it builds on {}.configs.default, as every config but default does in Resilience4j's {} Spring layer (the circuit breaker's does not); Resilience4j recurses until a StackOverflowError and the application does not start)",
                names.join(" -> "),
                if path.is_empty() { "the entry" } else { path.as_str() },
                M::PREFIX,
                M::NOUN
            ),
        },
        allowed: format!(
            "a baseConfig chain that does not lead back to itself (a config without baseConfig builds on {}.configs.default)",
            M::PREFIX
        ),
    }
}

/// Resolves one module's section as Spring's startup does.
pub(crate) fn resolve<M: Module>(sec: &Section<M::Id>) -> ModuleConfig<M::Resolved> {
    let mut sim = Sim::<M>::new(sec);
    let order = |configs: bool| -> Vec<String> {
        let insertion: Vec<String> = sec
            .binder_order
            .iter()
            .filter(|(c, n)| {
                *c == configs
                    && if configs {
                        sec.configs.contains_key(n)
                    } else {
                        sec.instances.contains_key(n)
                    }
            })
            .map(|(_, n)| n.clone())
            .collect();
        java_order::iteration_order(&insertion)
    };
    let mut errors = BTreeMap::new();
    // The registry's configs: every `configs` entry, built first.
    let mut built: BTreeMap<String, Result<M::Resolved, ConfigError>> = BTreeMap::new();
    for name in order(true) {
        let key = (true, name.clone());
        let r = sim.create(&name, Some(&key), &mut vec![name.clone()]);
        if let Err(e) = &r {
            errors.insert(format!("configs.{name}"), (**e).clone());
        }
        built.insert(name, r.map_err(|e| *e));
    }
    // Then every instance, each registered (event buffer) right after it is built.
    let default_key = (true, "default".to_string());
    let has_default = sec.configs.contains_key("default");
    let mut instances = BTreeMap::new();
    let mut registered = HashMap::new();
    for name in order(false) {
        let key = (false, name.clone());
        if M::DEFAULT_COPY_FIRST && has_default {
            sim.copy(&default_key, &key);
        }
        match sim.create(&name, Some(&key), &mut Vec::new()) {
            Ok(r) => {
                registered.insert(name.clone(), sim.state[&key].clone());
                if has_default {
                    sim.copy(&default_key, &key);
                }
                instances.insert(name, r);
            }
            Err(e) => {
                errors.insert(name, *e);
            }
        }
    }
    for (name, r) in instances.iter_mut() {
        let last = &sim.state[&(false, name.clone())];
        M::finish(r, &registered[name], last, true);
    }
    let default_state = sim.state.get(&default_key).cloned().unwrap_or_default();
    // What a name not listed gets: configs.default (itself built on the library defaults).
    let default_config = match built.get("default").cloned() {
        Some(r) => r.map(|mut r| {
            M::identify(&mut r, "default", Base::DefaultConfig);
            r
        }),
        None => Ok(M::library_defaults("default")),
    }
    .map(|mut r| {
        M::finish(&mut r, &default_state, &default_state, false);
        r
    });
    let configs = built
        .into_iter()
        .filter_map(|(name, r)| {
            let mut r = r.ok()?;
            let state = sim
                .state
                .get(&(true, name.clone()))
                .cloned()
                .unwrap_or_default();
            M::finish(&mut r, &state, &state, false);
            Some((name, r))
        })
        .collect();
    ModuleConfig {
        instances,
        errors,
        default_config,
        configs,
    }
}
