//! The layers of the other modules: [`RetryLayer`], [`TimeLimiterLayer`], [`BulkheadLayer`],
//! [`ThreadPoolBulkheadLayer`] and [`RateLimiterLayer`], each built from its registry and a
//! name. Permits are taken when the response future is first polled, never in
//! `poll_ready`.

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::task::{Context, Poll};

use breaker_core::bulkhead::{
    Bulkhead, BulkheadError, BulkheadRegistry, ThreadPoolBulkhead, ThreadPoolBulkheadRegistry,
};
use breaker_core::ratelimiter::{RateLimiter, RateLimiterError, RateLimiterRegistry};
use breaker_core::retry::{Retry, RetryError, RetryRegistry};
use breaker_core::timelimiter::{TimeLimiter, TimeLimiterError, TimeLimiterRegistry};
use tower_layer::Layer;
use tower_service::Service;

use crate::policy::{BoxError, Errors, Policy, ServiceUnavailable};
use crate::service::{boxed, poll_inner, ready, take_ready, BoxFuture};

/// A layer that runs every request through one instance `G` of a module; `P` says how a
/// refusal is answered ([`Errors`] or [`ServiceUnavailable`]).
pub struct ModuleLayer<G, P = Errors> {
    instance: G,
    span: bool,
    policy: PhantomData<fn() -> P>,
}

impl<G: Clone, P> Clone for ModuleLayer<G, P> {
    fn clone(&self) -> Self {
        ModuleLayer {
            instance: self.instance.clone(),
            span: self.span,
            policy: PhantomData,
        }
    }
}

impl<G: fmt::Debug, P> fmt::Debug for ModuleLayer<G, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModuleLayer")
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

impl<G, P> ModuleLayer<G, P> {
    /// A layer around `instance`.
    pub fn from_instance(instance: G) -> Self {
        ModuleLayer {
            instance,
            span: false,
            policy: PhantomData,
        }
    }

    /// Runs every call in a span named after the module (field `name`).
    pub fn trace_calls(mut self) -> Self {
        self.span = true;
        self
    }

    /// Answers a refused request `503 Service Unavailable` (a timeout `504 Gateway
    /// Timeout`) instead of an error (HTTP services).
    pub fn service_unavailable(self) -> ModuleLayer<G, ServiceUnavailable> {
        ModuleLayer {
            instance: self.instance,
            span: self.span,
            policy: PhantomData,
        }
    }
}

impl<S, G: Clone, P> Layer<S> for ModuleLayer<G, P> {
    type Service = ModuleService<S, G, P>;

    fn layer(&self, inner: S) -> Self::Service {
        ModuleService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service a [`ModuleLayer`] makes.
pub struct ModuleService<S, G, P = Errors> {
    inner: S,
    layer: ModuleLayer<G, P>,
}

impl<S: Clone, G: Clone, P> Clone for ModuleService<S, G, P> {
    fn clone(&self) -> Self {
        ModuleService {
            inner: self.inner.clone(),
            layer: self.layer.clone(),
        }
    }
}

impl<S, G: fmt::Debug, P> fmt::Debug for ModuleService<S, G, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModuleService")
            .field("instance", &self.layer.instance)
            .finish_non_exhaustive()
    }
}

/// Retries a request (cloned for each attempt, on a clone of the service made ready again)
/// as the retry's config says: errors by its exception settings (every error by default),
/// responses by its `retryOnResult` predicate. Errors are tower's [`BoxError`]: the last
/// attempt's error, or `MaxRetriesExceeded`.
pub type RetryLayer = ModuleLayer<Retry>;
/// Times a request out after the time limiter's `timeoutDuration` (dropping it).
pub type TimeLimiterLayer<P = Errors> = ModuleLayer<TimeLimiter, P>;
/// At most `maxConcurrentCalls` requests at once (waiting up to `maxWaitDuration`).
pub type BulkheadLayer<P = Errors> = ModuleLayer<Bulkhead, P>;
/// At most `maxThreadPoolSize` requests running and `queueCapacity` waiting.
pub type ThreadPoolBulkheadLayer<P = Errors> = ModuleLayer<ThreadPoolBulkhead, P>;
/// At most `limitForPeriod` requests per `limitRefreshPeriod` (waiting up to
/// `timeoutDuration`).
pub type RateLimiterLayer<P = Errors> = ModuleLayer<RateLimiter, P>;

impl ModuleLayer<Retry> {
    /// The retry named `name` of `registry`.
    pub fn new(registry: &RetryRegistry, name: &str) -> Self {
        Self::from_instance(registry.retry(name))
    }
}
impl ModuleLayer<TimeLimiter> {
    /// The time limiter named `name` of `registry`.
    pub fn new(registry: &TimeLimiterRegistry, name: &str) -> Self {
        Self::from_instance(registry.time_limiter(name))
    }
}
impl ModuleLayer<Bulkhead> {
    /// The bulkhead named `name` of `registry`.
    pub fn new(registry: &BulkheadRegistry, name: &str) -> Self {
        Self::from_instance(registry.bulkhead(name))
    }
}
impl ModuleLayer<ThreadPoolBulkhead> {
    /// The thread-pool bulkhead named `name` of `registry`.
    pub fn new(registry: &ThreadPoolBulkheadRegistry, name: &str) -> Self {
        Self::from_instance(registry.bulkhead(name))
    }
}
impl ModuleLayer<RateLimiter> {
    /// The rate limiter named `name` of `registry`.
    pub fn new(registry: &RateLimiterRegistry, name: &str) -> Self {
        Self::from_instance(registry.rate_limiter(name))
    }
}

