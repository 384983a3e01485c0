//! [`DrillLayer`]: the drill of one instance, innermost in a tower stack (issue #28). Put it
//! directly around the service that calls the dependency, so every layer outside it sees an
//! injected fault exactly as it would see the dependency's.

use std::task::{Context, Poll};

use breaker_core::drill::{rejections, DrillErrorKind, DrillRegistry, Injection, Rejection};
use tower_layer::Layer;
use tower_service::Service;

use crate::policy::BoxError;
use crate::service::{poll_inner, ready, take_ready, BoxFuture};

/// A layer applying the drill of `name` from a [`DrillRegistry`] (e.g. a `LiveConfig`'s
/// `drills()`, from `breaker.drill.instances.<name>` in the file). With no drill set, a
/// request costs one relaxed atomic load more.
///
/// Errors are tower's [`BoxError`]: an injected rejection is the layer's own rejection value
/// (`CallNotPermitted`, `Timeout`, `BulkheadFullException`, `RequestNotPermitted`, named after
/// the drilled instance), so downcasts and `.service_unavailable()` treat it as a real one; a
/// named error is the `BoxError` registered with
/// `DrillRegistry::register_error::<BoxError>(name, ..)`, else an
/// [`InjectedError`](breaker_core::drill::InjectedError).
#[derive(Clone, Debug)]
pub struct DrillLayer {
    drills: DrillRegistry,
    name: String,
}

impl DrillLayer {
    /// The drill of `name` in `drills`.
    pub fn new(drills: &DrillRegistry, name: impl Into<String>) -> Self {
        DrillLayer {
            drills: drills.clone(),
            name: name.into(),
        }
    }
}

impl<S> Layer<S> for DrillLayer {
    type Service = DrillService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        DrillService {
            inner,
            drills: self.drills.clone(),
            name: self.name.clone(),
        }
    }
}

/// The service of a [`DrillLayer`].
#[derive(Clone, Debug)]
pub struct DrillService<S> {
    inner: S,
    drills: DrillRegistry,
    name: String,
}

impl<S, Req> Service<Req> for DrillService<S>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    Req: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = BoxFuture<Result<S::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        poll_inner(&mut self.inner, cx, Into::into)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let mut svc = take_ready(&mut self.inner);
        let drills = self.drills.clone();
        let name = self.name.clone();
        Box::pin(async move {
            match drills.decide(&name) {
                Injection::Pass => {}
                Injection::Error(kind) => return Err(injected(&drills, &name, kind)),
                Injection::Delay(by) => {
                    drills.clock().sleep(by).await;
                    ready(&mut svc).await.map_err(Into::into)?;
                }
                Injection::Hang => std::future::pending::<()>().await,
            }
            svc.call(req).await.map_err(Into::into)
        })
    }
}

fn injected(drills: &DrillRegistry, name: &str, kind: DrillErrorKind) -> BoxError {
    match kind {
        DrillErrorKind::Rejection(Rejection::CallNotPermitted) => Box::new(
            rejections::call_not_permitted(name, drills.clock().now_nanos()),
        ),
        DrillErrorKind::Rejection(Rejection::Timeout) => {
            Box::new(rejections::timeout(name, std::time::Duration::ZERO))
        }
        DrillErrorKind::Rejection(Rejection::BulkheadFull) => {
            Box::new(rejections::bulkhead_full(name))
        }
        DrillErrorKind::Rejection(Rejection::RequestNotPermitted) => {
            Box::new(rejections::request_not_permitted(name))
        }
        DrillErrorKind::Named(error) => match drills.make_error::<BoxError>(&error) {
            Some(e) => e,
            None => Box::new(breaker_core::drill::InjectedError {
                drill: name.to_owned(),
                kind: DrillErrorKind::Named(error),
            }),
        },
    }
}
