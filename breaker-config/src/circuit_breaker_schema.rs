//! `resilience4j.circuitbreaker` as a [`Schema`] for the shared binder: the property table of
//! `keys.rs` with the setter checks of `validate.rs`.

use crate::keys::{Id, LEGACY, SETTINGS, TOP_LEVEL};
use crate::schema::{Kind, Schema, Val};
use crate::validate;

/// `resilience4j.circuitbreaker` for the shared binder.
pub(crate) struct CircuitBreakerSchema;

impl Schema for CircuitBreakerSchema {
    type Id = Id;
    const SECTION: &'static str = "circuitbreaker";
    const PREFIX: &'static str = "resilience4j.circuitbreaker";
    const NOUN: &'static str = "circuit-breaker";
    const INSTANCE_MAPS: &'static [&'static str] = &["instances", "backends"];
    const TOP_LEVEL: &'static [&'static str] = TOP_LEVEL;
    const SETTINGS: &'static [(Id, &'static str, Kind)] = SETTINGS;
    const LEGACY: &'static [(&'static str, &'static str)] = LEGACY;
    const BASE_CONFIG: Id = Id::BaseConfig;
    const EXAMPLE: &'static str = "slidingWindowSize: 10";

    fn check(id: Id, v: &Val) -> Result<(), (String, &'static str)> {
        validate::check(id, v)
    }

    fn conversion_allowed(id: Id, fallback: &'static str) -> &'static str {
        validate::conversion_allowed(id, fallback)
    }

    fn class_advice(id: Id) -> Option<&'static str> {
        match id {
            Id::RecordResultPredicate => {
                Some("give the predicate in code (CircuitBreakerConfigBuilder::record_result)")
            }
            Id::IgnoreExceptionPredicate => {
                Some("give the predicate in code (CircuitBreakerConfigBuilder::ignore_exception)")
            }
            Id::RecordFailurePredicate => {
                Some("give the predicate in code (CircuitBreakerConfigBuilder::record_exception)")
            }
            _ => None,
        }
    }
}
