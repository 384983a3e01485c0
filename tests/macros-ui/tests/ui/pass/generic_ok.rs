//! Generic `Ok` and error types without a `'static` bound (issue #10).
use std::fmt::Debug;
use std::str::FromStr;

use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq, Clone)]
pub enum ParseError {
    Bad,
    Rejected,
}

impl From<CallNotPermitted> for ParseError {
    fn from(_: CallNotPermitted) -> Self {
        ParseError::Rejected
    }
}

#[circuit_breaker(name = "ui-generic-ok")]
async fn parse<T: FromStr>(text: &str) -> Result<T, ParseError> {
    text.parse().map_err(|_| ParseError::Bad)
}

#[circuit_breaker(name = "ui-generic-ok", fallback = "pick_fallback")]
async fn pick<'a, T>(items: &'a [T], index: usize) -> Result<&'a T, ParseError>
where
    T: Debug,
{
    items.get(index).ok_or(ParseError::Bad)
}

async fn pick_fallback<'a, T: Debug>(items: &'a [T], _index: usize, _e: CallError<ParseError>) -> Result<&'a T, ParseError> {
    items.first().ok_or(ParseError::Bad)
}

#[circuit_breaker(name = "ui-generic-ok")]
async fn convert<T, E>(value: Result<T, E>) -> Result<T, E>
where
    E: From<CallNotPermitted>,
{
    value
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(parse::<u8>("7").await, Ok(7));
        assert_eq!(parse::<f64>("x").await, Err(ParseError::Bad));
        let local = vec![String::from("a"), String::from("b")];
        assert_eq!(pick(&local, 1).await, Ok(&local[1]));
        assert_eq!(pick(&local, 5).await, Ok(&local[0]));
        let borrowed = String::from("kept");
        let r: Result<&str, ParseError> = convert(Ok(borrowed.as_str())).await;
        assert_eq!(r, Ok("kept"));
    });
}
