//! The rows of issue #26, shared by `benches/ratios.rs` (each user path against the core
//! calls it wraps) and `benches/r4j_rows.rs` (ns per call beside Resilience4j's figures).
//!
//! Every row runs the same body, which returns a counter (a plain load and store, as Java's
//! `counter++` on a field), with Resilience4j's default settings for every module except the
//! rate limiter: `limitForPeriod` = `i32::MAX` per 1 s with a zero `timeoutDuration`, so no
//! call of the bench is ever refused. Three ways to call it:
//!
//! - **attribute**: a fn annotated as a user writes it (`#[retry]`, ..., or a stack), its
//!   instances in static registries (`registry = STATIC`: cached at the call site, as a
//!   literal name in the global registries is);
//! - **core**: the same body through the core calls (`Retry::call`, `CircuitBreaker::call`,
//!   ...) nested by hand, each layer's error mapped into the fn's error type as the
//!   expansion does;
//! - **tower**: the same body as a `tower::service_fn` behind breaker-tower's layers.
//!
//! Stacks nest as Spring Boot 3's default aspect order does:
//! `Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(fn)))))`, the 4-layer stack without
//! the time limiter.

use std::future::{ready, Ready};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;
use std::time::Duration;

use resilience4rs::bulkhead::{Bulkhead, BulkheadError, BulkheadFullException, BulkheadRegistry};
use resilience4rs::ratelimiter::{
    RateLimiter, RateLimiterConfig, RateLimiterError, RateLimiterRegistry, RequestNotPermitted,
};
use resilience4rs::retry::{MaxRetriesExceeded, Retry, RetryError, RetryRegistry};
use resilience4rs::timelimiter::{TimeLimiter, TimeLimiterError, TimeLimiterRegistry, Timeout};
use resilience4rs::tower::{
    BoxError, BulkheadLayer, ByConfig, CircuitBreakerLayer, RateLimiterLayer, RetryLayer,
    TimeLimiterLayer,
};
use resilience4rs::{
    bulkhead, circuit_breaker, rate_limiter, retry, time_limiter, CallError, CallNotPermitted,
    CircuitBreaker, Registry,
};

/// The fn's error: its own (never returned here) or a layer's rejection.
#[derive(Debug)]
pub enum BodyError {
    /// The body's own error.
    Body,
    /// A layer refused the call.
    Rejected,
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BodyError::Body => "body error",
            BodyError::Rejected => "rejected",
        })
    }
}

impl std::error::Error for BodyError {}

macro_rules! rejected_from {
    ($($t:ty),*) => {$(
        impl From<$t> for BodyError {
            fn from(_: $t) -> Self { BodyError::Rejected }
        }
    )*};
}
rejected_from!(
    CallNotPermitted,
    Timeout,
    BulkheadFullException,
    RequestNotPermitted,
    MaxRetriesExceeded
);

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The protected body: returns a counter (a plain load and store, no locked instruction).
#[inline]
pub fn count() -> Result<u64, BodyError> {
    let n = COUNTER.load(Ordering::Relaxed) + 1;
    COUNTER.store(n, Ordering::Relaxed);
    Ok(black_box(n))
}

/// [`count`] as a ready future.
#[inline]
pub fn body() -> Ready<Result<u64, BodyError>> {
    ready(count())
}

/// The rate limiter's config of the rows: never refuses within a bench.
pub fn limiter_config() -> RateLimiterConfig {
    RateLimiterConfig::builder()
        .limit_for_period(i64::from(i32::MAX))
        .limit_refresh_period(Duration::from_secs(1))
        .timeout_duration(Duration::ZERO)
        .build()
        .expect("valid config")
}

/// The attributes' circuit breakers (Resilience4j's defaults).
pub static BREAKERS: LazyLock<Registry> = LazyLock::new(Registry::new);
/// The attributes' retries (defaults: 3 attempts, 500 ms).
pub static RETRIES: LazyLock<RetryRegistry> = LazyLock::new(RetryRegistry::new);
/// The attributes' rate limiters ([`limiter_config`]).
pub static LIMITERS: LazyLock<RateLimiterRegistry> =
    LazyLock::new(|| RateLimiterRegistry::with_default_config(limiter_config()));
/// The attributes' time limiters (default: 1 s).
pub static TIME_LIMITERS: LazyLock<TimeLimiterRegistry> = LazyLock::new(TimeLimiterRegistry::new);
/// The attributes' bulkheads (default: 25 concurrent calls, no wait).
pub static BULKHEADS: LazyLock<BulkheadRegistry> = LazyLock::new(BulkheadRegistry::new);

// ----- attributes ---------------------------------------------------------------------------

/// `#[retry]` alone.
#[retry(name = "attr", registry = RETRIES)]
pub async fn attr_retry() -> Result<u64, BodyError> {
    count()
}

/// `#[circuit_breaker]` alone.
#[circuit_breaker(name = "attr", registry = BREAKERS)]
pub async fn attr_circuit_breaker() -> Result<u64, BodyError> {
    count()
}

