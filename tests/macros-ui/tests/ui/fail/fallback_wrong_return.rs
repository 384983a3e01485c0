use resilience4rs::{circuit_breaker, CallError};

pub struct PayError;

#[circuit_breaker(name = "payment", fallback = "cached")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

async fn cached(_amount: u64, _error: CallError<PayError>) -> Result<String, PayError> {
    Ok("cached".to_string())
}

fn main() {}
