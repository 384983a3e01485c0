//! `registry = PATH` naming a static, in every form: cached per call site, and every call goes
//! to the registry named.
use std::sync::LazyLock;

use resilience4rs::{circuit_breaker, CallNotPermitted, Registry};

#[derive(Debug, PartialEq)]
pub struct SvcError;

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

static LOCAL: LazyLock<Registry> = LazyLock::new(Registry::new);

mod config {
    use std::sync::LazyLock;

    use resilience4rs::Registry;

    pub static SHARED: LazyLock<Registry> = LazyLock::new(Registry::new);
    pub static LEAKED: LazyLock<&'static Registry> =
        LazyLock::new(|| Box::leak(Box::new(Registry::new())));
}

#[circuit_breaker(name = "paths", registry = LOCAL)]
async fn plain() -> Result<u8, SvcError> {
    Ok(1)
}

#[circuit_breaker(name = "paths", registry = config::SHARED)]
async fn module_path() -> Result<u8, SvcError> {
    Ok(2)
}

#[circuit_breaker(name = "paths", registry = crate::config::SHARED)]
async fn crate_path() -> Result<u8, SvcError> {
    Ok(3)
}

#[circuit_breaker(name = "paths", registry = &self::LOCAL)]
async fn borrowed() -> Result<u8, SvcError> {
    Ok(4)
}

#[circuit_breaker(name = "paths", registry = config::LEAKED)]
async fn leaked() -> Result<u8, SvcError> {
    Ok(5)
}

fn calls(registry: &Registry) -> u32 {
    registry.circuit_breaker("paths").metrics().number_of_successful_calls
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        for _ in 0..2 {
            assert_eq!(plain().await, Ok(1));
            assert_eq!(borrowed().await, Ok(4));
            assert_eq!(module_path().await, Ok(2));
            assert_eq!(crate_path().await, Ok(3));
            assert_eq!(leaked().await, Ok(5));
        }
    });
    assert_eq!(calls(&LOCAL), 4);
    assert_eq!(calls(&config::SHARED), 4);
    assert_eq!(calls(*config::LEAKED), 2);
    assert_eq!(calls(resilience4rs::global()), 0, "nothing went to the global registry");
}
