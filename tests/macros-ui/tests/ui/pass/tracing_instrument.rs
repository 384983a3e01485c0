//! Stacked with `#[tracing::instrument]`, in both orders, with a fallback.
use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq, Clone)]
pub struct SvcError;

impl std::fmt::Display for SvcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("service error")
    }
}

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

#[tracing::instrument]
#[circuit_breaker(name = "ui-tracing", fallback = "outer_fallback")]
async fn instrumented_outside(id: u32) -> Result<u32, SvcError> {
    if id == 0 {
        return Err(SvcError);
    }
    Ok(id)
}

async fn outer_fallback(_id: u32, _e: CallError<SvcError>) -> Result<u32, SvcError> {
    Ok(100)
}

#[circuit_breaker(name = "ui-tracing")]
#[tracing::instrument(skip(secret), err)]
async fn instrumented_inside(id: u32, secret: String) -> Result<u32, SvcError> {
    let _ = secret;
    if id == 0 {
        return Err(SvcError);
    }
    Ok(id + 1)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(instrumented_outside(2).await, Ok(2));
        assert_eq!(instrumented_outside(0).await, Ok(100));
        assert_eq!(instrumented_inside(2, "s".into()).await, Ok(3));
        assert_eq!(instrumented_inside(0, "s".into()).await, Err(SvcError));
    });
    let m = resilience4rs::global().circuit_breaker("ui-tracing").metrics();
    assert_eq!((m.number_of_successful_calls, m.number_of_failed_calls), (2, 2));
}
