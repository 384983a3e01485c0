//! Inherent async methods with every receiver kind, with method fallbacks.
use std::sync::Arc;

use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct SvcError;

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

#[derive(Clone)]
pub struct Inventory {
    stock: u32,
}

impl Inventory {
    #[circuit_breaker(name = "ui-receivers", fallback = "stock_fallback")]
    async fn stock(&self, item: u32) -> Result<u32, SvcError> {
        if item == 0 {
            return Err(SvcError);
        }
        Ok(self.stock)
    }

    #[circuit_breaker(name = "ui-receivers", fallback = "reserve_fallback")]
    async fn reserve(&mut self, n: u32) -> Result<u32, SvcError> {
        if n > self.stock {
            return Err(SvcError);
        }
        self.stock -= n;
        Ok(self.stock)
    }

    #[circuit_breaker(name = "ui-receivers", fallback = "stock_fallback")]
    async fn shared(self: Arc<Self>, item: u32) -> Result<u32, SvcError> {
        if item == 0 {
            return Err(SvcError);
        }
        Ok(self.stock + item)
    }

    #[circuit_breaker(name = "ui-receivers", fallback = "into_fallback")]
    async fn into_stock(self, item: u32) -> Result<u32, SvcError> {
        if item == 0 {
            return Err(SvcError);
        }
        let Inventory { stock } = self;
        Ok(stock)
    }

    #[circuit_breaker(name = "ui-receivers")]
    async fn no_fallback(&self) -> Result<u32, SvcError> {
        Ok(self.stock)
    }

    async fn stock_fallback(&self, _item: u32, _e: CallError<SvcError>) -> Result<u32, SvcError> {
        Ok(0)
    }

    async fn reserve_fallback(&mut self, _n: u32, _e: CallError<SvcError>) -> Result<u32, SvcError> {
        self.stock = 0;
        Ok(u32::MAX)
    }

    async fn into_fallback(self, _item: u32, _e: CallError<SvcError>) -> Result<u32, SvcError> {
        Ok(self.stock * 10)
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let mut inv = Inventory { stock: 5 };
        assert_eq!(inv.stock(1).await, Ok(5));
        assert_eq!(inv.stock(0).await, Ok(0));
        assert_eq!(inv.reserve(2).await, Ok(3));
        assert_eq!(inv.reserve(9).await, Ok(u32::MAX));
        assert_eq!(inv.no_fallback().await, Ok(0));
        let arc = Arc::new(Inventory { stock: 1 });
        assert_eq!(arc.clone().shared(1).await, Ok(2));
        assert_eq!(arc.shared(0).await, Ok(0));
        assert_eq!(Inventory { stock: 4 }.into_stock(1).await, Ok(4));
        assert_eq!(Inventory { stock: 4 }.into_stock(0).await, Ok(40));
    });
}
