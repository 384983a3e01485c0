//! The sections beside the circuit breaker: `resilience4j.retry`, `.timelimiter`,
//! `.bulkhead`, `.thread-pool-bulkhead`, `.ratelimiter`, and the five aspect orders. Each is
//! bound by the shared binder (`bind.rs`, through its `Schema`) and
//! resolved by the rule family these modules share (`family.rs`), which differs from the
//! circuit breaker's. Sections under `resilience4j` that none of these covers get one warning
//! each.

mod aspect_order;
mod bulkhead;
mod common;
mod family;
mod java_order;
mod ratelimiter;
mod registries;
mod retry;
mod retry_model;
mod retry_notes;
mod threadpool;
mod timelimiter;
mod to_core;

use serde_json::{json, Map, Value};

use crate::bind::{bind_section, Block};
use crate::error::{ConfigError, Warning};
use crate::placeholders::Resolver;
use crate::property::Document;
use crate::relaxed::{self, suggest};

pub use aspect_order::AspectOrder;
pub use bulkhead::ResolvedBulkhead;
pub use family::ModuleConfig;
pub use ratelimiter::ResolvedRateLimiter;
pub use registries::{
    module_core_configs, module_core_configs_with_clock, module_registries_from_loaded,
    CoreSection, ModuleCoreConfigs, ModuleRegistries,
};
pub use retry_model::{ResolvedRetry, RetryInterval};
pub use threadpool::ResolvedThreadPoolBulkhead;
pub use timelimiter::ResolvedTimeLimiter;

use family::Module;

/// Everything the files say about the modules beside the circuit breaker, resolved as
/// Resilience4j's Spring Boot 3 support does.
#[derive(Clone, Debug, PartialEq)]
pub struct ModulesConfig {
    /// `resilience4j.retry`.
    pub retry: ModuleConfig<ResolvedRetry>,
    /// `resilience4j.timelimiter`.
    pub time_limiter: ModuleConfig<ResolvedTimeLimiter>,
    /// `resilience4j.bulkhead` (semaphore bulkheads).
    pub bulkhead: ModuleConfig<ResolvedBulkhead>,
    /// `resilience4j.thread-pool-bulkhead`.
    pub thread_pool_bulkhead: ModuleConfig<ResolvedThreadPoolBulkhead>,
    /// `resilience4j.ratelimiter`.
    pub rate_limiter: ModuleConfig<ResolvedRateLimiter>,
    /// The five aspect orders.
    pub aspect_order: AspectOrder,
    /// Aspect-order values Spring cannot bind.
    pub aspect_order_errors: Vec<ConfigError>,
}

impl ModulesConfig {
    /// Every error of every module section. Empty means Spring Boot would start with them.
    pub fn all_errors(&self) -> Vec<&ConfigError> {
        let mut out = self.retry.all_errors();
        out.extend(self.time_limiter.all_errors());
        out.extend(self.bulkhead.all_errors());
        out.extend(self.thread_pool_bulkhead.all_errors());
        out.extend(self.rate_limiter.all_errors());
        out.extend(self.aspect_order_errors.iter());
        out
    }

    /// The `breaker check --json` objects, keyed as in `NN.modules.expected.json`: `retry`,
    /// `timelimiter`, `bulkhead`, `threadpoolbulkhead`, `ratelimiter` (each
    /// `{"instances", "defaultConfig", "errors"}`) and `aspectOrder`.
    pub fn report(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(
            "retry".into(),
            module_json(&self.retry, ResolvedRetry::to_json),
        );
        m.insert(
            "timelimiter".into(),
            module_json(&self.time_limiter, ResolvedTimeLimiter::to_json),
        );
        m.insert(
            "bulkhead".into(),
            module_json(&self.bulkhead, ResolvedBulkhead::to_json),
        );
        m.insert(
            "threadpoolbulkhead".into(),
            module_json(
                &self.thread_pool_bulkhead,
                ResolvedThreadPoolBulkhead::to_json,
            ),
        );
        m.insert(
            "ratelimiter".into(),
            module_json(&self.rate_limiter, ResolvedRateLimiter::to_json),
        );
        m.insert("aspectOrder".into(), self.aspect_order.to_json());
        m
    }

    /// Where every module value came from: `{"retry": {"<name>" | "<default>": {setting:
    /// {"from", "at"}}}, ..., "aspectOrder": {...}}`.
    pub fn sources(&self) -> Value {
        json!({
            "retry": module_sources(&self.retry, ResolvedRetry::sources_json),
            "timelimiter": module_sources(&self.time_limiter, ResolvedTimeLimiter::sources_json),
            "bulkhead": module_sources(&self.bulkhead, ResolvedBulkhead::sources_json),
            "threadpoolbulkhead": module_sources(&self.thread_pool_bulkhead, ResolvedThreadPoolBulkhead::sources_json),
            "ratelimiter": module_sources(&self.rate_limiter, ResolvedRateLimiter::sources_json),
            "aspectOrder": self.aspect_order.sources_json(),
        })
    }
}