/// `#[rate_limiter]` alone.
#[rate_limiter(name = "attr", registry = LIMITERS)]
pub async fn attr_rate_limiter() -> Result<u64, BodyError> {
    count()
}

/// `#[time_limiter]` alone.
#[time_limiter(name = "attr", registry = TIME_LIMITERS)]
pub async fn attr_time_limiter() -> Result<u64, BodyError> {
    count()
}

/// `#[bulkhead]` alone.
#[bulkhead(name = "attr", registry = BULKHEADS)]
pub async fn attr_bulkhead() -> Result<u64, BodyError> {
    count()
}

/// Four attributes: `Retry(CircuitBreaker(RateLimiter(Bulkhead(fn))))`.
#[retry(name = "attr-4", registry = RETRIES)]
#[circuit_breaker(name = "attr-4", registry = BREAKERS)]
#[rate_limiter(name = "attr-4", registry = LIMITERS)]
#[bulkhead(name = "attr-4", registry = BULKHEADS)]
pub async fn attr_stack4() -> Result<u64, BodyError> {
    count()
}

/// Five attributes: `Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(fn)))))`.
#[retry(name = "attr-5", registry = RETRIES)]
#[circuit_breaker(name = "attr-5", registry = BREAKERS)]
#[rate_limiter(name = "attr-5", registry = LIMITERS)]
#[time_limiter(name = "attr-5", registry = TIME_LIMITERS)]
#[bulkhead(name = "attr-5", registry = BULKHEADS)]
pub async fn attr_stack5() -> Result<u64, BodyError> {
    count()
}

// ----- the core API, by hand ----------------------------------------------------------------

/// The instances of the core rows (Resilience4j's defaults, [`limiter_config`]).
pub struct Core {
    /// `Retry::call`.
    pub retry: Retry,
    /// `CircuitBreaker::call`.
    pub breaker: CircuitBreaker,
    /// `RateLimiter::call`.
    pub limiter: RateLimiter,
    /// `TimeLimiter::call`.
    pub time_limiter: TimeLimiter,
    /// `Bulkhead::call`.
    pub bulkhead: Bulkhead,
}

impl Core {
    /// Fresh instances named `name`.
    pub fn new(name: &str) -> Self {
        Core {
            retry: Retry::new(name, Default::default()),
            breaker: CircuitBreaker::new(name, Default::default()),
            limiter: RateLimiter::new(name, limiter_config()),
            time_limiter: TimeLimiter::new(name, Default::default()),
            bulkhead: Bulkhead::new(name, Default::default()),
        }
    }

    /// `Retry::call` around the body.
    pub async fn retry(&self) -> Result<u64, BodyError> {
        self.retry.call(body).await.map_err(from_retry)
    }

    /// `CircuitBreaker::call` around the body.
    pub async fn circuit_breaker(&self) -> Result<u64, BodyError> {
        self.breaker.call(body()).await.map_err(from_breaker)
    }

    /// `RateLimiter::call` around the body.
    pub async fn rate_limiter(&self) -> Result<u64, BodyError> {
        self.limiter.call(body()).await.map_err(from_limiter)
    }

    /// `TimeLimiter::call` around the body.
    pub async fn time_limiter(&self) -> Result<u64, BodyError> {
        self.time_limiter.call(body()).await.map_err(from_time)
    }

    /// `Bulkhead::call` around the body.
    pub async fn bulkhead(&self) -> Result<u64, BodyError> {
        self.bulkhead.call(body()).await.map_err(from_bulkhead)
    }

    /// `Retry(CircuitBreaker(RateLimiter(Bulkhead(fn))))` nested by hand.
    pub async fn stack4(&self) -> Result<u64, BodyError> {
        self.retry
            .call(|| async {
                self.breaker
                    .call(async {
                        self.limiter
                            .call(async { self.bulkhead.call(body()).await.map_err(from_bulkhead) })
                            .await
                            .map_err(from_limiter)
                    })
                    .await
                    .map_err(from_breaker)
            })
            .await
            .map_err(from_retry)
    }

    /// `Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(fn)))))` nested by hand.
    pub async fn stack5(&self) -> Result<u64, BodyError> {
        self.retry
            .call(|| async {
                self.breaker
                    .call(async {
                        self.limiter
                            .call(async {
                                self.time_limiter
                                    .call(async {
                                        self.bulkhead.call(body()).await.map_err(from_bulkhead)
                                    })
                                    .await
                                    .map_err(from_time)
                            })
                            .await
                            .map_err(from_limiter)
                    })
                    .await
                    .map_err(from_breaker)
            })
            .await
            .map_err(from_retry)
    }
}

fn from_retry(e: RetryError<BodyError>) -> BodyError {
    match e {
        RetryError::Inner(e) => e,
        _ => BodyError::Rejected,
    }
}

fn from_breaker(e: CallError<BodyError>) -> BodyError {
    match e {
        CallError::Inner(e) => e,
        CallError::NotPermitted(n) => n.into(),
    }
}

