use resilience4rs::{circuit_breaker, CallError};

pub struct PayError;

pub struct Payments {
    fallbacks: u32,
}

impl Payments {
    // `&self` cannot lend `&mut self` to the fallback.
    #[circuit_breaker(name = "payment", fallback = "cached")]
    async fn charge(&self, amount: u64) -> Result<u64, PayError> {
        Ok(amount)
    }

    async fn cached(&mut self, amount: u64, _error: CallError<PayError>) -> Result<u64, PayError> {
        self.fallbacks += 1;
        Ok(amount)
    }
}

fn main() {}