fn module_json<R>(m: &ModuleConfig<R>, f: impl Fn(&R) -> Value) -> Value {
    let instances: Map<String, Value> =
        m.instances.iter().map(|(n, r)| (n.clone(), f(r))).collect();
    let errors: Map<String, Value> = m
        .errors
        .iter()
        .map(|(n, e)| (n.clone(), Value::from(e.message.clone())))
        .collect();
    json!({
        "instances": instances,
        "defaultConfig": m.default_config.as_ref().map_or(Value::Null, &f),
        "errors": errors,
    })
}

fn module_sources<R>(m: &ModuleConfig<R>, f: impl Fn(&R) -> Value) -> Value {
    let mut out: Map<String, Value> = m.instances.iter().map(|(n, r)| (n.clone(), f(r))).collect();
    if let Ok(d) = &m.default_config {
        out.insert("<default>".into(), f(d));
    }
    Value::Object(out)
}

fn resolve_module<M: Module>(
    docs: &[&Document],
    resolver: &Resolver<'_>,
    warnings: &mut Vec<Warning>,
    lint: fn(&Block<M::Id>, &mut Vec<Warning>),
) -> ModuleConfig<M::Resolved> {
    let section = bind_section::<M>(docs, resolver, warnings);
    for b in section.configs.values().chain(section.instances.values()) {
        lint(b, warnings);
    }
    let resolved = family::resolve::<M>(&section);
    let mut found = Vec::new();
    for r in resolved
        .instances
        .values()
        .chain(resolved.default_config.as_ref().ok())
    {
        M::lint(r, &mut found);
    }
    for (name, r) in &resolved.instances {
        if let Some(b) = section.instances.get(name) {
            M::lint_instance(b, r, &mut found);
        }
    }
    for w in found {
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }
    resolved
}

fn no_lint<I>(_: &Block<I>, _: &mut Vec<Warning>) {}

/// Binds and resolves every module section of `docs` (lowest precedence first).
pub(crate) fn load(
    docs: &[&Document],
    resolver: &Resolver<'_>,
    warnings: &mut Vec<Warning>,
) -> ModulesConfig {
    warn_other_sections(docs, warnings);
    let (aspect_order, aspect_order_errors) = aspect_order::read(docs, resolver);
    ModulesConfig {
        retry: resolve_module::<retry::Retry>(docs, resolver, warnings, no_lint),
        time_limiter: resolve_module::<timelimiter::TimeLimiter>(docs, resolver, warnings, no_lint),
        bulkhead: resolve_module::<bulkhead::Bulkhead>(docs, resolver, warnings, no_lint),
        thread_pool_bulkhead: resolve_module::<threadpool::ThreadPoolBulkhead>(
            docs,
            resolver,
            warnings,
            threadpool::ThreadPoolBulkhead::lint,
        ),
        rate_limiter: resolve_module::<ratelimiter::RateLimiter>(docs, resolver, warnings, no_lint),
        aspect_order,
        aspect_order_errors,
    }
}

/// The sections under `resilience4j` that are read here.
const SECTIONS: [&str; 6] = [
    "circuitbreaker",
    "retry",
    "timelimiter",
    "bulkhead",
    "thread-pool-bulkhead",
    "ratelimiter",
];

/// Sections Resilience4j's Spring support binds that have no meaning here.
const UNSUPPORTED: [(&str, &str); 3] = [
    ("scheduled", "Resilience4j's scheduler for the retry and time-limiter aspects; not used here (waits run on the async runtime's timer), so this section is ignored"),
    ("thread", "the thread type of Resilience4j's schedulers; not used here (waits run on the async runtime's timer), so this section is ignored"),
    ("micrometer", "the @Timer aspect of resilience4j-micrometer, which is not supported here, so this section is ignored"),
];

/// One warning per section under `resilience4j` that is not one of [`SECTIONS`]: Spring binds
/// nothing for an unknown one, and the supported-elsewhere ones are ignored here.
fn warn_other_sections(docs: &[&Document], warnings: &mut Vec<Warning>) {
    let mut seen: Vec<String> = Vec::new();
    for p in docs.iter().flat_map(|d| d.properties.iter()) {
        let n = &p.name;
        if n.len() < 2 || !n[0].is("resilience4j") || SECTIONS.iter().any(|s| n[1].is(s)) {
            continue;
        }
        let uniform = relaxed::uniform(&n[1].text);
        if seen.contains(&uniform) {
            continue;
        }
        seen.push(uniform);
        let key = format!("{}.{}", n[0].text, n[1].text);
        let msg = match UNSUPPORTED.iter().find(|(s, _)| n[1].is(s)) {
            Some((_, what)) => what.to_string(),
            None => {
                let known = SECTIONS.iter().chain(UNSUPPORTED.iter().map(|(s, _)| s));
                match suggest(&n[1].text, known.copied()) {
                    Some(s) => format!(
                        "unknown Resilience4j section {}: did you mean {s}? (Spring binds nothing for it)",
                        n[1].text
                    ),
                    None => format!(
                        "unknown Resilience4j section {} (Spring binds nothing for it)",
                        n[1].text
                    ),
                }
            }
        };
        warnings.push(Warning::new(Some(p.key_origin.clone()), key, msg));
    }
}
