use resilience4rs::circuit_breaker;

extern "C" {
    #[circuit_breaker(name = "libc")]
    fn abs(input: i32) -> i32;
}

fn main() {}
