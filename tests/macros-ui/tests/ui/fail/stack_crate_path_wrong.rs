use resilience4rs::{circuit_breaker, retry};

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

impl From<resilience4rs::CallNotPermitted> for PayError {
    fn from(_: resilience4rs::CallNotPermitted) -> Self {
        PayError
    }
}

mod framework {}

// The stack's `crate = ...` leads nowhere (issue #26): one error, on the path.
#[retry(name = "payment")]
#[circuit_breaker(name = "payment", crate = "crate::framework::resilience")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
