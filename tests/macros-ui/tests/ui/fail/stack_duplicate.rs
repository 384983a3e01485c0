use resilience4rs::retry;

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

#[retry(name = "payment")]
#[retry(name = "payment-again")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
