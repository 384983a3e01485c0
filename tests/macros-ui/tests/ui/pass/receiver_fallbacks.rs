//! Method fallbacks with another receiver than the protected method's: `&mut self` -> `&self`,
//! `self` -> `&self` / `&mut self`, `Box<Self>` / `Rc<Self>` / `Arc<Self>` -> `&self` or the same
//! pointer, and an associated fn without `self` named like a method.
use std::rc::Rc;
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
pub struct Counter {
    n: u32,
}

impl Counter {
    #[circuit_breaker(name = "ui-recv", fallback = "peek")]
    async fn bump(&mut self, fail: bool) -> Result<u32, SvcError> {
        if fail {
            return Err(SvcError);
        }
        self.n += 1;
        Ok(self.n)
    }

    #[circuit_breaker(name = "ui-recv", fallback = "peek")]
    async fn consume(self, fail: bool) -> Result<u32, SvcError> {
        if fail {
            return Err(SvcError);
        }
        Ok(self.n * 10)
    }

    #[circuit_breaker(name = "ui-recv", fallback = "reset")]
    async fn consume_mut(self, fail: bool) -> Result<u32, SvcError> {
        if fail {
            return Err(SvcError);
        }
        Ok(self.n)
    }

    #[circuit_breaker(name = "ui-recv", fallback = "peek")]
    async fn boxed(self: Box<Self>, fail: bool) -> Result<u32, SvcError> {
        if fail {
            return Err(SvcError);
        }
        Ok(self.n + 100)
    }

    #[circuit_breaker(name = "ui-recv", fallback = "from_rc")]
    async fn counted(self: Rc<Self>, fail: bool) -> Result<u32, SvcError> {
        if fail {
            return Err(SvcError);
        }
        Ok(self.n + 200)
    }

    #[circuit_breaker(name = "ui-recv", fallback = "peek")]
    async fn shared(self: Arc<Self>, fail: bool) -> Result<u32, SvcError> {
        if fail {
            return Err(SvcError);
        }
        Ok(self.n + 300)
    }

    #[circuit_breaker(name = "ui-recv", fallback = "Self::peek")]
    async fn with_self_path(&self, fail: bool) -> Result<u32, SvcError> {
        if fail {
            return Err(SvcError);
        }
        Ok(self.n)
    }

    #[circuit_breaker(name = "ui-recv", fallback = "constant")]
    async fn with_associated(&self, fail: bool) -> Result<u32, SvcError> {
        if fail {
            return Err(SvcError);
        }
        Ok(self.n)
    }

    async fn peek(&self, _fail: bool, _e: CallError<SvcError>) -> Result<u32, SvcError> {
        Ok(self.n + 1000)
    }

    async fn reset(&mut self, _fail: bool, _e: CallError<SvcError>) -> Result<u32, SvcError> {
        self.n = 0;
        Ok(self.n)
    }

    async fn from_rc(self: Rc<Self>, _fail: bool, _e: CallError<SvcError>) -> Result<u32, SvcError> {
        Ok(Rc::strong_count(&self) as u32)
    }

    async fn constant(_fail: bool, _e: CallError<SvcError>) -> Result<u32, SvcError> {
        Ok(42)
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let mut c = Counter { n: 1 };
        assert_eq!(c.bump(false).await, Ok(2));
        assert_eq!(c.bump(true).await, Ok(1002));
        assert_eq!(c.clone().consume(false).await, Ok(20));
        assert_eq!(c.clone().consume(true).await, Ok(1002));
        assert_eq!(c.clone().consume_mut(true).await, Ok(0));
        assert_eq!(Box::new(c.clone()).boxed(false).await, Ok(102));
        assert_eq!(Box::new(c.clone()).boxed(true).await, Ok(1002));
        let rc = Rc::new(c.clone());
        assert_eq!(rc.clone().counted(false).await, Ok(202));
        // The fallback gets a clone taken before the call: `rc`, the receiver and the clone.
        assert_eq!(rc.clone().counted(true).await, Ok(3));
        assert_eq!(Rc::strong_count(&rc), 1);
        assert_eq!(Arc::new(c.clone()).shared(true).await, Ok(1002));
        assert_eq!(c.with_associated(true).await, Ok(42));
        assert_eq!(c.with_associated(false).await, Ok(2));
        assert_eq!(c.with_self_path(true).await, Ok(1002));
    });
}
