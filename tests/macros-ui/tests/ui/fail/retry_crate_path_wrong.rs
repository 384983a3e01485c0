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

mod framework {}

// `crate = ...` is the path the generated code uses: here it leads nowhere (issue #26).
#[retry(name = "payment", crate = "crate::framework::resilience")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
