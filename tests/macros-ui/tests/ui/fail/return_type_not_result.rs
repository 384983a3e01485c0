use resilience4rs::circuit_breaker;

pub struct Receipt {
    pub amount: u64,
}

#[circuit_breaker(name = "payment")]
async fn charge(amount: u64) -> Receipt {
    Receipt { amount }
}

fn main() {}
