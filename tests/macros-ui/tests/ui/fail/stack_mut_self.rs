use resilience4rs::{retry, StackError};

#[derive(Debug)]
pub struct PayError;

impl std::fmt::Display for PayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("declined")
    }
}

pub struct Client {
    calls: u32,
}

impl Client {
    #[retry(name = "payment", fallback = "cached")]
    async fn charge(&mut self, amount: u64) -> Result<u64, PayError> {
        self.calls += 1;
        Ok(amount)
    }

    async fn cached(&self, amount: u64, _e: StackError<PayError>) -> Result<u64, PayError> {
        Ok(amount)
    }
}

fn main() {}
