//! Fallbacks that are methods of a trait: named like an inherent method (`"cached"`, found on
//! `Self` through the trait in scope) or by the trait's path (`"Fallbacks::cached"`, given the
//! receiver as a method is).
use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct SvcError;

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

trait Fallbacks {
    async fn cached(&self, fail: bool, e: CallError<SvcError>) -> Result<u8, SvcError>;
}

pub struct Service {
    stale: u8,
}

impl Fallbacks for Service {
    async fn cached(&self, _fail: bool, _e: CallError<SvcError>) -> Result<u8, SvcError> {
        Ok(self.stale)
    }
}

impl Service {
    #[circuit_breaker(name = "ui-trait-fallback", fallback = "cached")]
    async fn by_name(&self, fail: bool) -> Result<u8, SvcError> {
        if fail {
            Err(SvcError)
        } else {
            Ok(1)
        }
    }

    #[circuit_breaker(name = "ui-trait-fallback", fallback = "Fallbacks::cached")]
    async fn by_trait_path(&self, fail: bool) -> Result<u8, SvcError> {
        if fail {
            Err(SvcError)
        } else {
            Ok(2)
        }
    }
}

fn main() {
    let service = Service { stale: 9 };
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(service.by_name(false).await, Ok(1));
        assert_eq!(service.by_name(true).await, Ok(9));
        assert_eq!(service.by_trait_path(false).await, Ok(2));
        assert_eq!(service.by_trait_path(true).await, Ok(9));
    });
}
