//! Pattern arguments: the fallback receives the whole value.
use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct GeoError;

impl From<CallNotPermitted> for GeoError {
    fn from(_: CallNotPermitted) -> Self {
        GeoError
    }
}

#[derive(Clone)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

#[circuit_breaker(name = "ui-patterns", fallback = "distance_fallback")]
async fn distance((a, b): (i32, i32), Point { x, y }: Point, _: u8) -> Result<i32, GeoError> {
    if a < 0 {
        return Err(GeoError);
    }
    Ok((a - x).abs() + (b - y).abs())
}

async fn distance_fallback(
    from: (i32, i32),
    to: Point,
    _unused: u8,
    _e: CallError<GeoError>,
) -> Result<i32, GeoError> {
    Ok(from.0 * 1000 + to.y)
}

#[circuit_breaker(name = "ui-patterns")]
async fn sum((a, b): (u32, u32), mut extra: u32) -> Result<u32, GeoError> {
    extra += 1;
    Ok(a + b + extra)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(distance((1, 1), Point { x: 4, y: 5 }, 0).await, Ok(7));
        assert_eq!(distance((-2, 1), Point { x: 4, y: 5 }, 0).await, Ok(-1995));
        assert_eq!(sum((1, 2), 3).await, Ok(7));
    });
}
