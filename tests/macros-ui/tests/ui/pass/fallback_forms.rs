//! Fallbacks named as bare paths, generic fallbacks, a fallback in a trait's default method,
//! and a fn with many arguments.
use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq, Clone)]
pub struct SvcError;

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

#[circuit_breaker(name = "ui-forms", fallback = cached)]
async fn bare(fail: bool) -> Result<u8, SvcError> {
    if fail { Err(SvcError) } else { Ok(1) }
}

async fn cached(_fail: bool, _e: CallError<SvcError>) -> Result<u8, SvcError> {
    Ok(0)
}

pub struct Service;

impl Service {
    #[circuit_breaker(name = "ui-forms", fallback = Self::assoc)]
    async fn bare_self(&self, fail: bool) -> Result<u8, SvcError> {
        if fail { Err(SvcError) } else { Ok(2) }
    }

    #[circuit_breaker(name = "ui-forms", fallback = "self::cached")]
    async fn free_from_method(&self, fail: bool) -> Result<u8, SvcError> {
        if fail { Err(SvcError) } else { Ok(3) }
    }

    async fn assoc(_fail: bool, _e: CallError<SvcError>) -> Result<u8, SvcError> {
        Ok(20)
    }
}

#[circuit_breaker(name = "ui-forms", fallback = "generic_fallback")]
async fn generic<T: Clone + Default + Send>(value: T, fail: bool) -> Result<T, SvcError> {
    if fail { Err(SvcError) } else { Ok(value) }
}

async fn generic_fallback<T: Default>(_value: T, _fail: bool, _e: CallError<SvcError>) -> Result<T, SvcError> {
    Ok(T::default())
}

#[circuit_breaker(name = "ui-forms", fallback = "turbofish::<u8>")]
async fn turbo(fail: bool) -> Result<u8, SvcError> {
    if fail { Err(SvcError) } else { Ok(4) }
}

async fn turbofish<T: Into<u8>>(_fail: bool, _e: CallError<SvcError>) -> Result<u8, SvcError> {
    Ok(40)
}

trait Greeter {
    fn base(&self) -> u8;

    #[circuit_breaker(name = "ui-forms", fallback = "greet_fallback")]
    async fn greet(&self, fail: bool) -> Result<u8, SvcError> {
        if fail { Err(SvcError) } else { Ok(self.base()) }
    }

    async fn greet_fallback(&self, _fail: bool, _e: CallError<SvcError>) -> Result<u8, SvcError> {
        Ok(self.base() + 50)
    }
}

struct English;

impl Greeter for English {
    fn base(&self) -> u8 {
        5
    }
}

#[allow(clippy::too_many_arguments)]
#[circuit_breaker(name = "ui-forms", fallback = "many_fallback")]
async fn many(a: u8, b: u8, c: u8, d: u8, e: u8, f: u8, g: u8, h: u8, i: u8, j: u8, fail: bool) -> Result<u8, SvcError> {
    if fail { Err(SvcError) } else { Ok(a + b + c + d + e + f + g + h + i + j) }
}

#[allow(clippy::too_many_arguments)]
async fn many_fallback(a: u8, _b: u8, _c: u8, _d: u8, _e: u8, _f: u8, _g: u8, _h: u8, _i: u8, j: u8, _fail: bool, _err: CallError<SvcError>) -> Result<u8, SvcError> {
    Ok(a * 100 + j)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(bare(false).await, Ok(1));
        assert_eq!(bare(true).await, Ok(0));
        assert_eq!(Service.bare_self(true).await, Ok(20));
        assert_eq!(Service.free_from_method(false).await, Ok(3));
        assert_eq!(Service.free_from_method(true).await, Ok(0));
        assert_eq!(generic(String::from("x"), false).await, Ok("x".to_string()));
        assert_eq!(generic(String::from("x"), true).await, Ok(String::new()));
        assert_eq!(turbo(true).await, Ok(40));
        assert_eq!(English.greet(false).await, Ok(5));
        assert_eq!(English.greet(true).await, Ok(55));
        assert_eq!(many(1, 1, 1, 1, 1, 1, 1, 1, 1, 2, false).await, Ok(11));
        assert_eq!(many(1, 1, 1, 1, 1, 1, 1, 1, 1, 2, true).await, Ok(102));
    });
}
