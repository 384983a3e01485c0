use resilience4rs::{circuit_breaker, CallError};

pub struct PayError;

pub struct Order {
    pub amount: u64,
}

#[circuit_breaker(name = "payment", fallback = "cached")]
async fn charge(order: Order) -> Result<u64, PayError> {
    Ok(order.amount)
}

async fn cached(order: Order, _error: CallError<PayError>) -> Result<u64, PayError> {
    Ok(order.amount)
}

fn main() {}
