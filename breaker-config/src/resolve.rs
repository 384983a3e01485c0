//! Resolution as Resilience4j's Spring support does it (`createCircuitBreakerConfig`,
//! spec §3.2): `baseConfig` chains, an instance named like a config uses that config,
//! `configs.default` for the rest; scalars inherit one by one, lists replace; the open-state
//! wait policy belongs to the block that sets `waitDurationInOpenState`.

use std::collections::{BTreeMap, HashSet};

use crate::bind::{Block, Bound, Section};
use crate::error::ConfigError;
use crate::keys::Id;
use crate::model::{Base, ResolvedConfig, ResolvedInstance, Setting, ValueSource, WaitInterval};
use crate::schema::Val;
use crate::validate::BOTH_WAIT_POLICIES;

/// Resolves every instance, the default config, and collects every error.
pub(crate) fn resolve_all(sec: &Section, profiles: Vec<String>) -> ResolvedConfig {
    let mut instances = BTreeMap::new();
    let mut errors = BTreeMap::new();
    for (name, block) in &sec.instances {
        match create(
            name,
            Some(block),
            ValueSource::Instance,
            sec,
            &mut vec![name.clone()],
            1,
        ) {
            Ok(i) => {
                instances.insert(name.clone(), i);
            }
            Err(e) => {
                errors.insert(name.clone(), *e);
            }
        }
    }
    let default_config = match sec.configs.get("default") {
        Some(b) => create(
            "default",
            Some(b),
            ValueSource::Config("default".into()),
            sec,
            &mut vec!["default".to_string()],
            0,
        )
        .map_err(|e| *e),
        None => Ok(ResolvedInstance::library_defaults("default")),
    };
    let mut config = ResolvedConfig {
        instances,
        errors,
        default_config,
        config_errors: Vec::new(),
        profiles,
    };
    let blocks = sec.configs.values().chain(sec.instances.values());
    let mut extra = Vec::new();
    for b in blocks {
        for e in &b.errors {
            if !config.all_errors().contains(&e) && !extra.contains(e) {
                extra.push(e.clone());
            }
        }
    }
    config.config_errors = extra;
    config
}

fn text(b: Option<&Bound>) -> Option<(&str, &Bound)> {
    match b {
        Some(
            bound @ Bound {
                val: Val::Text(t), ..
            },
        ) if !t.is_empty() => Some((t.as_str(), bound)),
        _ => None,
    }
}

/// Resilience4j's message (it names the config whose `baseConfig` closes the loop; a loop
/// of two or more configs overflows Resilience4j's stack instead), followed by the whole
/// chain from the instance, e.g. `(a -> x -> y -> x)`.
fn circular_message(name: &str, chain: &[String]) -> String {
    format!(
        "Circular reference detected in instance config: {name} ({} -> {name})",
        chain.join(" -> ")
    )
}

fn circular(name: &str, chain: &[String], block: &Block, bound: &Bound) -> ConfigError {
    ConfigError {
        origin: Some(bound.origin.clone()),
        key: format!("{}.baseConfig", block.path),
        value: Some(name.to_string()),
        message: circular_message(name, chain),
        allowed: "a baseConfig chain that does not lead back to itself".into(),
    }
}

/// Resilience4j's `createCircuitBreakerConfig(name, props)`. `chain` holds the instance (or
/// `default`) being resolved, then every config it inherits from so far; the configs start
/// at `chain[1]` for an instance (an instance may share a config's name) and at `chain[0]`
/// for the default config.
///
/// Resilience4j recurses once per `baseConfig` link; this walks the chain in a loop (its
/// length bounded only by the file) and then builds from the innermost base outwards, so a
/// chain of any length costs no stack (a deep chain used to overflow a 2 MiB reload thread).
/// The errors are the ones the recursion gives, in the same order: a block's own error or a
/// broken link on the way in, then the first build error from the innermost block out.
fn create(
    name: &str,
    props: Option<&Block>,
    label: ValueSource,
    sec: &Section,
    chain: &mut Vec<String>,
    configs_from: usize,
) -> Result<ResolvedInstance, Box<ConfigError>> {
    let chain_len = chain.len();
    let r = walk(name, props, label, sec, chain, configs_from);
    chain.truncate(chain_len);
    r
}

/// One block on the way down a chain: what it is, and what it builds on.
struct Link<'s> {
    name: String,
    props: Option<&'s Block>,
    label: ValueSource,
    base: Base,
}

