//! Stacked attributes: all five in any textual order, on free fns, `&self` methods, trait
//! impls under `#[async_trait]`, generic fns, with names given as consts or forwarded by
//! `macro_rules!`, fallbacks on any layer, registries per attribute, full paths and
//! `crate = ...` through a re-export, and a spawned (`Send`) future.
use std::sync::Arc;

use resilience4rs::bulkhead::{BulkheadFullException, ThreadPoolBulkheadRegistry};
use resilience4rs::ratelimiter::RequestNotPermitted;
use resilience4rs::retry::{MaxRetriesExceeded, RetryRegistry};
use resilience4rs::timelimiter::Timeout;
use resilience4rs::{
    bulkhead, circuit_breaker, rate_limiter, retry, time_limiter, CallNotPermitted, StackError,
};

#[derive(Debug, Clone, PartialEq)]
pub struct SvcError(String);

impl std::fmt::Display for SvcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

macro_rules! from {
    ($($t:ty),*) => {$(
        impl From<$t> for SvcError {
            fn from(e: $t) -> Self { SvcError(e.to_string()) }
        }
    )*};
}
from!(CallNotPermitted, Timeout, BulkheadFullException, RequestNotPermitted, MaxRetriesExceeded);

const BACKEND: &str = "ui-stack";

// Every attribute, in an order unlike the nesting; no fallback: every rejection is a
// `SvcError` through `From`.
#[bulkhead(name = "ui-stack")]
#[time_limiter(name = BACKEND)]
#[retry(name = "ui-stack")]
#[rate_limiter(name = "ui-stack")]
#[circuit_breaker(name = "ui-stack")]
async fn all_five(n: u32) -> Result<u32, SvcError> {
    Ok(n + 1)
}

// Fallbacks on two layers; the other layers' rejections need `From`.
#[resilience4rs::retry(name = "ui-stack", fallback = "on_retry")]
#[resilience4rs::circuit_breaker(name = "ui-stack", fallback = on_breaker)]
#[bulkhead(name = "ui-stack-pool", type = "THREADPOOL")]
async fn with_fallbacks(id: String, (a, b): (u32, u32)) -> Result<String, SvcError> {
    Ok(format!("{id}{}", a + b))
}

async fn on_retry(
    id: String,
    _pair: (u32, u32),
    _e: StackError<SvcError>,
) -> Result<String, SvcError> {
    Ok(id)
}

async fn on_breaker(
    id: String,
    _pair: (u32, u32),
    e: StackError<SvcError>,
) -> Result<String, SvcError> {
    match e {
        StackError::CallNotPermitted(_) => Ok(id),
        StackError::Inner(e) => Err(e),
        other => Err(SvcError(other.to_string())),
    }
}

static RETRIES: std::sync::LazyLock<RetryRegistry> = std::sync::LazyLock::new(RetryRegistry::new);

pub struct Client {
    pools: ThreadPoolBulkheadRegistry,
}

impl Client {
    #[retry(name = "ui-stack", registry = RETRIES, fallback = "cached")]
    #[bulkhead(name = "ui-stack", type = "THREADPOOL", registry = self.pools)]
    async fn call(&self, n: u32) -> Result<u32, SvcError> {
        Ok(n)
    }

    async fn cached(&self, _n: u32, _e: StackError<SvcError>) -> Result<u32, SvcError> {
        Ok(0)
    }

    #[time_limiter(name = "ui-stack")]
    async fn generic<T: Clone + Send + Sync + 'static>(&self, value: T) -> Result<T, SvcError> {
        Ok(value)
    }
}

#[async_trait::async_trait]
pub trait Service {
    async fn fetch(&self, id: u32) -> Result<u32, SvcError>;
}

#[async_trait::async_trait]
impl Service for Client {
    #[retry(name = "ui-stack")]
    #[circuit_breaker(name = "ui-stack", fallback = "Self::fetch_fallback")]
    async fn fetch(&self, id: u32) -> Result<u32, SvcError> {
        Ok(id)
    }
}

impl Client {
    async fn fetch_fallback(_id: u32, _e: StackError<SvcError>) -> Result<u32, SvcError> {
        Ok(0)
    }
}

mod framework {
    pub use resilience4rs as resilience;
}

// The facade through a re-export; one attribute's `crate` serves the whole stack.
#[framework::resilience::rate_limiter(name = "ui-stack", crate = "crate::framework::resilience")]
#[framework::resilience::bulkhead(name = "ui-stack")]
async fn through_reexport() -> Result<u8, SvcError> {
    Ok(1)
}

macro_rules! forwarded {
    ($fn_name:ident, $name:expr, $fallback:literal) => {
        #[time_limiter(name = $name, fallback = $fallback)]
        #[retry(name = $name)]
        async fn $fn_name(n: u32) -> Result<u32, SvcError> {
            Ok(n)
        }
    };
}

async fn forwarded_fallback(_n: u32, _e: StackError<SvcError>) -> Result<u32, SvcError> {
    Ok(0)
}

forwarded!(by_macro, BACKEND, "forwarded_fallback");

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        assert_eq!(all_five(1).await, Ok(2));
        assert_eq!(with_fallbacks("x".into(), (1, 2)).await, Ok("x3".into()));
        let client = Arc::new(Client { pools: ThreadPoolBulkheadRegistry::new() });
        assert_eq!(client.call(4).await, Ok(4));
        assert_eq!(client.generic(7u8).await, Ok(7));
        assert_eq!(client.fetch(5).await, Ok(5));
        assert_eq!(through_reexport().await, Ok(1));
        assert_eq!(by_macro(9).await, Ok(9));
        // Spawned on a multi-threaded runtime: the futures are `Send`.
        let spawned = tokio::spawn(all_five(2));
        assert_eq!(spawned.await.unwrap(), Ok(3));
        let c = client.clone();
        let spawned = tokio::spawn(async move { c.call(3).await });
        assert_eq!(spawned.await.unwrap(), Ok(3));
    });
}
