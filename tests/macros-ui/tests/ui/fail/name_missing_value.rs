use resilience4rs::circuit_breaker;

pub struct PayError;

#[circuit_breaker(name =)]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
