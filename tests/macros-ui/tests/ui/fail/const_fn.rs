use resilience4rs::circuit_breaker;

pub struct PayError;

#[circuit_breaker(name = "payment")]
const fn limit() -> Result<u64, PayError> {
    Ok(100)
}

fn main() {}