fn walk<'s>(
    name: &str,
    props: Option<&'s Block>,
    label: ValueSource,
    sec: &'s Section,
    chain: &mut Vec<String>,
    configs_from: usize,
) -> Result<ResolvedInstance, Box<ConfigError>> {
    let mut links: Vec<Link<'s>> = Vec::new();
    // The configs of `chain`, for a membership test that stays O(1) on a long chain.
    let mut in_chain: HashSet<String> = chain[configs_from..].iter().cloned().collect();
    let (mut name, mut props, mut label) = (name.to_string(), props, label);
    let innermost = loop {
        if let Some(e) = props.and_then(|b| b.errors.first()) {
            return Err(Box::new(e.clone()));
        }
        if let Some((bn, bound)) = props.and_then(|b| text(b.get(Id::BaseConfig))) {
            let block = props.unwrap_or(&EMPTY);
            if bn == name || in_chain.contains(bn) {
                return Err(Box::new(circular(bn, chain, block, bound)));
            }
            let Some(bb) = sec.configs.get(bn) else {
                let known: Vec<&str> = sec.configs.keys().map(String::as_str).collect();
                return Err(Box::new(ConfigError {
                    origin: Some(bound.origin.clone()),
                    key: format!("{}.baseConfig", block.path),
                    value: Some(bn.to_string()),
                    message: format!("Configuration with name '{bn}' does not exist"),
                    allowed: if known.is_empty() {
                        "the name of a config under resilience4j.circuitbreaker.configs (none is defined)".into()
                    } else {
                        format!("one of the configs: {}", known.join(", "))
                    },
                }));
            };
            chain.push(bn.to_string());
            in_chain.insert(bn.to_string());
            let next = (
                bn.to_string(),
                Some(bb),
                ValueSource::Config(bn.to_string()),
            );
            links.push(Link {
                name,
                props,
                label,
                base: Base::BaseConfig(bn.to_string()),
            });
            (name, props, label) = next;
        } else if let Some(cb) = sec.configs.get(&name) {
            if let Some(e) = cb.errors.first() {
                return Err(Box::new(e.clone()));
            }
            let r = build(
                ResolvedInstance::library_defaults(&name),
                cb,
                ValueSource::Config(name.clone()),
            )?;
            let base = Base::SameName(name.clone());
            links.push(Link {
                name,
                props,
                label,
                base,
            });
            break r;
        } else if let Some(db) = sec.configs.get("default") {
            if in_chain.contains("default") {
                let bound = db.get(Id::BaseConfig);
                return Err(Box::new(match bound {
                    Some(b) => circular("default", chain, db, b),
                    None => circular_plain("default", chain),
                }));
            }
            chain.push("default".into());
            in_chain.insert("default".into());
            links.push(Link {
                name,
                props,
                label,
                base: Base::DefaultConfig,
            });
            (name, props, label) = (
                "default".to_string(),
                Some(db),
                ValueSource::Config("default".into()),
            );
        } else {
            let r = ResolvedInstance::library_defaults(&name);
            links.push(Link {
                name,
                props,
                label,
                base: Base::LibraryDefaults,
            });
            break r;
        }
    };
    let mut out = innermost;
    for link in links.into_iter().rev() {
        if let Some(b) = link.props {
            out = build(out, b, link.label)?;
        }
        out.name = link.name;
        out.base = link.base;
    }
    Ok(out)
}

static EMPTY: Block = Block {
    path: String::new(),
    values: BTreeMap::new(),
    errors: Vec::new(),
};

fn circular_plain(name: &str, chain: &[String]) -> ConfigError {
    ConfigError {
        origin: None,
        key: format!("resilience4j.circuitbreaker.configs.{name}"),
        value: None,
        message: circular_message(name, chain),
        allowed: "a baseConfig chain that does not lead back to itself".into(),
    }
}

fn set<T>(target: &mut Setting<T>, value: T, b: &Bound, label: &ValueSource) {
    *target = Setting {
        value,
        source: label.clone(),
        origin: Some(b.origin.clone()),
    };
}

fn flag(block: &Block, id: Id) -> Option<(bool, &Bound)> {
    match block.get(id) {
        Some(
            b @ Bound {
                val: Val::Bool(v), ..
            },
        ) => Some((*v, b)),
        _ => None,
    }
}

fn double(block: &Block, id: Id) -> Option<f64> {
    match block.get(id).map(|b| &b.val) {
        Some(Val::Double(v)) => Some(*v),
        _ => None,
    }
}

