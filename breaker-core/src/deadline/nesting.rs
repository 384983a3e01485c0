//! Nested retries: a retried call made inside another retry's attempt. Detected through the
//! scope's [`RetryMark`]; warned about once per pair of instances; with `nested-retries:
//! outermost` (on the inner retry or any retry around it), the inner retry makes one attempt.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::scope::{current_frame, Frame, RetryMark};

/// How a retry behaves inside another retry's attempt
/// (`breaker.retry.instances.<name>.nested-retries`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum NestedRetries {
    /// `all` (the default, Resilience4j's behaviour): every layer retries, so attempts
    /// multiply (three layers of 3 attempts: 27 calls).
    #[default]
    All,
    /// `outermost`: only the outermost retry retries; this retry, inside another one's
    /// attempt, makes a single attempt (as with `maxAttempts: 1`).
    Outermost,
}

impl NestedRetries {
    /// The config value: `all` or `outermost`.
    pub const fn name(self) -> &'static str {
        match self {
            NestedRetries::All => "all",
            NestedRetries::Outermost => "outermost",
        }
    }
}

/// One retried call's place in the scope.
#[derive(Debug)]
pub(crate) struct RetryCall {
    /// The frame its attempts are polled in.
    pub(crate) frame: Arc<Frame>,
    /// Inside another retry that (or this one) said `outermost`: no retries.
    pub(crate) suppress: bool,
}

static WARNED: Mutex<Option<HashSet<(String, String)>>> = Mutex::new(None);

/// Set once any retry config in the process sets `nested-retries`: from then on every
/// retry marks its attempts, so that a setting on an inner retry sees the plain retries
/// around it.
static WATCHED: AtomicBool = AtomicBool::new(false);

/// Every retry marks its attempts from now on (see [`watched`]).
pub(crate) fn watch() {
    WATCHED.store(true, Ordering::Relaxed);
}

/// Whether a retry config set `nested-retries` in this process.
#[inline]
pub(crate) fn watched() -> bool {
    WATCHED.load(Ordering::Relaxed)
}

/// Enters a call of the retry `name`: reads the scope around it, warns (with `warn`) the
/// first time it is seen inside another retry (per pair), and makes the frame its attempts
/// run in.
pub(crate) fn enter_retry(
    name: &str,
    max_attempts: u32,
    setting: NestedRetries,
    warn: bool,
) -> RetryCall {
    let outer = current_frame();
    let outer = outer.as_deref();
    let own_outermost = setting == NestedRetries::Outermost;
    let (mark, suppress) = match outer.and_then(|f| f.retry.as_ref()) {
        Some(around) => {
            let worst = around
                .worst_case_calls
                .saturating_mul(u64::from(max_attempts));
            if warn {
                warn_once(&around.chain, name, worst);
            }
            let outermost = around.outermost_only || own_outermost;
            (
                RetryMark {
                    chain: format!("{} > {name}", around.chain).into(),
                    worst_case_calls: if outermost {
                        around.worst_case_calls
                    } else {
                        worst
                    },
                    outermost_only: outermost,
                },
                outermost,
            )
        }
        None => (
            RetryMark {
                chain: name.into(),
                worst_case_calls: u64::from(max_attempts),
                outermost_only: own_outermost,
            },
            false,
        ),
    };
    RetryCall {
        frame: Arc::new(Frame {
            deadline: outer.and_then(|f| f.deadline.clone()),
            retry: Some(mark),
        }),
        suppress,
    }
}

fn warn_once(outer_chain: &str, inner: &str, worst_case_calls: u64) {
    let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
    let first = warned
        .get_or_insert_with(HashSet::new)
        .insert((outer_chain.to_string(), inner.to_string()));
    if first {
        tracing::warn!(
            outer = outer_chain,
            inner,
            worst_case_calls,
            "retry '{inner}' runs inside retry '{outer_chain}': up to {worst_case_calls} calls \
             reach the dependency for one incoming call; set \
             breaker.retry.instances.{inner}.nested-retries: outermost to retry only in the \
             outermost layer"
        );
    }
}
