use resilience4rs::circuit_breaker;

#[circuit_breaker(name = "payment")]
async fn charge(amount: u64) -> Option<u64> {
    Some(amount)
}

fn main() {}
