use resilience4rs::circuit_breaker;

pub struct PayError;

#[circuit_breaker(name = "payment", fallback = "cached")]
async fn charge(amount: u64, currency: String) -> Result<u64, PayError> {
    let _ = currency;
    Ok(amount)
}

// Not async, missing an argument, wrong error and wrong return type: one error says it all.
fn cached(amount: u64, _error: PayError) -> u64 {
    amount
}

fn main() {}
