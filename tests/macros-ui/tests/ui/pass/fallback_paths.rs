//! Fallbacks named by path: an associated fn (`Self::..`) and a fn in another module.
use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct QuoteError;

impl From<CallNotPermitted> for QuoteError {
    fn from(_: CallNotPermitted) -> Self {
        QuoteError
    }
}

mod fallbacks {
    use super::QuoteError;
    use resilience4rs::CallError;

    pub async fn zero(_symbol: &'static str, e: CallError<QuoteError>) -> Result<f64, QuoteError> {
        assert!(!e.is_not_permitted());
        Ok(0.0)
    }
}

pub struct Quotes;

impl Quotes {
    #[circuit_breaker(name = "ui-paths", fallback = "Self::stale")]
    async fn price(&self, symbol: &'static str) -> Result<f64, QuoteError> {
        if symbol.is_empty() {
            return Err(QuoteError);
        }
        Ok(42.0)
    }

    async fn stale(_symbol: &'static str, _e: CallError<QuoteError>) -> Result<f64, QuoteError> {
        Ok(-1.0)
    }
}

#[circuit_breaker(name = "ui-paths", fallback = "fallbacks::zero")]
async fn free_price(symbol: &'static str) -> Result<f64, QuoteError> {
    if symbol.is_empty() {
        return Err(QuoteError);
    }
    Ok(7.0)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(Quotes.price("A").await, Ok(42.0));
        assert_eq!(Quotes.price("").await, Ok(-1.0));
        assert_eq!(free_price("").await, Ok(0.0));
    });
}
