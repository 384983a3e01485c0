//! `resilience4j.retry`: the settings Spring binds (`CommonRetryConfigurationProperties`,
//! retry spec §4.2), their setter checks, and how a block builds on its base (§4.3): the wait
//! is an interval function installed only by a block that sets `waitDuration`, shaped by the
//! backoff flags as they stand after the copy from the base.

use serde_json::{json, Value};

use breaker_core::retry::{RetryConfig, RetryWaitProperties};
use breaker_core::{IntervalFunction, SignedDuration};

use crate::bind::{Block, Bound};
use crate::catalog::{push_unclaimed, ExceptionList, UnclaimedName};
use crate::error::{ConfigError, Warning};
use crate::model::{Base, Setting, ValueSource};
use crate::schema::{Kind, Schema, Val};
use crate::validate::COUNT_ALLOWED;
use crate::yaml::java_double;

use super::common::{
    at_least_one, buffer_size, build_error, core_error, merged_bool, negative, object, set, source,
    to_millis,
};
use super::family::{Merged, Module};
use super::retry_model::{ResolvedRetry, RetryInterval, RetryKey};

use RetryKey as K;

/// `resilience4j.retry`.
pub(crate) struct Retry;

impl Schema for Retry {
    type Id = RetryKey;
    const SECTION: &'static str = "retry";
    const PREFIX: &'static str = "resilience4j.retry";
    const NOUN: &'static str = "retry";
    const INSTANCE_MAPS: &'static [&'static str] = &["instances", "backends"];
    const TOP_LEVEL: &'static [&'static str] = &[
        "configs",
        "instances",
        "backends",
        "retryAspectOrder",
        "tags",
        "metrics",
    ];
    const SETTINGS: &'static [(RetryKey, &'static str, Kind)] = &[
        (K::MaxAttempts, "maxAttempts", Kind::Int),
        (K::WaitDuration, "waitDuration", Kind::Duration),
        (K::IntervalBiFunction, "intervalBiFunction", Kind::Text),
        (
            K::RetryExceptionPredicate,
            "retryExceptionPredicate",
            Kind::Text,
        ),
        (K::ResultPredicate, "resultPredicate", Kind::Text),
        (
            K::ConsumeResultBeforeRetryAttempt,
            "consumeResultBeforeRetryAttempt",
            Kind::Text,
        ),
        (K::RetryExceptions, "retryExceptions", Kind::ClassList),
        (K::IgnoreExceptions, "ignoreExceptions", Kind::ClassList),
        (
            K::EventConsumerBufferSize,
            "eventConsumerBufferSize",
            Kind::Int,
        ),
        (
            K::EnableExponentialBackoff,
            "enableExponentialBackoff",
            Kind::Bool,
        ),
        (
            K::ExponentialBackoffMultiplier,
            "exponentialBackoffMultiplier",
            Kind::Double,
        ),
        (
            K::ExponentialMaxWaitDuration,
            "exponentialMaxWaitDuration",
            Kind::Duration,
        ),
        (K::EnableRandomizedWait, "enableRandomizedWait", Kind::Bool),
        (
            K::RandomizedWaitFactor,
            "randomizedWaitFactor",
            Kind::Double,
        ),
        (K::FailAfterMaxAttempts, "failAfterMaxAttempts", Kind::Bool),
        (K::BaseConfig, "baseConfig", Kind::Text),
    ];
    const LEGACY: &'static [(&'static str, &'static str)] = &[
        ("tags", "not an instance setting: tags apply to every instance of the section (resilience4j.retry.tags)"),
        (
            "maxRetryAttempts",
            "a Resilience4j 1.x key that binds nothing in 2.x; use maxAttempts",
        ),
        (
            "writableStackTraceEnabled",
            "not bindable from Spring configuration for a retry (set it in code with a customizer)",
        ),
        (
            "registerHealthIndicator",
            "not a retry setting (only circuit breakers and rate limiters have health indicators)",
        ),
        (
            "retryOnResultPredicate",
            "not a Spring key; the result predicate is resultPredicate",
        ),
    ];
    const BASE_CONFIG: RetryKey = K::BaseConfig;
    const EXAMPLE: &'static str = "maxAttempts: 3";

    fn check(id: RetryKey, v: &Val) -> Result<(), (String, &'static str)> {
        match (id, v) {
            (K::MaxAttempts, Val::Int(i)) if *i < 1 => Err((
                "maxAttempts must be greater than or equal to 1.".into(),
                COUNT_ALLOWED,
            )),
            (K::EventConsumerBufferSize, _) => {
                at_least_one("eventConsumerBufferSize", v).unwrap_or(Ok(()))
            }
            (K::WaitDuration, _) => match negative(v) {
                Some(d) => Err((
                    format!("Illegal argument waitDuration: {d} is negative"),
                    "a duration of at least 0ms",
                )),
                None => Ok(()),
            },
            (K::ExponentialMaxWaitDuration, _) => match negative(v) {
                Some(d) => Err((
                    format!("Illegal argument exponentialMaxWaitDuration: {d} is negative"),
                    "a duration of at least 1ms",
                )),
                None => Ok(()),
            },
            (K::ExponentialBackoffMultiplier, Val::Double(m)) if *m <= 0.0 => Err((
                format!(
                    "Illegal argument exponentialBackoffMultiplier: {} is less or equal 0",
                    java_double(*m)
                ),
                "a number > 0",
            )),
            (K::RandomizedWaitFactor, Val::Double(f)) if *f < 0.0 || *f >= 1.0 => Err((
                format!(
                    "Illegal argument randomizedWaitFactor: {} is not in range [0..1)",
                    java_double(*f)
                ),
                "a number from 0 (inclusive) to 1 (exclusive)",
            )),
            _ => Ok(()),
        }
    }

    fn conversion_allowed(id: RetryKey, fallback: &'static str) -> &'static str {
        match id {
            K::MaxAttempts | K::EventConsumerBufferSize => COUNT_ALLOWED,
            _ => fallback,
        }
    }

    fn class_advice(id: RetryKey) -> Option<&'static str> {
        match id {
            K::IntervalBiFunction => Some("give the interval function in code on the retry's config builder; the file's wait settings are not used while it is set"),
            K::RetryExceptionPredicate | K::ResultPredicate => {
                Some("give the predicate in code on the retry's config builder")
            }
            K::ConsumeResultBeforeRetryAttempt => {
                Some("give the callback in code on the retry's config builder")
            }
            _ => None,
        }
    }
}

