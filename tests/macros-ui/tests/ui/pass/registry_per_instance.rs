//! `registry = self.registry`: two clients with two registries each use their own, call after
//! call, in any order (issue #10's trap: a handle cached per call site sent every call to the
//! first client's registry).
use resilience4rs::{circuit_breaker, CallNotPermitted, CircuitBreakerConfig, Registry, State};

#[derive(Debug, PartialEq)]
pub enum InventoryError {
    Down,
    Rejected,
}

impl From<CallNotPermitted> for InventoryError {
    fn from(_: CallNotPermitted) -> Self {
        InventoryError::Rejected
    }
}

pub struct Client {
    registry: &'static Registry,
    up: bool,
}

impl Client {
    #[circuit_breaker(name = "inventory", registry = self.registry)]
    async fn get(&self) -> Result<u32, InventoryError> {
        if self.up {
            Ok(1)
        } else {
            Err(InventoryError::Down)
        }
    }
}

fn opens_after_two_failures() -> &'static Registry {
    let config = CircuitBreakerConfig::builder()
        .sliding_window_size(2)
        .minimum_number_of_calls(2)
        .build()
        .unwrap();
    Box::leak(Box::new(Registry::with_default_config(config)))
}

fn main() {
    let (a, b) = (opens_after_two_failures(), opens_after_two_failures());
    let up = Client { registry: a, up: true };
    let down = Client { registry: b, up: false };
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        // Alternate: `up` first, so a per-site cache would hold `a`.
        assert_eq!(up.get().await, Ok(1));
        assert_eq!(down.get().await, Err(InventoryError::Down));
        assert_eq!(up.get().await, Ok(1));
        assert_eq!(down.get().await, Err(InventoryError::Down));
        // `b` saw two failures and opened; `a` saw two successes.
        assert_eq!(down.get().await, Err(InventoryError::Rejected));
        assert_eq!(up.get().await, Ok(1));
    });
    let (ma, mb) = (
        a.circuit_breaker("inventory").metrics(),
        b.circuit_breaker("inventory").metrics(),
    );
    assert_eq!((ma.number_of_successful_calls, ma.number_of_failed_calls), (2, 0));
    assert_eq!(ma.state, State::Closed);
    assert_eq!((mb.number_of_successful_calls, mb.number_of_failed_calls), (0, 2));
    assert_eq!(mb.state, State::Open);
    assert_eq!(mb.number_of_not_permitted_calls, 1);
}
