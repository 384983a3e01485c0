//! [`Retry`]: one named retry, its config, counters and events, and the attempt loop of a
//! call.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;

use super::budget::{BudgetCounters, BudgetWindow, RetryBudgetMetrics};
use super::config::RetryConfig;
use super::context::{Context, Next};
use super::error::RetryError;
use super::events::RetryEvent;
use super::first_attempt::FirstAttempt;
use super::metrics::{Counters, RetryMetrics};
use crate::deadline::{self, RetryCall, Scoped};
use crate::events::SubscriptionId;
use crate::instance_registry::RegistryInstance;
use crate::publisher::EventPublisher;

/// What a retry's calls share.
pub(crate) struct RetryShared {
    pub(crate) name: Arc<str>,
    pub(crate) counters: Counters,
    pub(crate) events: EventPublisher<RetryEvent>,
    /// The retry budget's calls and retries (used only with `budget.*` set).
    pub(crate) budget: BudgetWindow,
    pub(crate) budget_counters: BudgetCounters,
}

struct Inner {
    shared: RetryShared,
    config: ArcSwap<RetryConfig>,
    /// The config in force has no `retryOnResult`: a first attempt that returns `Ok` ends
    /// the call, and the call needs no config at all.
    plain_results: AtomicBool,
    /// The config in force sets breaker's budget settings (outside exact mode): every call
    /// enters the scope (see `Retry::enter`).
    budgeted: AtomicBool,
}

fn is_budgeted(config: &RetryConfig) -> bool {
    if config.budgets.nested_retries.is_some() && !config.exact_resilience4j {
        deadline::watch_nesting();
    }
    config.budgets.is_set() && !config.exact_resilience4j
}

impl Inner {
    fn set_config(&self, config: Arc<RetryConfig>) {
        let plain = config.retry_on_result.is_none();
        let budgeted = is_budgeted(&config);
        self.config.store(config);
        self.plain_results.store(plain, Ordering::Release);
        self.budgeted.store(budgeted, Ordering::Release);
    }
}

/// One named retry (Resilience4j's `Retry`). Cheap to clone; clones share the config,
/// counters and subscribers.
///
/// ```
/// use breaker_core::retry::{Retry, RetryConfig, RetryError};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let retry = Retry::new(
///     "backendA",
///     RetryConfig::builder().wait_duration(Duration::ZERO).build().unwrap(),
/// );
/// let calls = AtomicU32::new(0);
/// let r: Result<u32, RetryError<String>> = retry
///     .call(|| async {
///         match calls.fetch_add(1, Ordering::SeqCst) {
///             0 => Err("connection reset".to_string()),
///             n => Ok(n),
///         }
///     })
///     .await;
/// assert_eq!(r.unwrap(), 1);
/// assert_eq!(retry.metrics().number_of_successful_calls_with_retry_attempt, 1);
/// # }
/// ```
#[derive(Clone)]
pub struct Retry {
    inner: Arc<Inner>,
}

impl Retry {
    /// A retry named `name` with `config`.
    pub fn new(name: impl Into<Arc<str>>, config: RetryConfig) -> Self {
        Self::with_shared_config(name.into(), Arc::new(config))
    }

    /// A retry named `name` with Resilience4j's defaults (`Retry.ofDefaults(name)`).
    pub fn of_defaults(name: impl Into<Arc<str>>) -> Self {
        Self::new(name, RetryConfig::default())
    }

    fn with_shared_config(name: Arc<str>, config: Arc<RetryConfig>) -> Self {
        Retry {
            inner: Arc::new(Inner {
                shared: RetryShared {
                    name,
                    counters: Counters::default(),
                    events: EventPublisher::default(),
                    budget: BudgetWindow::default(),
                    budget_counters: BudgetCounters::default(),
                },
                plain_results: AtomicBool::new(config.retry_on_result.is_none()),
                budgeted: AtomicBool::new(is_budgeted(&config)),
                config: ArcSwap::new(config),
            }),
        }
    }

    /// The retry's name.
    pub fn name(&self) -> &str {
        &self.inner.shared.name
    }

    /// The config calls start with now.
    pub fn config(&self) -> Arc<RetryConfig> {
        self.inner.config.load_full()
    }

    /// Replaces the config: calls whose first attempt ends afterwards use it; calls past
    /// their first attempt keep the config they read then. The counters and subscribers
    /// stay.
    pub fn replace_config(&self, config: RetryConfig) {
        self.inner.set_config(Arc::new(config));
    }

