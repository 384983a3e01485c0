use resilience4rs::{bulkhead, StackError};

#[derive(Debug)]
pub struct PayError;

impl std::fmt::Display for PayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("declined")
    }
}

#[bulkhead(name = "payment", type = "POOL", fallback = "cached")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

async fn cached(amount: u64, _e: StackError<PayError>) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
