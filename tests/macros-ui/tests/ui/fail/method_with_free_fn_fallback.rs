use resilience4rs::{circuit_breaker, CallError};

pub struct PayError;

pub struct Payments;

impl Payments {
    // `cached` is a free fn: on a method, `fallback = "cached"` names `Self::cached`.
    #[circuit_breaker(name = "payment", fallback = "cached")]
    async fn charge(&self, amount: u64) -> Result<u64, PayError> {
        Ok(amount)
    }
}

async fn cached(amount: u64, _error: CallError<PayError>) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
