use resilience4rs::{circuit_breaker, CallError};

pub struct PayError;
pub struct OtherError;

#[circuit_breaker(name = "payment", fallback = "cached")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

async fn cached(amount: u64, _error: CallError<OtherError>) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
