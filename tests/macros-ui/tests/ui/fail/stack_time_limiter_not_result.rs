use resilience4rs::time_limiter;

// Resilience4j throws IllegalReturnTypeException at call time for a method whose return type
// is not a CompletionStage (spec §2.3): here the fn must return a `Result`.
#[time_limiter(name = "payment", fallback = "cached")]
async fn charge(amount: u64) -> String {
    amount.to_string()
}

fn main() {}
