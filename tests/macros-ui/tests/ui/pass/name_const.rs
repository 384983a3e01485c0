//! `name = CONST` (as Java's `@CircuitBreaker(name = BACKEND)`), in paths, `Self::NAME`, and a
//! trait's default method whose `Self::NAME` differs per impl: each impl gets its own breaker.
use resilience4rs::{circuit_breaker, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct SvcError;

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

const BACKEND: &str = "ui-const-backend";

mod names {
    pub const PAYMENTS: &str = "ui-const-payments";
}

#[circuit_breaker(name = BACKEND)]
async fn backend() -> Result<u8, SvcError> {
    Ok(1)
}

#[circuit_breaker(name = names::PAYMENTS)]
async fn payments() -> Result<u8, SvcError> {
    Ok(2)
}

#[circuit_breaker(name = concat!("ui-const-", "concat"))]
async fn concatenated() -> Result<u8, SvcError> {
    Ok(3)
}

pub struct Inventory;

impl Inventory {
    const NAME: &'static str = "ui-const-inventory";

    #[circuit_breaker(name = Self::NAME)]
    async fn stock(&self) -> Result<u8, SvcError> {
        Ok(4)
    }
}

trait Backend {
    const NAME: &'static str;

    #[circuit_breaker(name = Self::NAME)]
    async fn ping(&self) -> Result<&'static str, SvcError> {
        Ok(Self::NAME)
    }
}

pub struct Alpha;
pub struct Beta;

impl Backend for Alpha {
    const NAME: &'static str = "ui-const-alpha";
}

impl Backend for Beta {
    const NAME: &'static str = "ui-const-beta";
}

fn calls(name: &str) -> u32 {
    resilience4rs::global().circuit_breaker(name).metrics().number_of_successful_calls
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(backend().await, Ok(1));
        assert_eq!(payments().await, Ok(2));
        assert_eq!(concatenated().await, Ok(3));
        assert_eq!(Inventory.stock().await, Ok(4));
        assert_eq!(Alpha.ping().await, Ok("ui-const-alpha"));
        assert_eq!(Beta.ping().await, Ok("ui-const-beta"));
        assert_eq!(Beta.ping().await, Ok("ui-const-beta"));
    });
    assert_eq!(calls(BACKEND), 1);
    assert_eq!(calls(names::PAYMENTS), 1);
    assert_eq!(calls("ui-const-concat"), 1);
    assert_eq!(calls("ui-const-inventory"), 1);
    assert_eq!(calls("ui-const-alpha"), 1);
    assert_eq!(calls("ui-const-beta"), 2);
}
