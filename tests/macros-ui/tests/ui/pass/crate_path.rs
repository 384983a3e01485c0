//! `crate = "path"` and `crate = path`: the facade named through a re-export, as a crate that
//! wraps `resilience4rs` would expose it (see `crate_path_wrong` for proof that the path is
//! the one used).
use resilience4rs::CallNotPermitted;

mod framework {
    pub use resilience4rs as resilience;
}

#[derive(Debug, PartialEq)]
pub struct SvcError;

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

#[framework::resilience::circuit_breaker(name = "ui-crate-path", crate = "crate::framework::resilience")]
async fn quoted() -> Result<u8, SvcError> {
    Ok(1)
}

#[framework::resilience::circuit_breaker(
    name = "ui-crate-path",
    crate = self::framework::resilience,
    fallback = "fallback"
)]
async fn bare(fail: bool) -> Result<u8, SvcError> {
    if fail {
        Err(SvcError)
    } else {
        Ok(2)
    }
}

async fn fallback(_fail: bool, _e: framework::resilience::CallError<SvcError>) -> Result<u8, SvcError> {
    Ok(0)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(quoted().await, Ok(1));
        assert_eq!(bare(false).await, Ok(2));
        assert_eq!(bare(true).await, Ok(0));
    });
    let m = framework::resilience::global()
        .circuit_breaker("ui-crate-path")
        .metrics();
    assert_eq!((m.number_of_successful_calls, m.number_of_failed_calls), (2, 1));
}
