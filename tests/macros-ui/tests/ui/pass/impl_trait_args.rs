//! `impl Trait` arguments, with and without a fallback.
use std::fmt::Debug;

use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct LogError;

impl From<CallNotPermitted> for LogError {
    fn from(_: CallNotPermitted) -> Self {
        LogError
    }
}

#[circuit_breaker(name = "ui-impl-trait")]
async fn describe(value: impl Debug, items: impl IntoIterator<Item = u8>) -> Result<String, LogError> {
    let total: u32 = items.into_iter().map(u32::from).sum();
    Ok(format!("{value:?}:{total}"))
}

#[circuit_breaker(name = "ui-impl-trait", fallback = "describe_fallback")]
async fn describe_cloned(value: impl Debug + Clone) -> Result<String, LogError> {
    let text = format!("{value:?}");
    if text.len() > 3 {
        return Err(LogError);
    }
    Ok(text)
}

async fn describe_fallback(value: impl Debug + Clone, _e: CallError<LogError>) -> Result<String, LogError> {
    Ok(format!("long {value:?}"))
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(describe("a", vec![1, 2]).await, Ok("\"a\":3".to_string()));
        assert_eq!(describe_cloned(7).await, Ok("7".to_string()));
        assert_eq!(describe_cloned(12345).await, Ok("long 12345".to_string()));
    });
}