fn from_limiter(e: RateLimiterError<BodyError>) -> BodyError {
    match e {
        RateLimiterError::Inner(e) => e,
        RateLimiterError::NotPermitted(n) => n.into(),
    }
}

fn from_time(e: TimeLimiterError<BodyError>) -> BodyError {
    match e {
        TimeLimiterError::Inner(e) => e,
        TimeLimiterError::Timeout(t) => t.into(),
    }
}

fn from_bulkhead(e: BulkheadError<BodyError>) -> BodyError {
    match e {
        BulkheadError::Inner(e) => e,
        BulkheadError::Full(f) => f.into(),
    }
}

// ----- tower ------------------------------------------------------------------------------

/// The body as a service: `u64` requests, the counter as the response.
pub fn service() -> impl tower::Service<
    u64,
    Response = u64,
    Error = BodyError,
    Future = Ready<Result<u64, BodyError>>,
> + Clone
       + Send
       + 'static {
    tower::service_fn(|_req: u64| body())
}

/// The tower layers' registries, one per module, as an application builds them.
pub struct TowerRegistries {
    /// Circuit breakers.
    pub breakers: Registry,
    /// Retries.
    pub retries: RetryRegistry,
    /// Rate limiters ([`limiter_config`]).
    pub limiters: RateLimiterRegistry,
    /// Time limiters.
    pub time_limiters: TimeLimiterRegistry,
    /// Bulkheads.
    pub bulkheads: BulkheadRegistry,
}

impl Default for TowerRegistries {
    fn default() -> Self {
        TowerRegistries {
            breakers: Registry::new(),
            retries: RetryRegistry::new(),
            limiters: RateLimiterRegistry::with_default_config(limiter_config()),
            time_limiters: TimeLimiterRegistry::new(),
            bulkheads: BulkheadRegistry::new(),
        }
    }
}

/// A service's ready + call, polled once each (every future here is ready at once).
#[inline]
pub fn oneshot<S: tower::Service<u64>>(svc: &mut S) -> Result<S::Response, S::Error> {
    use tower::ServiceExt;
    let svc = crate::poll_once(svc.ready())?;
    crate::poll_once(svc.call(black_box(1)))
}

/// The tower stacks of the rows, each a boxed-free `ServiceBuilder` stack.
impl TowerRegistries {
    /// `RetryLayer` alone.
    pub fn retry(&self) -> impl tower::Service<u64, Response = u64, Error = BoxError> {
        tower::ServiceBuilder::new()
            .layer(RetryLayer::new(&self.retries, "tower"))
            .service(service())
    }

    /// `CircuitBreakerLayer` alone (classified by the config, as `CircuitBreaker::call`).
    pub fn circuit_breaker(&self) -> impl tower::Service<u64, Response = u64, Error = BoxError> {
        tower::ServiceBuilder::new()
            .layer(CircuitBreakerLayer::new(&self.breakers, "tower").classifier(ByConfig))
            .service(service())
    }

    /// `RateLimiterLayer` alone.
    pub fn rate_limiter(&self) -> impl tower::Service<u64, Response = u64, Error = BoxError> {
        tower::ServiceBuilder::new()
            .layer(RateLimiterLayer::new(&self.limiters, "tower"))
            .service(service())
    }

    /// `TimeLimiterLayer` alone.
    pub fn time_limiter(&self) -> impl tower::Service<u64, Response = u64, Error = BoxError> {
        tower::ServiceBuilder::new()
            .layer(TimeLimiterLayer::new(&self.time_limiters, "tower"))
            .service(service())
    }

    /// `BulkheadLayer` alone.
    pub fn bulkhead(&self) -> impl tower::Service<u64, Response = u64, Error = BoxError> {
        tower::ServiceBuilder::new()
            .layer(BulkheadLayer::new(&self.bulkheads, "tower"))
            .service(service())
    }

    /// Retry, circuit breaker, rate limiter, bulkhead (outermost first).
    pub fn stack4(&self) -> impl tower::Service<u64, Response = u64, Error = BoxError> {
        tower::ServiceBuilder::new()
            .layer(RetryLayer::new(&self.retries, "tower-4"))
            .layer(CircuitBreakerLayer::new(&self.breakers, "tower-4").classifier(ByConfig))
            .layer(RateLimiterLayer::new(&self.limiters, "tower-4"))
            .layer(BulkheadLayer::new(&self.bulkheads, "tower-4"))
            .service(service())
    }

    /// Retry, circuit breaker, rate limiter, time limiter, bulkhead (outermost first).
    pub fn stack5(&self) -> impl tower::Service<u64, Response = u64, Error = BoxError> {
        tower::ServiceBuilder::new()
            .layer(RetryLayer::new(&self.retries, "tower-5"))
            .layer(CircuitBreakerLayer::new(&self.breakers, "tower-5").classifier(ByConfig))
            .layer(RateLimiterLayer::new(&self.limiters, "tower-5"))
            .layer(TimeLimiterLayer::new(&self.time_limiters, "tower-5"))
            .layer(BulkheadLayer::new(&self.bulkheads, "tower-5"))
            .service(service())
    }
}
