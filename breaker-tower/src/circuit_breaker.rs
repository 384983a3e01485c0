//! [`CircuitBreakerLayer`]: every request through a circuit breaker.

use std::marker::PhantomData;
use std::task::{Context, Poll};

use breaker_core::{CircuitBreaker, Registry};
use tower_layer::Layer;
use tower_service::Service;

use crate::classify::{Classify, HttpStatus};
use crate::policy::{Errors, Policy, ServiceUnavailable};
use crate::service::{boxed, poll_inner, take_ready, BoxFuture};

/// Puts a circuit breaker in front of a service: a request the breaker rejects never reaches
/// the service; every response is classified ([`HttpStatus`] by default: 5xx a failure, 4xx
/// ignored) and recorded.
///
/// The permission is taken when the response future is first polled, not in `poll_ready`,
/// so a request that is dropped unsent holds nothing; a response future dropped mid-call
/// (a timeout around it) records nothing and hands a HALF_OPEN trial permission back.
///
/// ```
/// use breaker_core::Registry;
/// use breaker_tower::CircuitBreakerLayer;
/// use tower::ServiceBuilder;
///
/// let registry = Registry::new();
/// let svc = ServiceBuilder::new()
///     .layer(CircuitBreakerLayer::new(&registry, "inventory").service_unavailable())
///     .service_fn(|_req: http::Request<()>| async {
///         Ok::<_, std::convert::Infallible>(http::Response::new(String::new()))
///     });
/// # let _ = svc;
/// ```
pub struct CircuitBreakerLayer<C = HttpStatus, P = Errors> {
    breaker: CircuitBreaker,
    classifier: C,
    span: bool,
    policy: PhantomData<fn() -> P>,
}

impl<C: Clone, P> Clone for CircuitBreakerLayer<C, P> {
    fn clone(&self) -> Self {
        CircuitBreakerLayer {
            breaker: self.breaker.clone(),
            classifier: self.classifier.clone(),
            span: self.span,
            policy: PhantomData,
        }
    }
}

impl<C, P> std::fmt::Debug for CircuitBreakerLayer<C, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CircuitBreakerLayer")
            .field("breaker", &self.breaker)
            .finish_non_exhaustive()
    }
}

impl CircuitBreakerLayer {
    /// The breaker named `name` of `registry` (created from its config if new), HTTP
    /// classification, refusals as errors.
    pub fn new(registry: &Registry, name: &str) -> Self {
        Self::from_breaker(registry.circuit_breaker(name))
    }

    /// A layer around `breaker`.
    pub fn from_breaker(breaker: CircuitBreaker) -> Self {
        CircuitBreakerLayer {
            breaker,
            classifier: HttpStatus,
            span: false,
            policy: PhantomData,
        }
    }
}

impl<C, P> CircuitBreakerLayer<C, P> {
    /// Classifies results with `classifier` ([`ByConfig`](crate::ByConfig),
    /// [`ClassifyFn`](crate::ClassifyFn), or your own [`Classify`]).
    pub fn classifier<C2>(self, classifier: C2) -> CircuitBreakerLayer<C2, P> {
        CircuitBreakerLayer {
            breaker: self.breaker,
            classifier,
            span: self.span,
            policy: PhantomData,
        }
    }

    /// Answers a rejected request `503 Service Unavailable` with `Retry-After` instead of an
    /// error (HTTP services).
    pub fn service_unavailable(self) -> CircuitBreakerLayer<C, ServiceUnavailable> {
        CircuitBreakerLayer {
            breaker: self.breaker,
            classifier: self.classifier,
            span: self.span,
            policy: PhantomData,
        }
    }

    /// Runs every call in a `circuit_breaker` span (field `name`).
    pub fn trace_calls(mut self) -> Self {
        self.span = true;
        self
    }
}

impl<S, C: Clone, P> Layer<S> for CircuitBreakerLayer<C, P> {
    type Service = CircuitBreakerService<S, C, P>;

    fn layer(&self, inner: S) -> Self::Service {
        CircuitBreakerService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`CircuitBreakerLayer`] makes.
pub struct CircuitBreakerService<S, C = HttpStatus, P = Errors> {
    inner: S,
    layer: CircuitBreakerLayer<C, P>,
}

impl<S: Clone, C: Clone, P> Clone for CircuitBreakerService<S, C, P> {
    fn clone(&self) -> Self {
        CircuitBreakerService {
            inner: self.inner.clone(),
            layer: self.layer.clone(),
        }
    }
}

impl<S, C, P> std::fmt::Debug for CircuitBreakerService<S, C, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CircuitBreakerService")
            .field("breaker", &self.layer.breaker)
            .finish_non_exhaustive()
    }
}

impl<S, C, P, Req> Service<Req> for CircuitBreakerService<S, C, P>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
    Req: Send + 'static,
    C: Classify<S::Response, S::Error>,
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
        let breaker = self.layer.breaker.clone();
        let classifier = self.layer.classifier.clone();
        let fut = async move {
            let permit = match breaker.try_acquire_permission() {
                Ok(p) => p,
                Err(rejected) => return P::refused(rejected),
            };
            let result = inner.call(req).await;
            // The error's message goes into the event (`errorMessage`) when someone subscribes.
            permit.record_result(classifier.classify(&breaker, &result), &result);
            P::inner(result)
        };
        boxed(
            fut,
            self.layer.span,
            "circuit_breaker",
            self.layer.breaker.name(),
        )
    }
}