fn millis_of(path: &str, setting: &str, b: &Bound) -> Result<u64, Box<ConfigError>> {
    match &b.val {
        // Spring's layer reads `Duration.toMillis()`, which throws past a Java long.
        Val::Duration(d) => to_millis(d).ok_or_else(|| {
            build_error(
                path,
                setting,
                b,
                "long overflow".into(),
                "a duration of at most 9223372036854775807ms",
            )
        }),
        _ => Ok(0),
    }
}

fn signed(b: &Bound) -> Option<SignedDuration> {
    match &b.val {
        Val::Duration(d) => Some(SignedDuration::from_nanos(d.0)),
        _ => None,
    }
}

fn double(b: Option<&Bound>) -> Option<f64> {
    match b.map(|b| &b.val) {
        Some(Val::Double(v)) => Some(*v),
        _ => None,
    }
}

/// `configureRetryIntervalFunction`: the function a block with `waitDuration` installs, chosen
/// and checked by breaker-core from the block's properties after the copy from its base
/// (Resilience4j's factories accept a capped backoff from 0 ms and fail at the first retry, so
/// the check runs in exact-Resilience4j mode; see [`ResolvedRetry::lint`]).
fn interval(
    path: &str,
    wait: &Bound,
    block: &Block<RetryKey>,
    merged: &Merged<RetryKey>,
) -> Result<RetryInterval, Box<ConfigError>> {
    millis_of(path, "waitDuration", wait)?;
    let copied = |id| merged.get(&id).map(|(b, _)| b);
    if let Some(cap) = copied(K::ExponentialMaxWaitDuration) {
        millis_of(path, "exponentialMaxWaitDuration", cap)?;
    }
    let props = RetryWaitProperties {
        wait_duration: signed(wait),
        enable_exponential_backoff: merged_bool(merged, K::EnableExponentialBackoff).map(|v| v.0),
        exponential_backoff_multiplier: double(copied(K::ExponentialBackoffMultiplier)),
        exponential_max_wait_duration: copied(K::ExponentialMaxWaitDuration).and_then(signed),
        enable_randomized_wait: merged_bool(merged, K::EnableRandomizedWait).map(|v| v.0),
        randomized_wait_factor: double(block.get(K::RandomizedWaitFactor)),
    };
    let built = RetryConfig::builder()
        .wait_properties(&props)
        .exact_resilience4j(true)
        .build();
    match built {
        Ok(c) => Ok(RetryInterval::Function(
            c.interval_function()
                .cloned()
                .unwrap_or(IntervalFunction::Constant {
                    interval_millis: 500,
                }),
        )),
        Err(e) => {
            let at = match e.setting() {
                "exponentialMaxWaitDuration" => copied(K::ExponentialMaxWaitDuration),
                "randomizedWaitFactor" => block.get(K::RandomizedWaitFactor),
                _ => None,
            }
            .unwrap_or(wait);
            Err(core_error(path, &e, Some(at)))
        }
    }
}

