use resilience4rs::{retry, StackError};

#[derive(Debug)]
pub struct PayError;

impl std::fmt::Display for PayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("declined")
    }
}

pub struct Order {
    pub amount: u64,
}

#[retry(name = "payment", fallback = "cached")]
async fn charge(order: Order) -> Result<u64, PayError> {
    Ok(order.amount)
}

async fn cached(_order: Order, _e: StackError<PayError>) -> Result<u64, PayError> {
    Ok(0)
}

fn main() {}
