//! `#[circuit_breaker]` with the facade renamed in Cargo.toml (`r4 = { package =
//! "resilience4rs", .. }`): the generated code finds it as `::r4`. This package's only name
//! for the facade is `r4`, so no `resilience4rs` crate is in scope here. A plain test (not a
//! trybuild case): it builds in the workspace's target directory with everything else.
use std::sync::LazyLock;

use r4::{circuit_breaker, CallError, CallNotPermitted, Registry};

#[derive(Debug, PartialEq)]
pub enum PayError {
    Declined,
    Rejected,
}

impl From<CallNotPermitted> for PayError {
    fn from(_: CallNotPermitted) -> Self {
        PayError::Rejected
    }
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

#[circuit_breaker(name = "renamed", registry = REGISTRY)]
async fn charge(amount: u64) -> Result<u64, PayError> {
    if amount == 0 {
        return Err(PayError::Declined);
    }
    Ok(amount)
}

#[circuit_breaker(name = "renamed", registry = REGISTRY, fallback = "cached")]
async fn quote(amount: u64) -> Result<u64, PayError> {
    if amount == 0 {
        return Err(PayError::Declined);
    }
    Ok(amount * 2)
}

async fn cached(_amount: u64, error: CallError<PayError>) -> Result<u64, PayError> {
    assert!(matches!(error, CallError::Inner(PayError::Declined)));
    Ok(1)
}

pub struct Client;

impl Client {
    #[circuit_breaker(name = "renamed-global")]
    async fn ping(&self) -> Result<&'static str, PayError> {
        Ok("pong")
    }
}

#[test]
fn renamed_dependency() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        assert_eq!(charge(3).await, Ok(3));
        assert_eq!(charge(0).await, Err(PayError::Declined));
        assert_eq!(quote(2).await, Ok(4));
        assert_eq!(quote(0).await, Ok(1));
        assert_eq!(Client.ping().await, Ok("pong"));
    });
    let m = REGISTRY.circuit_breaker("renamed").metrics();
    assert_eq!(
        (m.number_of_successful_calls, m.number_of_failed_calls),
        (2, 2)
    );
    let global = r4::global().circuit_breaker("renamed-global").metrics();
    assert_eq!(global.number_of_successful_calls, 1);
}
