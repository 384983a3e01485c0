use resilience4rs::circuit_breaker;

pub struct PayError;

const CACHED: u64 = 0;

#[circuit_breaker(name = "payment", fallback = "CACHED")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
