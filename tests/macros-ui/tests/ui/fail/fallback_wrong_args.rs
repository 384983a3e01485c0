use resilience4rs::{circuit_breaker, CallError};

pub struct PayError;

#[circuit_breaker(name = "payment", fallback = "cached")]
async fn charge(amount: u64, currency: String) -> Result<u64, PayError> {
    let _ = currency;
    Ok(amount)
}

// Missing the `currency: String` argument.
async fn cached(amount: u64, _error: CallError<PayError>) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