/// `buildConfig(from(base), props)`: every value the block sets overrides the base.
fn build(
    mut r: ResolvedInstance,
    block: &Block,
    label: ValueSource,
) -> Result<ResolvedInstance, Box<ConfigError>> {
    let l = &label;
    let exp = flag(block, Id::EnableExponentialBackoff);
    let rnd = flag(block, Id::EnableRandomizedWait);
    if let (Some((true, _)), Some((true, b))) = (exp, rnd) {
        return Err(Box::new(ConfigError {
            origin: Some(b.origin.clone()),
            key: format!("{}.enableRandomizedWait", block.path),
            value: Some("true".into()),
            message: BOTH_WAIT_POLICIES.into(),
            allowed: "enableExponentialBackoff or enableRandomizedWait, not both".into(),
        }));
    }
    let mut record_set = false;
    let mut ignore_set = false;
    for (id, b) in &block.values {
        match (*id, &b.val) {
            (Id::FailureRateThreshold, Val::Float(v)) => {
                set(&mut r.failure_rate_threshold, *v, b, l)
            }
            (Id::SlowCallRateThreshold, Val::Float(v)) => {
                set(&mut r.slow_call_rate_threshold, *v, b, l)
            }
            (Id::SlowCallDurationThreshold, Val::Duration(d)) => set(
                &mut r.slow_call_duration_threshold,
                d.to_std().unwrap_or_default(),
                b,
                l,
            ),
            (Id::WaitDurationInOpenState, Val::Duration(d)) => {
                set(
                    &mut r.wait_duration_in_open_state,
                    d.to_std().unwrap_or_default(),
                    b,
                    l,
                );
                let interval = if exp.is_some_and(|(v, _)| v) {
                    let multiplier = double(block, Id::ExponentialBackoffMultiplier);
                    let max_wait = match (
                        multiplier,
                        block.get(Id::ExponentialMaxWaitDurationInOpenState),
                    ) {
                        (
                            Some(_),
                            Some(Bound {
                                val: Val::Duration(m),
                                ..
                            }),
                        ) => m.to_std(),
                        _ => None,
                    };
                    WaitInterval::Exponential {
                        multiplier: multiplier.unwrap_or(1.5),
                        max_wait,
                    }
                } else if rnd.is_some_and(|(v, _)| v) {
                    WaitInterval::Randomized {
                        factor: double(block, Id::RandomizedWaitFactor).unwrap_or(0.5),
                    }
                } else {
                    WaitInterval::Constant
                };
                set(&mut r.wait_interval_in_open_state, interval, b, l);
            }
            (Id::MaxWaitDurationInHalfOpenState, Val::Duration(d)) => set(
                &mut r.max_wait_duration_in_half_open_state,
                d.to_std().unwrap_or_default(),
                b,
                l,
            ),
            (Id::TransitionToStateAfterWaitDuration, Val::State(s)) => {
                set(&mut r.transition_to_state_after_wait_duration, *s, b, l)
            }
            (Id::SlidingWindowType, Val::Window(w)) => set(&mut r.sliding_window_type, *w, b, l),
            (Id::SlidingWindowSize, Val::Int(v)) => set(&mut r.sliding_window_size, *v, b, l),
            (Id::MinimumNumberOfCalls, Val::Int(v)) => {
                set(&mut r.minimum_number_of_calls, *v, b, l)
            }
            (Id::PermittedNumberOfCallsInHalfOpenState, Val::Int(v)) => set(
                &mut r.permitted_number_of_calls_in_half_open_state,
                *v,
                b,
                l,
            ),
            (Id::AutomaticTransitionFromOpenToHalfOpenEnabled, Val::Bool(v)) => set(
                &mut r.automatic_transition_from_open_to_half_open_enabled,
                *v,
                b,
                l,
            ),
            (Id::InitialState, Val::State(s)) => set(&mut r.initial_state, *s, b, l),
            (Id::WritableStackTraceEnabled, Val::Bool(v)) => {
                set(&mut r.writable_stack_trace_enabled, *v, b, l)
            }
            (Id::RecordExceptions, Val::Names(n)) => {
                set(&mut r.record_exceptions, Some(n.clone()), b, l);
                r.record_exceptions_origins = b.item_origins.clone();
                record_set = true;
            }
            (Id::IgnoreExceptions, Val::Names(n)) => {
                set(&mut r.ignore_exceptions, Some(n.clone()), b, l);
                r.ignore_exceptions_origins = b.item_origins.clone();
                ignore_set = true;
            }
            (Id::RegisterHealthIndicator, Val::Bool(v)) => {
                set(&mut r.register_health_indicator, *v, b, l)
            }
            (Id::AllowHealthIndicatorToFail, Val::Bool(v)) => {
                set(&mut r.allow_health_indicator_to_fail, *v, b, l)
            }
            (Id::EventConsumerBufferSize, Val::Int(v)) => {
                set(&mut r.event_consumer_buffer_size, *v, b, l)
            }
            (Id::IgnoreClassBindingExceptions, Val::Bool(v)) => {
                set(&mut r.ignore_class_binding_exceptions, *v, b, l)
            }
            _ => {}
        }
    }
    // A list replaces the base list *and* drops the base predicate (`recordException(null)`);
    // this block's own predicate still applies.
    if record_set {
        r.record_failure_predicate = Setting::default(None);
    }
    if ignore_set {
        r.ignore_exception_predicate = Setting::default(None);
    }
    for (id, target) in [
        (Id::RecordFailurePredicate, &mut r.record_failure_predicate),
        (
            Id::IgnoreExceptionPredicate,
            &mut r.ignore_exception_predicate,
        ),
        (Id::RecordResultPredicate, &mut r.record_result_predicate),
    ] {
        if let Some((t, b)) = text(block.get(id)) {
            set(target, Some(t.to_string()), b, l);
        }
    }
    Ok(r)
}
