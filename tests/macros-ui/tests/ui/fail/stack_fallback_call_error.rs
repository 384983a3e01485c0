use resilience4rs::{circuit_breaker, time_limiter, CallError};

#[derive(Debug)]
pub struct PayError;

impl std::fmt::Display for PayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("declined")
    }
}

impl From<resilience4rs::timelimiter::Timeout> for PayError {
    fn from(_: resilience4rs::timelimiter::Timeout) -> Self {
        PayError
    }
}

// Stacked, the breaker may sit outside the time limiter (the nesting is the config's), so its
// fallback must take `StackError<PayError>`, which can carry a `Timeout`; `CallError` cannot.
#[circuit_breaker(name = "payment", fallback = "cached")]
#[time_limiter(name = "payment")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

async fn cached(amount: u64, _error: CallError<PayError>) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
