use resilience4rs::{circuit_breaker, CallError};

pub struct PayError;

#[circuit_breaker(name = "payment", fallback = "cahced")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

async fn cached(amount: u64, _error: CallError<PayError>) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
