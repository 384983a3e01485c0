use resilience4rs::{circuit_breaker, CallNotPermitted};

pub struct PayError;
impl From<CallNotPermitted> for PayError {
    fn from(_: CallNotPermitted) -> Self {
        PayError
    }
}

pub struct Client {
    registry_name: String,
}

impl Client {
    #[circuit_breaker(name = "payment", registry = self.registry_name)]
    async fn charge(&self, amount: u64) -> Result<u64, PayError> {
        Ok(amount)
    }
}

fn main() {}
