//! Generic fns with lifetimes, type parameters, const generics and where clauses; borrowed
//! arguments, also handed to the fallback. (The `Ok` and `Err` types must be `'static`: the
//! breaker classifies them by type.)
use std::fmt::Display;

use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct FmtError;

impl From<CallNotPermitted> for FmtError {
    fn from(_: CallNotPermitted) -> Self {
        FmtError
    }
}

#[circuit_breaker(name = "ui-generics")]
async fn render<'a, T, const N: usize>(prefix: &'a str, items: [T; N]) -> Result<String, FmtError>
where
    T: Display + Send + 'a,
{
    let parts: Vec<String> = items.iter().map(|i| format!("{prefix}{i}")).collect();
    Ok(parts.join(","))
}

#[circuit_breaker(name = "ui-generics", fallback = "first_fallback")]
async fn first<'a, T>(items: &'a [T]) -> Result<T, FmtError>
where
    T: Clone + 'static,
{
    items.first().cloned().ok_or(FmtError)
}

async fn first_fallback<T>(items: &[T], _e: CallError<FmtError>) -> Result<T, FmtError> {
    assert!(items.is_empty());
    Err(FmtError)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(render("#", [1, 2]).await, Ok("#1,#2".to_string()));
        let v = vec![7, 8];
        assert_eq!(first(&v).await, Ok(7));
        assert_eq!(first::<u8>(&[]).await, Err(FmtError));
    });
}
