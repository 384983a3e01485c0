//! `#[circuit_breaker]` above `#[tokio::main]` (the order that works: attributes run from the
//! top, so the breaker wraps the async body before tokio makes it blocking), on `main` itself.
use resilience4rs::{circuit_breaker, CallNotPermitted};

#[derive(Debug)]
pub struct AppError;

impl From<CallNotPermitted> for AppError {
    fn from(_: CallNotPermitted) -> Self {
        AppError
    }
}

#[circuit_breaker(name = "ui-main")]
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), AppError> {
    tokio::task::yield_now().await;
    let before = resilience4rs::global().circuit_breaker("ui-main").metrics();
    assert_eq!(before.number_of_buffered_calls, 0, "recorded when main returns");
    Ok(())
}
