//! A stacked fn returning borrowed data, as a lone `#[circuit_breaker]` may (issue #26: a
//! stack said only "lifetime may not live long enough"). Such an `Ok` type cannot be the type
//! a `recordResult`/`retryOnResult` predicate names, so its values are successes.
use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};

use resilience4rs::{circuit_breaker, rate_limiter, retry, time_limiter};

#[derive(Debug, PartialEq)]
pub struct LookupError;

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not found")
    }
}

impl From<resilience4rs::retry::MaxRetriesExceeded> for LookupError {
    fn from(_: resilience4rs::retry::MaxRetriesExceeded) -> Self {
        LookupError
    }
}

impl From<resilience4rs::CallNotPermitted> for LookupError {
    fn from(_: resilience4rs::CallNotPermitted) -> Self {
        LookupError
    }
}

impl From<resilience4rs::timelimiter::Timeout> for LookupError {
    fn from(_: resilience4rs::timelimiter::Timeout) -> Self {
        LookupError
    }
}

impl From<resilience4rs::ratelimiter::RequestNotPermitted> for LookupError {
    fn from(_: resilience4rs::ratelimiter::RequestNotPermitted) -> Self {
        LookupError
    }
}

pub struct Catalog {
    names: Vec<String>,
    calls: AtomicUsize,
}

impl Catalog {
    #[retry(name = "ui-stack-borrowed")]
    #[circuit_breaker(name = "ui-stack-borrowed")]
    async fn first(&self) -> Result<&str, LookupError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.names.first().map(String::as_str).ok_or(LookupError)
    }

    #[time_limiter(name = "ui-stack-borrowed")]
    #[rate_limiter(name = "ui-stack-borrowed")]
    async fn upper<'a>(&'a self, index: usize) -> Result<Cow<'a, str>, LookupError> {
        let name = self.names.get(index).ok_or(LookupError)?;
        Ok(if name.chars().all(char::is_uppercase) {
            Cow::Borrowed(name.as_str())
        } else {
            Cow::Owned(name.to_uppercase())
        })
    }
}

/// A generic `Ok` type without a `'static` bound.
#[retry(name = "ui-stack-borrowed")]
async fn echo<T: Clone>(value: T) -> Result<T, LookupError> {
    Ok(value)
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let catalog = Catalog {
            names: vec!["EUR".to_string(), "usd".to_string()],
            calls: AtomicUsize::new(0),
        };
        assert_eq!(catalog.first().await, Ok("EUR"));
        assert_eq!(catalog.calls.load(Ordering::SeqCst), 1);
        assert_eq!(catalog.upper(0).await, Ok(Cow::Borrowed("EUR")));
        assert_eq!(catalog.upper(1).await, Ok(Cow::Owned("USD".to_string())));
        assert_eq!(catalog.upper(2).await, Err(LookupError));

        // Resilience4j's default retry: 3 attempts, then the last error.
        let empty = Catalog {
            names: Vec::new(),
            calls: AtomicUsize::new(0),
        };
        assert_eq!(empty.first().await, Err(LookupError));
        assert_eq!(empty.calls.load(Ordering::SeqCst), 3);

        let text = String::from("borrowed");
        assert_eq!(echo(text.as_str()).await, Ok("borrowed"));
    });
}
