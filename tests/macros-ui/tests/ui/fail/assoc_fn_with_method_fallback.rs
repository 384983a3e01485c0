use resilience4rs::{circuit_breaker, CallError};

pub struct PayError;

pub struct Payments;

impl Payments {
    // `charge` has no `self`, so `fallback = "cached"` names a fn in scope, not `Self::cached`.
    #[circuit_breaker(name = "payment", fallback = "cached")]
    async fn charge(amount: u64) -> Result<u64, PayError> {
        Ok(amount)
    }

    async fn cached(amount: u64, _error: CallError<PayError>) -> Result<u64, PayError> {
        Ok(amount)
    }
}

fn main() {}
