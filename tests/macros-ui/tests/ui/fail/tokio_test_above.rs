use resilience4rs::{circuit_breaker, CallNotPermitted};

#[derive(Debug)]
pub struct PayError;
impl From<CallNotPermitted> for PayError {
    fn from(_: CallNotPermitted) -> Self {
        PayError
    }
}

// `#[tokio::test]` runs first and turns the fn into a blocking one: put it below.
#[tokio::test]
#[circuit_breaker(name = "payment")]
async fn charges() -> Result<(), PayError> {
    Ok(())
}

fn main() {}
