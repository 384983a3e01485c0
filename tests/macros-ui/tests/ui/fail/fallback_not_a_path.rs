use resilience4rs::circuit_breaker;

pub struct PayError;

#[circuit_breaker(name = "payment", fallback = "cached()")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
