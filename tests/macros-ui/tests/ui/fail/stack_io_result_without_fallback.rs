use std::io;

use resilience4rs::{circuit_breaker, retry};

// `io::Error` cannot carry a rejected call, and it is not ours to give `From` impls
// (issue #26: the stack advised an impl the orphan rule forbids).
#[retry(name = "disk")]
#[circuit_breaker(name = "disk")]
async fn read(path: String) -> io::Result<Vec<u8>> {
    std::fs::read(path)
}

fn main() {}