impl Module for Retry {
    type Resolved = ResolvedRetry;
    const MERGED: &'static [RetryKey] = &[
        K::EnableExponentialBackoff,
        K::EnableRandomizedWait,
        K::ExponentialBackoffMultiplier,
        K::ExponentialMaxWaitDuration,
        K::EventConsumerBufferSize,
    ];

    fn library_defaults(name: &str) -> ResolvedRetry {
        ResolvedRetry {
            name: name.to_string(),
            base: Base::LibraryDefaults,
            max_attempts: Setting::default(3),
            interval: Setting::default(RetryInterval::Function(IntervalFunction::Constant {
                interval_millis: 500,
            })),
            retry_exception_predicate: Setting::default(None),
            result_predicate: Setting::default(None),
            consume_result_before_retry_attempt: Setting::default(None),
            retry_exceptions: Setting::default(None),
            ignore_exceptions: Setting::default(None),
            fail_after_max_attempts: Setting::default(false),
            event_consumer_buffer_size: Setting::default(100),
            retry_exceptions_origins: Vec::new(),
            ignore_exceptions_origins: Vec::new(),
        }
    }

    fn build(
        mut r: ResolvedRetry,
        block: &Block<RetryKey>,
        merged: &Merged<RetryKey>,
        l: &ValueSource,
    ) -> Result<ResolvedRetry, Box<ConfigError>> {
        if let Some(w) = block.get(K::WaitDuration) {
            let i = interval(&block.path, w, block, merged)?;
            set(&mut r.interval, i, w, l);
        }
        for (id, b) in &block.values {
            match (*id, &b.val) {
                (K::MaxAttempts, Val::Int(v)) => set(&mut r.max_attempts, *v, b, l),
                (K::RetryExceptionPredicate, Val::Text(t)) => {
                    set(&mut r.retry_exception_predicate, Some(t.clone()), b, l)
                }
                (K::IgnoreExceptions, Val::Names(n)) => {
                    set(&mut r.ignore_exceptions, Some(n.clone()), b, l);
                    r.ignore_exceptions_origins = b.item_origins.clone();
                }
                (K::RetryExceptions, Val::Names(n)) => {
                    set(&mut r.retry_exceptions, Some(n.clone()), b, l);
                    r.retry_exceptions_origins = b.item_origins.clone();
                }
                (K::ResultPredicate, Val::Text(t)) => {
                    set(&mut r.result_predicate, Some(t.clone()), b, l)
                }
                (K::ConsumeResultBeforeRetryAttempt, Val::Text(t)) => set(
                    &mut r.consume_result_before_retry_attempt,
                    Some(t.clone()),
                    b,
                    l,
                ),
                // Applied after the wait settings, so it replaces them.
                (K::IntervalBiFunction, Val::Text(t)) => set(
                    &mut r.interval,
                    RetryInterval::Custom { class: t.clone() },
                    b,
                    l,
                ),
                (K::FailAfterMaxAttempts, Val::Bool(v)) => {
                    set(&mut r.fail_after_max_attempts, *v, b, l)
                }
                _ => {}
            }
        }
        Ok(r)
    }

    fn identify(r: &mut ResolvedRetry, name: &str, base: Base) {
        r.name = name.to_string();
        r.base = base;
    }

    fn lint(r: &ResolvedRetry, warnings: &mut Vec<Warning>) {
        let capped_from_zero = matches!(
            r.interval.value,
            RetryInterval::Function(
                IntervalFunction::Exponential {
                    initial_millis: 0,
                    max_millis: Some(_),
                    ..
                } | IntervalFunction::ExponentialRandom {
                    initial_millis: 0,
                    max_millis: Some(_),
                    ..
                }
            )
        );
        if !capped_from_zero {
            return;
        }
        let block = match &r.interval.source {
            ValueSource::Config(n) => format!("configs.{n}"),
            _ => format!("instances.{}", r.name),
        };
        warnings.push(Warning::new(
            r.interval.origin.clone(),
            format!("{}.{block}.waitDuration", Retry::PREFIX),
            "a first wait of 0 ms with backoff and an exponentialMaxWaitDuration: Resilience4j starts with it and fails the first retried call ('Illegal argument interval: 0 millis is less than 1'); breaker refuses it when it builds the retry, unless in exact-Resilience4j mode".into(),
        ));
    }

    /// The backoff settings of an instance block without `waitDuration` shape nothing for it
    /// (see [`super::retry_notes::flags_without_wait`]).
    fn lint_instance(block: &Block<RetryKey>, r: &ResolvedRetry, warnings: &mut Vec<Warning>) {
        super::retry_notes::flags_without_wait(block, r, warnings);
    }

    fn finish(
        r: &mut ResolvedRetry,
        _registered: &Merged<RetryKey>,
        last: &Merged<RetryKey>,
        _listed: bool,
    ) {
        r.event_consumer_buffer_size = buffer_size(last, K::EventConsumerBufferSize);
    }
}

