//! `impl Trait` inside the `Ok` type (issue #10: `Result<(impl Display, u32), E>` failed with
//! E0562).
use std::fmt::Display;

use resilience4rs::{circuit_breaker, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct ShowError;

impl From<CallNotPermitted> for ShowError {
    fn from(_: CallNotPermitted) -> Self {
        ShowError
    }
}

#[circuit_breaker(name = "ui-impl-ok")]
async fn labelled(n: u32) -> Result<(impl Display, u32), ShowError> {
    if n == 0 {
        return Err(ShowError);
    }
    Ok((format!("#{n}"), n * 2))
}

#[circuit_breaker(name = "ui-impl-ok")]
async fn shown(n: u32) -> Result<impl Display + Send, ShowError> {
    Ok(n + 1)
}

#[circuit_breaker(name = "ui-impl-ok")]
async fn items(n: u8) -> Result<impl Iterator<Item = u8>, ShowError> {
    Ok(0..n)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let (label, doubled) = labelled(3).await.unwrap();
        assert_eq!((label.to_string(), doubled), ("#3".to_string(), 6));
        assert!(labelled(0).await.is_err());
        assert_eq!(shown(4).await.unwrap().to_string(), "5");
        assert_eq!(items(3).await.unwrap().sum::<u8>(), 3);
    });
    let m = resilience4rs::global().circuit_breaker("ui-impl-ok").metrics();
    assert_eq!((m.number_of_successful_calls, m.number_of_failed_calls), (3, 1));
}
