//! What every layered service shares: the boxed future, readiness, the span.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tower_service::Service;
use tracing::Instrument;

/// The future of every layered service.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Takes the service that `poll_ready` made ready, leaving a clone in its place (tower's
/// rule for services that call their inner service from the response future).
pub(crate) fn take_ready<S: Clone>(inner: &mut S) -> S {
    let clone = inner.clone();
    std::mem::replace(inner, clone)
}

/// Waits until `svc` is ready.
pub(crate) async fn ready<S: Service<Req>, Req>(svc: &mut S) -> Result<(), S::Error> {
    std::future::poll_fn(|cx: &mut Context<'_>| svc.poll_ready(cx)).await
}

/// Boxes `fut`, in a span named `what` with the instance's `name` when `span` is set.
pub(crate) fn boxed<T, F>(fut: F, span: bool, what: &'static str, name: &str) -> BoxFuture<T>
where
    F: Future<Output = T> + Send + 'static,
{
    if span {
        let span = match what {
            "circuit_breaker" => tracing::info_span!("circuit_breaker", name),
            "retry" => tracing::info_span!("retry", name),
            "time_limiter" => tracing::info_span!("time_limiter", name),
            "bulkhead" => tracing::info_span!("bulkhead", name),
            _ => tracing::info_span!("rate_limiter", name),
        };
        Box::pin(fut.instrument(span))
    } else {
        Box::pin(fut)
    }
}

/// `poll_ready` of a layered service: the inner service's, its error mapped.
pub(crate) fn poll_inner<S: Service<Req>, Req, E>(
    inner: &mut S,
    cx: &mut Context<'_>,
    map: impl FnOnce(S::Error) -> E,
) -> Poll<Result<(), E>> {
    inner.poll_ready(cx).map_err(map)
}
