//! Free async fns, with and without a fallback; `?` and early `return` keep their types.
use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub enum PayError {
    Declined,
    Parse(std::num::ParseIntError),
    Rejected,
}

impl From<CallNotPermitted> for PayError {
    fn from(_: CallNotPermitted) -> Self {
        PayError::Rejected
    }
}

impl From<std::num::ParseIntError> for PayError {
    fn from(e: std::num::ParseIntError) -> Self {
        PayError::Parse(e)
    }
}

#[circuit_breaker(name = "ui-free")]
async fn charge(amount: &str) -> Result<u64, PayError> {
    let amount: u64 = amount.parse()?;
    if amount == 0 {
        return Err(PayError::Declined);
    }
    Ok(amount)
}

#[circuit_breaker(name = "ui-free-fallback", fallback = "cached")]
pub async fn quote(currency: String) -> Result<f64, PayError> {
    if currency == "XXX" {
        return Err(PayError::Declined);
    }
    Ok(1.5)
}

async fn cached(currency: String, error: CallError<PayError>) -> Result<f64, PayError> {
    assert_eq!(currency, "XXX");
    assert!(matches!(error, CallError::Inner(PayError::Declined)));
    Ok(1.0)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(charge("12").await, Ok(12));
        assert_eq!(charge("0").await, Err(PayError::Declined));
        assert!(matches!(charge("x").await, Err(PayError::Parse(_))));
        assert_eq!(quote("EUR".into()).await, Ok(1.5));
        assert_eq!(quote("XXX".into()).await, Ok(1.0));
    });
}
