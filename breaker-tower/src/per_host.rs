//! [`PerHostCircuitBreakerLayer`]: one circuit breaker per downstream host (issue #29), keyed
//! by the request's authority, so one failing host opens its own circuit and leaves the
//! others' traffic alone (Envoy's per-host outlier detection, for a client that calls many
//! hosts through one configured breaker).

use std::marker::PhantomData;
use std::task::{Context, Poll};

use breaker_core::{CircuitBreaker, KeyLimits, Keyed, Registry};
use tower_layer::Layer;
use tower_service::Service;

use crate::classify::{Classify, HttpStatus};
use crate::policy::{Errors, Policy};
use crate::service::{boxed, poll_inner, take_ready, BoxFuture};

/// The key of a request: its URI's authority (`host:port`), else its `Host` header, else
/// `unknown`.
pub fn request_authority<B>(req: &http::Request<B>) -> String {
    if let Some(a) = req.uri().authority() {
        return a.as_str().to_ascii_lowercase();
    }
    req.headers()
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .map_or_else(|| "unknown".to_string(), str::to_ascii_lowercase)
}

/// Puts a circuit breaker per downstream host in front of an HTTP client service: the
/// breaker `name` of the registry, keyed by [`request_authority`] (instances named
/// `<name>/<host:port>`, each with `name`'s config; at most `KeyLimits::max_keys` hosts,
/// idle ones dropped first). Otherwise as [`CircuitBreakerLayer`](crate::CircuitBreakerLayer):
/// responses classified by [`HttpStatus`] by default, refusals as errors.
///
/// ```
/// use breaker_core::Registry;
/// use breaker_tower::PerHostCircuitBreakerLayer;
/// let layer = PerHostCircuitBreakerLayer::new(&Registry::new(), "upstreams", Default::default());
/// # let _ = layer;
/// ```
pub struct PerHostCircuitBreakerLayer<C = HttpStatus, P = Errors> {
    breakers: Keyed<CircuitBreaker>,
    classifier: C,
    policy: PhantomData<fn() -> P>,
}

impl<C: Clone, P> Clone for PerHostCircuitBreakerLayer<C, P> {
    fn clone(&self) -> Self {
        PerHostCircuitBreakerLayer {
            breakers: self.breakers.clone(),
            classifier: self.classifier.clone(),
            policy: PhantomData,
        }
    }
}

impl<C, P> std::fmt::Debug for PerHostCircuitBreakerLayer<C, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerHostCircuitBreakerLayer")
            .field("breakers", &self.breakers)
            .finish_non_exhaustive()
    }
}

impl PerHostCircuitBreakerLayer {
    /// The breaker `name` of `registry` keyed per host, under `limits`.
    pub fn new(registry: &Registry, name: &str, limits: KeyLimits) -> Self {
        Self::from_keyed(registry.keyed(name, limits))
    }

    /// A layer around `breakers` (its keys are the hosts).
    pub fn from_keyed(breakers: Keyed<CircuitBreaker>) -> Self {
        PerHostCircuitBreakerLayer {
            breakers,
            classifier: HttpStatus,
            policy: PhantomData,
        }
    }
}

impl<C, P> PerHostCircuitBreakerLayer<C, P> {
    /// The per-host breakers (to read a host's state, or list the active hosts).
    pub fn breakers(&self) -> &Keyed<CircuitBreaker> {
        &self.breakers
    }

    /// Classifies results with `classifier`.
    pub fn classifier<C2>(self, classifier: C2) -> PerHostCircuitBreakerLayer<C2, P> {
        PerHostCircuitBreakerLayer {
            breakers: self.breakers,
            classifier,
            policy: PhantomData,
        }
    }
}

impl<S, C: Clone, P> Layer<S> for PerHostCircuitBreakerLayer<C, P> {
    type Service = PerHostCircuitBreakerService<S, C, P>;

    fn layer(&self, inner: S) -> Self::Service {
        PerHostCircuitBreakerService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`PerHostCircuitBreakerLayer`] makes.
pub struct PerHostCircuitBreakerService<S, C = HttpStatus, P = Errors> {
    inner: S,
    layer: PerHostCircuitBreakerLayer<C, P>,
}

impl<S: Clone, C: Clone, P> Clone for PerHostCircuitBreakerService<S, C, P> {
    fn clone(&self) -> Self {
        PerHostCircuitBreakerService {
            inner: self.inner.clone(),
            layer: self.layer.clone(),
        }
    }
}

impl<S, C, P> std::fmt::Debug for PerHostCircuitBreakerService<S, C, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerHostCircuitBreakerService")
            .field("breakers", &self.layer.breakers)
            .finish_non_exhaustive()
    }
}

impl<S, C, P, B> Service<http::Request<B>> for PerHostCircuitBreakerService<S, C, P>
where
    S: Service<http::Request<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
    C: Classify<S::Response, S::Error>,
    P: Policy<S::Response, S::Error>,
{
    type Response = S::Response;
    type Error = P::Error;
    type Future = BoxFuture<Result<S::Response, P::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), P::Error>> {
        poll_inner(&mut self.inner, cx, P::error)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let mut inner = take_ready(&mut self.inner);
        let breaker = self.layer.breakers.get(&request_authority(&req));
        let classifier = self.layer.classifier.clone();
        let name = breaker.name().to_string();
        let fut = async move {
            let permit = match breaker.try_acquire_permission() {
                Ok(p) => p,
                Err(rejected) => return P::refused(rejected),
            };
            let result = inner.call(req).await;
            permit.record(classifier.classify(&breaker, &result));
            P::inner(result)
        };
        boxed(fut, false, "circuit_breaker", &name)
    }
}
