//! `io::Result<T>` and other aliases of `Result`, with a fallback (`io::Error` cannot carry a
//! rejection without one).
use std::io;

use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[circuit_breaker(name = "ui-io", fallback = "read_fallback")]
async fn read(path: &'static str) -> io::Result<Vec<u8>> {
    if path.is_empty() {
        return Err(io::Error::new(io::ErrorKind::NotFound, "empty path"));
    }
    Ok(path.as_bytes().to_vec())
}

async fn read_fallback(_path: &'static str, error: CallError<io::Error>) -> io::Result<Vec<u8>> {
    match error {
        CallError::Inner(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        CallError::Inner(e) => Err(e),
        CallError::NotPermitted(rejected) => Err(io::Error::other(rejected)),
    }
}

#[circuit_breaker(name = "ui-io", fallback = "write_fallback")]
async fn write(data: Vec<u8>) -> std::io::Result<usize> {
    Ok(data.len())
}

async fn write_fallback(_data: Vec<u8>, _error: CallError<std::io::Error>) -> std::io::Result<usize> {
    Ok(0)
}

#[derive(Debug, PartialEq)]
pub enum AppError {
    Rejected,
}

impl From<CallNotPermitted> for AppError {
    fn from(_: CallNotPermitted) -> Self {
        AppError::Rejected
    }
}

type AppResult<T> = Result<T, AppError>;
type Unit = Result<(), AppError>;

#[circuit_breaker(name = "ui-io")]
async fn aliased(n: u8) -> AppResult<u8> {
    Ok(n)
}

#[circuit_breaker(name = "ui-io")]
async fn fully_aliased() -> Unit {
    Ok(())
}

#[circuit_breaker(name = "ui-io")]
async fn full_path() -> std::result::Result<u8, AppError> {
    Ok(9)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(read("ab").await.unwrap(), b"ab");
        assert_eq!(read("").await.unwrap(), Vec::<u8>::new());
        assert_eq!(write(vec![1, 2]).await.unwrap(), 2);
        assert_eq!(aliased(3).await, Ok(3));
        assert_eq!(fully_aliased().await, Ok(()));
        assert_eq!(full_path().await, Ok(9));
    });
}
