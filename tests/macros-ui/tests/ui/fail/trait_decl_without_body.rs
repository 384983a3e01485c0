use resilience4rs::circuit_breaker;

pub struct PayError;

pub trait Payments {
    #[circuit_breaker(name = "payment")]
    async fn charge(&self, amount: u64) -> Result<u64, PayError>;
}

fn main() {}
