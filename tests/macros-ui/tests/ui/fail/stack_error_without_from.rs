use resilience4rs::time_limiter;

#[derive(Debug)]
pub struct PayError;

impl std::fmt::Display for PayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("declined")
    }
}

// No fallback, and `PayError` has no `From<Timeout>`: a timed-out call has nowhere to go.
#[time_limiter(name = "payment")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
