//! Inner attributes at the top of the body stay at the top of the rewritten body, with and
//! without a fallback (issue #10: `#![allow(..)]` was a hard error).
#![deny(unused_variables)]

use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct SvcError;

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

#[circuit_breaker(name = "ui-inner")]
async fn unused_argument(unused: u32) -> Result<u32, SvcError> {
    #![allow(unused_variables)]
    let also_unused = 2;
    Ok(1)
}

#[circuit_breaker(name = "ui-inner", fallback = "fallback")]
async fn two_inner(unused: u32) -> Result<u32, SvcError> {
    #![allow(unused_variables)]
    #![allow(clippy::let_unit_value)]
    //! An inner doc comment is an inner attribute too.
    let nothing = ();
    Err(SvcError)
}

async fn fallback(_unused: u32, _e: CallError<SvcError>) -> Result<u32, SvcError> {
    Ok(0)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(unused_argument(5).await, Ok(1));
        assert_eq!(two_inner(5).await, Ok(0));
    });
}