impl<S, Req> Service<Req> for ModuleService<S, Retry, Errors>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Any + Send,
    S::Error: Into<BoxError> + fmt::Display + Any + Send,
    Req: Clone + Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = BoxFuture<Result<S::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        poll_inner(&mut self.inner, cx, Into::into)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let first = take_ready(&mut self.inner);
        let proto = self.inner.clone();
        let retry = self.layer.instance.clone();
        let fut = async move {
            let mut first = Some(first);
            let r = retry
                .call(move || {
                    let mut svc = first.take().unwrap_or_else(|| proto.clone());
                    let req = req.clone();
                    async move {
                        ready(&mut svc).await?;
                        svc.call(req).await
                    }
                })
                .await;
            r.map_err(|e| match e {
                RetryError::Inner(e) => e.into(),
                RetryError::MaxRetriesExceeded(m) => Box::new(m) as BoxError,
                RetryError::WaitInterval(w) => Box::new(w) as BoxError,
            })
        };
        boxed(fut, self.layer.span, "retry", self.layer.instance.name())
    }
}

impl<S, P, Req> Service<Req> for ModuleService<S, TimeLimiter, P>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send + 'static,
    S::Error: fmt::Display + Any + Send,
    Req: Send + 'static,
    P: Policy<S::Response, S::Error>,
{
    type Response = S::Response;
    type Error = P::Error;
    type Future = BoxFuture<Result<S::Response, P::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), P::Error>> {
        poll_inner(&mut self.inner, cx, P::error)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let mut inner = take_ready(&mut self.inner);
        let limiter = self.layer.instance.clone();
        let fut = async move {
            match limiter.call(async move { inner.call(req).await }).await {
                Ok(r) => Ok(r),
                Err(TimeLimiterError::Timeout(t)) => P::refused(t),
                Err(TimeLimiterError::Inner(e)) => P::inner(Err(e)),
            }
        };
        boxed(
            fut,
            self.layer.span,
            "time_limiter",
            self.layer.instance.name(),
        )
    }
}

impl<S, P, Req> Service<Req> for ModuleService<S, Bulkhead, P>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
    Req: Send + 'static,
    P: Policy<S::Response, S::Error>,
{
    type Response = S::Response;
    type Error = P::Error;
    type Future = BoxFuture<Result<S::Response, P::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), P::Error>> {
        poll_inner(&mut self.inner, cx, P::error)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let mut inner = take_ready(&mut self.inner);
        let bulkhead = self.layer.instance.clone();
        let fut = async move {
            match bulkhead.call(async move { inner.call(req).await }).await {
                Ok(r) => Ok(r),
                Err(BulkheadError::Full(f)) => P::refused(f),
                Err(BulkheadError::Inner(e)) => P::inner(Err(e)),
            }
        };
        boxed(fut, self.layer.span, "bulkhead", self.layer.instance.name())
    }
}

impl<S, P, Req> Service<Req> for ModuleService<S, ThreadPoolBulkhead, P>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
    Req: Send + 'static,
    P: Policy<S::Response, S::Error>,
{
    type Response = S::Response;
    type Error = P::Error;
    type Future = BoxFuture<Result<S::Response, P::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), P::Error>> {
        poll_inner(&mut self.inner, cx, P::error)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let mut inner = take_ready(&mut self.inner);
        let pool = self.layer.instance.clone();
        let fut = async move {
            match pool.call(async move { inner.call(req).await }).await {
                Ok(r) => Ok(r),
                Err(BulkheadError::Full(f)) => P::refused(f),
                Err(BulkheadError::Inner(e)) => P::inner(Err(e)),
            }
        };
        boxed(fut, self.layer.span, "bulkhead", self.layer.instance.name())
    }
}

impl<S, P, Req> Service<Req> for ModuleService<S, RateLimiter, P>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Any + Send,
    S::Error: Any + Send,
    Req: Send + 'static,
    P: Policy<S::Response, S::Error>,
{
    type Response = S::Response;
    type Error = P::Error;
    type Future = BoxFuture<Result<S::Response, P::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), P::Error>> {
        poll_inner(&mut self.inner, cx, P::error)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let mut inner = take_ready(&mut self.inner);
        let limiter = self.layer.instance.clone();
        let fut = async move {
            match limiter.call(async move { inner.call(req).await }).await {
                Ok(r) => Ok(r),
                Err(RateLimiterError::NotPermitted(n)) => P::refused(n),
                Err(RateLimiterError::Inner(e)) => P::inner(Err(e)),
            }
        };
        boxed(
            fut,
            self.layer.span,
            "rate_limiter",
            self.layer.instance.name(),
        )
    }
}
