use resilience4rs::{circuit_breaker, CallNotPermitted};

pub struct PayError;
impl From<CallNotPermitted> for PayError {
    fn from(_: CallNotPermitted) -> Self {
        PayError
    }
}

mod framework {}

// `crate = ...` is the path the generated code uses: here it leads nowhere.
#[circuit_breaker(name = "payment", crate = "crate::framework::resilience")]
async fn charge(amount: u64) -> Result<u64, PayError> {
    Ok(amount)
}

fn main() {}
