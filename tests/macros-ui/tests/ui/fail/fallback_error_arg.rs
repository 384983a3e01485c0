use resilience4rs::circuit_breaker;

pub struct PayError;

#[circuit_breaker(name = "payment", fallback = "cached")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

// The last argument must be `CallError<PayError>`, which also carries rejected calls.
async fn cached(amount: u64, _error: PayError) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
