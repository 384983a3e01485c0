//! `registry = EXPR` for expressions that depend on an argument or are not paths: an argument,
//! a method call, an `Arc` field, a fn call. Each is evaluated on every call.
use std::sync::{Arc, LazyLock, Mutex};

use resilience4rs::{circuit_breaker, CallError, CallNotPermitted, Registry};

#[derive(Debug, PartialEq, Clone)]
pub struct SvcError;

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

#[circuit_breaker(name = "expr", registry = registry)]
async fn with_argument(registry: &Registry, value: u32) -> Result<u32, SvcError> {
    let _ = registry;
    Ok(value)
}

#[circuit_breaker(name = "expr", registry = &*registry, fallback = "argument_fallback")]
async fn with_owned_argument(registry: Arc<Registry>, fail: bool) -> Result<u32, SvcError> {
    drop(registry); // the body may consume the argument the registry came from
    if fail {
        Err(SvcError)
    } else {
        Ok(1)
    }
}

async fn argument_fallback(
    _registry: Arc<Registry>,
    _fail: bool,
    _e: CallError<SvcError>,
) -> Result<u32, SvcError> {
    Ok(0)
}

static CURRENT: LazyLock<Mutex<Arc<Registry>>> =
    LazyLock::new(|| Mutex::new(Arc::new(Registry::new())));

fn current() -> Arc<Registry> {
    CURRENT.lock().unwrap().clone()
}

#[circuit_breaker(name = "expr", registry = current())]
async fn with_fn_call() -> Result<u32, SvcError> {
    Ok(2)
}

pub struct Tenant {
    registries: Vec<Arc<Registry>>,
    active: usize,
}

impl Tenant {
    fn registry(&self) -> &Registry {
        &self.registries[self.active]
    }

    #[circuit_breaker(name = "expr", registry = self.registry())]
    async fn with_method(&self) -> Result<u32, SvcError> {
        Ok(3)
    }

    #[circuit_breaker(name = "expr", registry = self.registries[self.active])]
    async fn with_index(&mut self) -> Result<u32, SvcError> {
        self.active += 0;
        Ok(4)
    }
}

fn ok(registry: &Registry) -> u32 {
    registry.circuit_breaker("expr").metrics().number_of_successful_calls
}

fn failed(registry: &Registry) -> u32 {
    registry.circuit_breaker("expr").metrics().number_of_failed_calls
}

fn main() {
    let (r1, r2) = (Registry::new(), Registry::new());
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(with_argument(&r1, 7).await, Ok(7));
        assert_eq!(with_argument(&r2, 8).await, Ok(8));
        assert_eq!(with_argument(&r1, 9).await, Ok(9));
        assert_eq!((ok(&r1), ok(&r2)), (2, 1));

        let owned = Arc::new(Registry::new());
        assert_eq!(with_owned_argument(owned.clone(), true).await, Ok(0));
        assert_eq!(failed(&owned), 1);

        let first = current();
        assert_eq!(with_fn_call().await, Ok(2));
        *CURRENT.lock().unwrap() = Arc::new(Registry::new());
        assert_eq!(with_fn_call().await, Ok(2));
        assert_eq!((ok(&first), ok(&current())), (1, 1));

        let mut tenant = Tenant {
            registries: vec![Arc::new(Registry::new()), Arc::new(Registry::new())],
            active: 0,
        };
        assert_eq!(tenant.with_method().await, Ok(3));
        tenant.active = 1;
        assert_eq!(tenant.with_method().await, Ok(3));
        assert_eq!(tenant.with_index().await, Ok(4));
        assert_eq!((ok(&tenant.registries[0]), ok(&tenant.registries[1])), (1, 2));
    });
}
