//! Returning borrowed data, with and without a fallback (issue #10: lifetime errors that never
//! mentioned the breaker, from a `T: 'static` requirement).
use std::borrow::Cow;

use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct LookupError;

impl From<CallNotPermitted> for LookupError {
    fn from(_: CallNotPermitted) -> Self {
        LookupError
    }
}

pub struct Catalog {
    names: Vec<String>,
}

impl Catalog {
    #[circuit_breaker(name = "ui-borrowed")]
    async fn first(&self) -> Result<&str, LookupError> {
        self.names.first().map(String::as_str).ok_or(LookupError)
    }

    #[circuit_breaker(name = "ui-borrowed", fallback = "any_fallback")]
    async fn any(&self, index: usize) -> Result<&str, LookupError> {
        self.names.get(index).map(String::as_str).ok_or(LookupError)
    }

    async fn any_fallback(&self, _index: usize, _e: CallError<LookupError>) -> Result<&str, LookupError> {
        Ok("unknown")
    }

    #[circuit_breaker(name = "ui-borrowed")]
    async fn upper<'a>(&'a self, index: usize) -> Result<Cow<'a, str>, LookupError> {
        let name = self.names.get(index).ok_or(LookupError)?;
        Ok(if name.chars().all(char::is_uppercase) {
            Cow::Borrowed(name.as_str())
        } else {
            Cow::Owned(name.to_uppercase())
        })
    }
}

#[circuit_breaker(name = "ui-borrowed", fallback = "split_fallback")]
async fn split(text: &str) -> Result<(&str, &str), LookupError> {
    text.split_once('=').ok_or(LookupError)
}

async fn split_fallback<'a>(text: &'a str, _e: CallError<LookupError>) -> Result<(&'a str, &'a str), LookupError> {
    Ok((text, ""))
}

/// An error that borrows, too.
#[derive(Debug, PartialEq)]
pub enum ParseError<'a> {
    Bad(&'a str),
    Rejected,
}

impl From<CallNotPermitted> for ParseError<'_> {
    fn from(_: CallNotPermitted) -> Self {
        ParseError::Rejected
    }
}

#[circuit_breaker(name = "ui-borrowed")]
async fn number(text: &str) -> Result<u32, ParseError<'_>> {
    text.parse().map_err(|_| ParseError::Bad(text))
}

fn main() {
    let catalog = Catalog {
        names: vec!["ada".into(), "BOB".into()],
    };
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(catalog.first().await, Ok("ada"));
        assert_eq!(catalog.any(1).await, Ok("BOB"));
        assert_eq!(catalog.any(9).await, Ok("unknown"));
        assert_eq!(catalog.upper(0).await, Ok(Cow::Owned::<str>("ADA".into())));
        assert!(matches!(catalog.upper(1).await, Ok(Cow::Borrowed("BOB"))));
        let owned = String::from("k=v");
        assert_eq!(split(&owned).await, Ok(("k", "v")));
        assert_eq!(split("kv").await, Ok(("kv", "")));
        assert_eq!(number("12").await, Ok(12));
        assert_eq!(number("x").await, Err(ParseError::Bad("x")));
    });
    let m = resilience4rs::global().circuit_breaker("ui-borrowed").metrics();
    // 6 successes; the failed `any(9)`, `split("kv")` and `number("x")` are failures.
    assert_eq!((m.number_of_successful_calls, m.number_of_failed_calls), (6, 3));
}
