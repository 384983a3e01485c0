use resilience4rs::{circuit_breaker, CallNotPermitted};

pub struct PayError;
impl From<CallNotPermitted> for PayError {
    fn from(_: CallNotPermitted) -> Self {
        PayError
    }
}

#[circuit_breaker(nmae = "payment")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
