use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

pub struct PayError;
impl From<CallNotPermitted> for PayError {
    fn from(_: CallNotPermitted) -> Self {
        PayError
    }
}

// Resilience4j spells it `fallbackMethod`; here it is `fallback`.
#[circuit_breaker(name = "payment", fallbackMethod = "cached")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

async fn cached(amount: u64, _error: CallError<PayError>) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
