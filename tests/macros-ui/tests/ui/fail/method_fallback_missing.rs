use resilience4rs::circuit_breaker;

pub struct PayError;

pub struct Payments;

impl Payments {
    #[circuit_breaker(name = "payment", fallback = "cached")]
    async fn charge(&self, amount: u64) -> Result<u64, PayError> {
        Ok(amount)
    }
}

fn main() {}
