//! The futures of annotated fns are `Send` when their bodies are, with and without a fallback
//! and per-call registries, so they can be spawned on a multi-threaded runtime.
use std::sync::Arc;

use resilience4rs::{circuit_breaker, CallError, CallNotPermitted, Registry};

#[derive(Debug, PartialEq, Clone)]
pub struct SvcError;

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

#[circuit_breaker(name = "ui-send", fallback = "fallback")]
async fn free(n: u32) -> Result<u32, SvcError> {
    tokio::task::yield_now().await;
    if n == 0 { Err(SvcError) } else { Ok(n) }
}

async fn fallback(_n: u32, _e: CallError<SvcError>) -> Result<u32, SvcError> {
    tokio::task::yield_now().await;
    Ok(0)
}

pub struct Client {
    registry: Arc<Registry>,
}

impl Client {
    #[circuit_breaker(name = "ui-send", registry = self.registry, fallback = "method_fallback")]
    async fn call(self: Arc<Self>, n: u32) -> Result<u32, SvcError> {
        tokio::task::yield_now().await;
        if n == 0 { Err(SvcError) } else { Ok(n + 1) }
    }

    async fn method_fallback(&self, _n: u32, _e: CallError<SvcError>) -> Result<u32, SvcError> {
        Ok(1)
    }
}

fn assert_send<T: Send>(t: T) -> T {
    t
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    rt.block_on(async {
        let client = Arc::new(Client { registry: Arc::new(Registry::new()) });
        let a = tokio::spawn(assert_send(free(3)));
        let b = tokio::spawn(assert_send(free(0)));
        let c = tokio::spawn(assert_send(client.clone().call(4)));
        let d = tokio::spawn(assert_send(client.clone().call(0)));
        assert_eq!(a.await.unwrap(), Ok(3));
        assert_eq!(b.await.unwrap(), Ok(0));
        assert_eq!(c.await.unwrap(), Ok(5));
        assert_eq!(d.await.unwrap(), Ok(1));
        let m = client.registry.circuit_breaker("ui-send").metrics();
        assert_eq!((m.number_of_successful_calls, m.number_of_failed_calls), (1, 1));
    });
}
