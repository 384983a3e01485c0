//! Issue 23: another crate's attribute with one of our names (`#[other_crate::retry]`,
//! `#[my::bulkhead]`) next to one of ours is left on the fn for that crate, not taken off
//! and read as ours (a second `#[retry]`, a bulkhead without a name). Ours are a single
//! segment or the facade's path. Here the foreign ones are `tracing::instrument` under
//! other names.
use resilience4rs::retry::MaxRetriesExceeded;
use resilience4rs::{circuit_breaker, retry, CallNotPermitted};

mod other_crate {
    pub use tracing::instrument as retry;
}

mod my {
    pub use tracing::instrument as bulkhead;
}

#[derive(Debug, PartialEq, Clone)]
pub struct SvcError;

impl std::fmt::Display for SvcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("service error")
    }
}

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

impl From<MaxRetriesExceeded> for SvcError {
    fn from(_: MaxRetriesExceeded) -> Self {
        SvcError
    }
}

#[retry(name = "ui-foreign")]
#[other_crate::retry(skip_all)]
async fn retried(id: u32) -> Result<u32, SvcError> {
    if id == 0 {
        return Err(SvcError);
    }
    Ok(id)
}

#[circuit_breaker(name = "ui-foreign")]
#[my::bulkhead]
async fn guarded(id: u32) -> Result<u32, SvcError> {
    if id == 0 {
        return Err(SvcError);
    }
    Ok(id + 1)
}

#[resilience4rs::circuit_breaker(name = "ui-foreign-path")]
#[::resilience4rs::retry(name = "ui-foreign-path")]
async fn by_facade_path(id: u32) -> Result<u32, SvcError> {
    Ok(id)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        assert_eq!(retried(2).await, Ok(2));
        assert_eq!(retried(0).await, Err(SvcError));
        assert_eq!(guarded(2).await, Ok(3));
        assert_eq!(guarded(0).await, Err(SvcError));
        assert_eq!(by_facade_path(4).await, Ok(4));
    });
    // Resilience4j's default maxAttempts is 3: one retry layer, not two (a second would make
    // 3 x 3 attempts); numberOfTotalCalls counts each attempt: 1 + 3.
    let r = resilience4rs::global_modules().retry.retry("ui-foreign").metrics();
    assert_eq!(r.number_of_failed_calls_with_retry_attempt, 1);
    assert_eq!(r.number_of_successful_calls_without_retry_attempt, 1);
    assert_eq!(r.number_of_total_calls, 4);
    // The breaker alone: no bulkhead of that name was made.
    let m = resilience4rs::global().circuit_breaker("ui-foreign").metrics();
    assert_eq!((m.number_of_successful_calls, m.number_of_failed_calls), (1, 1));
    assert!(resilience4rs::global_modules().bulkhead.find("ui-foreign").is_none());
    let p = resilience4rs::global().circuit_breaker("ui-foreign-path").metrics();
    assert_eq!(p.number_of_successful_calls, 1);
}
