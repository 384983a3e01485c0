//! breaker's budget keys (issue #27): `breaker.deadline.instances.<name>.timeout` and the
//! `breaker.retry.instances.<name>` deadline, nesting and retry-budget settings bind without
//! a warning, reach the retry configs, show in `breaker check --json` with their origin, and
//! a bad value is an error naming its key, line and allowed values.

use std::time::Duration;

use breaker_config::modules::module_core_configs;
use breaker_config::{Format, Loaded, Loader};
use breaker_core::retry::{NestedRetries, RetryBudgetConfig, RetryBudgets};
use breaker_core::ErrorCatalog;

fn yaml(text: &str) -> Loaded {
    Loader::new()
        .env(Default::default())
        .load_str("application.yml", Format::Yaml, text)
        .unwrap()
}

const BUDGETS: &str = "\
resilience4j:
  retry:
    instances:
      payments:
        maxAttempts: 3
  timelimiter:
    instances:
      payments:
        timeoutDuration: 1s
breaker:
  deadline:
    instances:
      checkout:
        timeout: 5s
  retry:
    instances:
      payments:
        nested-retries: outermost
        budget:
          ratio: 0.25
          min-retries-per-second: 2
      inventory:
        attemptTimeout: 300ms
        budget.window: 30s
";

#[test]
fn budget_keys_bind_without_warnings() {
    let l = yaml(BUDGETS);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert!(l.errors().is_empty(), "{:?}", l.errors());
    let b = &l.budgets;
    assert_eq!(b.deadline("checkout"), Some(Duration::from_secs(5)));
    assert_eq!(b.deadline("payments"), None);
    assert_eq!(
        b.retries["payments"],
        RetryBudgets {
            attempt_timeout: None,
            nested_retries: Some(NestedRetries::Outermost),
            budget: Some(RetryBudgetConfig {
                ratio: 0.25,
                min_retries_per_second: 2,
                window: Duration::from_secs(10),
            }),
        }
    );
    assert_eq!(
        b.retries["inventory"],
        RetryBudgets {
            attempt_timeout: Some(Duration::from_millis(300)),
            nested_retries: None,
            budget: Some(RetryBudgetConfig {
                window: Duration::from_secs(30),
                ..RetryBudgetConfig::default()
            }),
        }
    );
}

#[test]
fn retry_configs_carry_the_budgets() {
    let l = yaml(BUDGETS);
    let c = module_core_configs(&l, &ErrorCatalog::new()).unwrap();
    let payments = &c
        .retry
        .instances
        .iter()
        .find(|(n, _)| n == "payments")
        .unwrap()
        .1;
    assert_eq!(payments.max_attempts(), 3);
    // No attempt-timeout: the time limiter `payments`' 1 s.
    assert_eq!(
        payments.budgets().attempt_timeout,
        Some(Duration::from_secs(1))
    );
    assert_eq!(
        payments.budgets().nested_retries,
        Some(NestedRetries::Outermost)
    );
    // Not listed under resilience4j.retry: made from the default config.
    let inventory = &c
        .retry
        .instances
        .iter()
        .find(|(n, _)| n == "inventory")
        .unwrap()
        .1;
    assert_eq!(inventory.max_attempts(), 3);
    assert_eq!(
        inventory.budgets().attempt_timeout,
        Some(Duration::from_millis(300))
    );
    // Without budget keys, Resilience4j's config: nothing set.
    let plain = yaml("resilience4j.retry.instances.a.maxAttempts: 2\n");
    let c = module_core_configs(&plain, &ErrorCatalog::new()).unwrap();
    assert!(!c.retry.instances[0].1.budgets().is_set());
    assert!(plain.budgets.is_empty());
}

#[test]
fn check_json_shows_the_keys_with_their_origin() {
    let l = yaml(BUDGETS);
    let report = breaker_config::json::report(&l);
    let b = &report["budgets"];
    assert_eq!(b["deadlines"]["checkout"]["timeoutMs"], 5000);
    assert_eq!(
        b["deadlines"]["checkout"]["origin"],
        "application.yml:14:18"
    );
    assert_eq!(b["retries"]["payments"]["nestedRetries"], "outermost");
    assert_eq!(b["retries"]["payments"]["budget"]["ratio"], 0.25);
    assert_eq!(b["retries"]["inventory"]["attemptTimeoutMs"], 300);
    assert_eq!(
        b["retries"]["payments"]["origins"]["breaker.retry.instances.payments.nested-retries"],
        "application.yml:18:25"
    );
    // Nothing set: no section.
    let plain =
        breaker_config::json::report(&yaml("resilience4j.retry.instances.a.maxAttempts: 2\n"));
    assert!(plain.get("budgets").is_none());
}

#[test]
fn bad_values_are_errors_naming_key_and_allowed_values() {
    let l = yaml(
        "\
breaker:
  deadline.instances.a.timeout: soon
  retry.instances.a:
    nested-retries: innermost
    budget.ratio: 1.5
    budget.window: 2h
    budget.min-retries-per-second: -1
",
    );
    let errors: Vec<String> = l.errors().iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 5, "{errors:?}");
    let has = |key: &str, text: &str| {
        assert!(
            errors.iter().any(|e| e.contains(key) && e.contains(text)),
            "{key} / {text} not in {errors:?}"
        )
    };
    has(
        "breaker.deadline.instances.a.timeout",
        "'soon' is not a positive duration",
    );
    has("nested-retries", "all, outermost");
    has("budget.ratio", "between 0.0 and 1.0");
    has("budget.window", "1s to 1h");
    has("budget.min-retries-per-second", "whole number");
    // Other breaker keys are still warned about.
    let l = yaml("breaker.retry.instances.a.budget.ratios: 0.2\n");
    assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
}
