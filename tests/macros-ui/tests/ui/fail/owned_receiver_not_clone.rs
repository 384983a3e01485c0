use resilience4rs::{circuit_breaker, CallError};

pub struct PayError;

// Not `Clone`: the fallback of a method taking `self` needs its own copy.
pub struct Payments {
    pub total: u64,
}

impl Payments {
    #[circuit_breaker(name = "payment", fallback = "cached")]
    async fn charge(self, amount: u64) -> Result<u64, PayError> {
        Ok(self.total + amount)
    }

    async fn cached(self, amount: u64, _error: CallError<PayError>) -> Result<u64, PayError> {
        Ok(self.total + amount)
    }
}

fn main() {}