    /// The counters (`getMetrics()`).
    pub fn metrics(&self) -> RetryMetrics {
        self.inner.shared.counters.snapshot()
    }

    /// The counters of breaker's budget settings (deadline stops, retry budget, nested
    /// retries suppressed); all zero while none is set.
    pub fn budget_metrics(&self) -> RetryBudgetMetrics {
        self.inner.shared.budget_counters.snapshot()
    }

    /// The call's place in the scope: `None` (nothing to do) unless the config sets budget
    /// settings or a scope (a deadline, another retry's attempt) is around the call. One
    /// atomic load and one thread-local read otherwise.
    /// `first`: the call starts (counted in the retry budget, nesting warned about); else
    /// the same place read again, without side effects, once the first attempt has ended.
    /// Read while the call is polled (inside its caller's scope), never when the call's
    /// future is made.
    #[inline]
    fn enter(&self, first: bool) -> Option<RetryCall> {
        if self.inner.budgeted.load(Ordering::Relaxed)
            || deadline::nesting_watched()
            || deadline::active()
        {
            self.enter_scope(first)
        } else {
            None
        }
    }

    #[cold]
    #[inline(never)]
    fn enter_scope(&self, first: bool) -> Option<RetryCall> {
        let config = self.inner.config.load();
        if config.exact_resilience4j {
            return None;
        }
        let budgets = &config.budgets;
        if let (true, Some(budget)) = (first, &budgets.budget) {
            self.inner
                .shared
                .budget
                .deposit(config.clock.now_nanos(), budget);
        }
        Some(deadline::enter_retry(
            &self.inner.shared.name,
            config.max_attempts,
            budgets.nested_retries.unwrap_or_default(),
            first,
        ))
    }

    /// Calls `f` for every event, synchronously, on the task that makes the call
    /// (`getEventPublisher().onEvent(..)`). A subscriber that panics is logged and affects
    /// neither the call nor the other subscribers (except in exact-Resilience4j mode).
    pub fn subscribe(&self, f: impl Fn(&RetryEvent) + Send + Sync + 'static) -> SubscriptionId {
        self.inner.shared.events.subscribe(f)
    }

