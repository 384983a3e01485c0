use resilience4rs::{circuit_breaker, CallNotPermitted};

#[derive(Debug)]
pub struct AppError;
impl From<CallNotPermitted> for AppError {
    fn from(_: CallNotPermitted) -> Self {
        AppError
    }
}

#[tokio::main]
#[circuit_breaker(name = "app")]
async fn main() -> Result<(), AppError> {
    Ok(())
}