impl ResolvedRetry {
    /// The settings as in `NN.modules.expected.json` (durations in ms; the wait fields
    /// describe the interval function in force).
    pub fn to_json(&self) -> Value {
        let null = Value::Null;
        let (wait, exp, rnd, mult, cap, factor, custom) = match &self.interval.value {
            RetryInterval::Function(IntervalFunction::Constant { interval_millis }) => (
                json!(interval_millis),
                false,
                false,
                null.clone(),
                null.clone(),
                null.clone(),
                null,
            ),
            RetryInterval::Function(IntervalFunction::Exponential {
                initial_millis,
                multiplier,
                max_millis,
            }) => (
                json!(initial_millis),
                true,
                false,
                json!(multiplier),
                json!(max_millis),
                null.clone(),
                null,
            ),
            RetryInterval::Function(IntervalFunction::Randomized {
                interval_millis,
                randomization_factor,
            }) => (
                json!(interval_millis),
                false,
                true,
                null.clone(),
                null.clone(),
                json!(randomization_factor),
                null,
            ),
            RetryInterval::Function(IntervalFunction::ExponentialRandom {
                initial_millis,
                multiplier,
                randomization_factor,
                max_millis,
            }) => (
                json!(initial_millis),
                true,
                true,
                json!(multiplier),
                json!(max_millis),
                json!(randomization_factor),
                null,
            ),
            RetryInterval::Custom { class } => (
                null.clone(),
                false,
                false,
                null.clone(),
                null.clone(),
                null,
                json!(class),
            ),
        };
        object(vec![
            ("maxAttempts", json!(self.max_attempts.value)),
            ("waitDuration", wait),
            ("enableExponentialBackoff", json!(exp)),
            ("exponentialBackoffMultiplier", mult),
            ("exponentialMaxWaitDuration", cap),
            ("enableRandomizedWait", json!(rnd)),
            ("randomizedWaitFactor", factor),
            ("intervalBiFunction", custom),
            (
                "retryExceptionPredicate",
                json!(self.retry_exception_predicate.value),
            ),
            ("resultPredicate", json!(self.result_predicate.value)),
            (
                "consumeResultBeforeRetryAttempt",
                json!(self.consume_result_before_retry_attempt.value),
            ),
            ("retryExceptions", json!(self.retry_exceptions.value)),
            ("ignoreExceptions", json!(self.ignore_exceptions.value)),
            (
                "failAfterMaxAttempts",
                json!(self.fail_after_max_attempts.value),
            ),
            (
                "eventConsumerBufferSize",
                json!(self.event_consumer_buffer_size.value),
            ),
        ])
    }

    /// Where each setting came from; the seven wait fields share the interval's source.
    pub fn sources_json(&self) -> Value {
        let i = source(&self.interval);
        object(vec![
            ("maxAttempts", source(&self.max_attempts)),
            ("waitDuration", i.clone()),
            ("enableExponentialBackoff", i.clone()),
            ("exponentialBackoffMultiplier", i.clone()),
            ("exponentialMaxWaitDuration", i.clone()),
            ("enableRandomizedWait", i.clone()),
            ("randomizedWaitFactor", i.clone()),
            ("intervalBiFunction", i),
            (
                "retryExceptionPredicate",
                source(&self.retry_exception_predicate),
            ),
            ("resultPredicate", source(&self.result_predicate)),
            (
                "consumeResultBeforeRetryAttempt",
                source(&self.consume_result_before_retry_attempt),
            ),
            ("retryExceptions", source(&self.retry_exceptions)),
            ("ignoreExceptions", source(&self.ignore_exceptions)),
            (
                "failAfterMaxAttempts",
                source(&self.fail_after_max_attempts),
            ),
            (
                "eventConsumerBufferSize",
                source(&self.event_consumer_buffer_size),
            ),
        ])
    }
}

impl super::ModuleConfig<ResolvedRetry> {
    /// Every `retryExceptions` / `ignoreExceptions` name (of every instance and of the default
    /// config) for which `is_claimed` returns false, each reported once per retry and list.
    pub fn unclaimed_exception_names(
        &self,
        is_claimed: &dyn Fn(&str) -> bool,
    ) -> Vec<UnclaimedName> {
        let mut out = Vec::new();
        for r in self
            .instances
            .values()
            .chain(self.default_config.as_ref().ok())
        {
            push_unclaimed(
                &r.name,
                [
                    (
                        ExceptionList::RetryExceptions,
                        &r.retry_exceptions.value,
                        &r.retry_exceptions_origins,
                    ),
                    (
                        ExceptionList::RetryIgnoreExceptions,
                        &r.ignore_exceptions.value,
                        &r.ignore_exceptions_origins,
                    ),
                ],
                is_claimed,
                &mut out,
            );
        }
        out
    }
}
