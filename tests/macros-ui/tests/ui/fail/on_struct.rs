use resilience4rs::circuit_breaker;

#[circuit_breaker(name = "payment")]
pub struct Payments {
    pub url: String,
}

fn main() {}
