use resilience4rs::{circuit_breaker, retry, StackError};

#[derive(Debug)]
pub struct PayError;

impl std::fmt::Display for PayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("declined")
    }
}

impl From<resilience4rs::retry::MaxRetriesExceeded> for PayError {
    fn from(_: resilience4rs::retry::MaxRetriesExceeded) -> Self {
        PayError
    }
}

pub struct Payments;

impl Payments {
    // `cached` is a free fn: on a method, `fallback = "cached"` names `Self::cached`
    // (issue #26: rustc's generic E0599).
    #[retry(name = "payment")]
    #[circuit_breaker(name = "payment", fallback = "cached")]
    async fn charge(&self, amount: u64) -> Result<u64, PayError> {
        Ok(amount)
    }
}

async fn cached(amount: u64, _error: StackError<PayError>) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
