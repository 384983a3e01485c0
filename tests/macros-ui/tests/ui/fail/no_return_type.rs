use resilience4rs::circuit_breaker;

#[circuit_breaker(name = "payment")]
async fn notify(amount: u64) {
    let _ = amount;
}

fn main() {}