    /// Removes a subscriber; `false` if it was not subscribed.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        self.inner.shared.events.unsubscribe(id)
    }

    /// The event publisher (for adapters that keep their own subscriptions).
    pub fn event_publisher(&self) -> &EventPublisher<RetryEvent> {
        &self.inner.shared.events
    }

    /// Whether two handles are the same retry.
    pub fn ptr_eq(&self, other: &Retry) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Runs `attempt()` and awaits it, again and again, until an attempt succeeds, an error
    /// is not retried, or `maxAttempts` attempts were made; waits between attempts on the
    /// config's clock.
    ///
    /// `attempt` makes a new future for every attempt. An `Err` is retried when the config's
    /// exception settings say so (every error by default); an `Ok` value is retried when
    /// `retryOnResult` accepts it. Events and counters follow Resilience4j's (module docs).
    /// The config is read once, when the first attempt ends (Resilience4j's decisions all
    /// come after it); with no `retryOnResult`, a first attempt that returns `Ok` ends the
    /// call without reading it: one counter increment is all it costs.
    ///
    /// Dropping the returned future stops at once: no further attempt is made, a pending
    /// wait is cancelled. A panic inside an attempt propagates with no event and no count,
    /// as a Java `Error` does. A call whose first attempt succeeds allocates nothing.
    ///
    /// # Errors
    /// [`RetryError::Inner`] with the last attempt's error; [`RetryError::MaxRetriesExceeded`]
    /// when the results ran out with `failAfterMaxAttempts`; [`RetryError::WaitInterval`]
    /// only in exact-Resilience4j mode.
    pub fn call<F, Fut, T, E>(
        &self,
        attempt: F,
    ) -> impl Future<Output = Result<T, RetryError<E>>> + use<'_, F, Fut, T, E>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        T: Any,
        E: Any + fmt::Display,
    {
        let mut attempt = attempt;
        // The scope is read at the first attempt (the future may be made outside the scope
        // it is polled in).
        let mut frame: Option<Option<Arc<deadline::Frame>>> = None;
        FirstAttempt::new(
            move || {
                let frame = frame.get_or_insert_with(|| self.enter(true).map(|c| c.frame));
                Scoped::new(frame.clone(), attempt())
            },
            move |outcome: Result<T, E>| {
                if outcome.is_ok() && self.inner.plain_results.load(Ordering::Acquire) {
                    // Success without retry: one attempt, no event (see `Counters`).
                    self.inner
                        .shared
                        .counters
                        .successful_without_retry
                        .add_one();
                    Ok(outcome.map_err(RetryError::Inner))
                } else {
                    Err(outcome)
                }
            },
            move |attempt, outcome| self.after_first(attempt, outcome),
        )
    }

    /// The rest of [`call`](Self::call) once the first attempt needs a decision: kept out
    /// of the first attempt's code so that a success there stays a few instructions.
    #[inline(never)]
    async fn after_first<F, Fut, T, E>(
        &self,
        attempt: F,
        outcome: Result<T, E>,
    ) -> Result<T, RetryError<E>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        T: Any,
        E: Any + fmt::Display,
    {
        self.run_from(
            |v: &T| v as &dyn Any,
            |e: &E| e as &dyn Any,
            attempt,
            outcome,
            self.enter(false),
        )
        .await
    }

    /// [`call`](Self::call) where the result predicate, the exception settings
    /// (`retryExceptions`, `ignoreExceptions`, `retryOnException`) and the interval function
    /// see what `value` and `cause` give of a value and an error: for an error type that
    /// wraps the one to classify (a stack of layers, whose error carries the protected fn's
    /// own error or an inner layer's rejection), and for a value type the caller checks to
    /// be `'static` itself (no `T: Any` bound here, so the future's `Send` does not depend
    /// on proving it for every lifetime).
    ///
    /// # Errors
    /// As [`call`](Self::call).
    pub async fn call_classified<F, Fut, T, E>(
        &self,
        value: fn(&T) -> &dyn Any,
        cause: fn(&E) -> &dyn Any,
        mut attempt: F,
    ) -> Result<T, RetryError<E>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Any + fmt::Display,
    {
        let call = self.enter(true);
        let frame = call.as_ref().map(|c| Arc::clone(&c.frame));
        let mut attempt = move || Scoped::new(frame.clone(), attempt());
        let outcome = attempt().await;
        // As `call`: a success with no `retryOnResult` needs no decision, so neither the
        // config nor `value` is read. (An `async fn` rather than `call`'s `FirstAttempt`, whose
        // separate slots for the first attempt and the rest would double the size of every
        // level of a stack.)
        if outcome.is_ok() && self.inner.plain_results.load(Ordering::Acquire) {
            self.inner
                .shared
                .counters
                .successful_without_retry
                .add_one();
            return outcome.map_err(RetryError::Inner);
        }
        self.run_from(value, cause, attempt, outcome, call).await
    }

    /// The attempt loop from the first attempt's `outcome` on: the config is read once,
    /// when the first attempt ends.
    async fn run_from<F, Fut, T, E>(
        &self,
        value: fn(&T) -> &dyn Any,
        cause: fn(&E) -> &dyn Any,
        mut attempt: F,
        mut outcome: Result<T, E>,
        call: Option<RetryCall>,
    ) -> Result<T, RetryError<E>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Any + fmt::Display,
    {
        let config = self.inner.config.load_full();
        let mut context = Context::new(&self.inner.shared, &config, cause, call.as_ref());
        loop {
            match context.after(outcome, value) {
                Next::Done(result) => return result,
                Next::Wait(0) => {}
                Next::Wait(ms) => config.clock.sleep(Duration::from_millis(ms)).await,
            }
            outcome = attempt().await;
        }
    }
}

impl fmt::Debug for Retry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retry")
            .field("name", &self.name())
            .field("metrics", &self.metrics())
            .finish_non_exhaustive()
    }
}

impl RegistryInstance for Retry {
    type Config = RetryConfig;
    type Event = RetryEvent;

    fn default_config() -> RetryConfig {
        RetryConfig::default()
    }
    fn create(name: &str, config: Arc<RetryConfig>) -> Self {
        Retry::with_shared_config(name.into(), config)
    }
    fn name(&self) -> &str {
        Retry::name(self)
    }
    fn config(&self) -> Arc<RetryConfig> {
        Retry::config(self)
    }
    fn replace_config(&self, config: Arc<RetryConfig>) {
        self.inner.set_config(config);
    }
    fn event_publisher(&self) -> &EventPublisher<RetryEvent> {
        Retry::event_publisher(self)
    }
}
