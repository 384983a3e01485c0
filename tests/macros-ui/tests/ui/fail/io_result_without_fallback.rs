use std::io;

use resilience4rs::circuit_breaker;

// `io::Error` cannot carry a rejected call, and it is not ours to give `From` impls.
#[circuit_breaker(name = "disk")]
async fn read(path: String) -> io::Result<Vec<u8>> {
    std::fs::read(path)
}

fn main() {}
