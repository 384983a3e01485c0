use resilience4rs::circuit_breaker;

#[derive(Debug)]
pub enum PayError {
    Declined,
}

// No fallback, and `PayError` has no `From<CallNotPermitted>`: a rejected call has nowhere to go.
#[circuit_breaker(name = "payment")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    if amount == 0 {
        return Err(PayError::Declined);
    }
    Ok(amount)
}

fn main() {}
