//! `name` and `fallback` forwarded by `macro_rules!` as `$x:literal`, `$x:expr`, `$x:tt` and
//! `$x:path`.
use resilience4rs::{circuit_breaker, CallError, CallNotPermitted, Registry};

#[derive(Debug, PartialEq)]
pub struct SvcError;

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError
    }
}

static REGISTRY: std::sync::LazyLock<Registry> = std::sync::LazyLock::new(Registry::new);

async fn fallback(_fail: bool, _e: CallError<SvcError>) -> Result<u8, SvcError> {
    Ok(0)
}

macro_rules! literal {
    ($fn_name:ident, $name:literal, $fallback:literal) => {
        #[circuit_breaker(name = $name, fallback = $fallback, registry = REGISTRY)]
        async fn $fn_name(fail: bool) -> Result<u8, SvcError> {
            if fail { Err(SvcError) } else { Ok(1) }
        }
    };
}

macro_rules! expr {
    ($fn_name:ident, $name:expr, $fallback:expr) => {
        #[circuit_breaker(name = $name, fallback = $fallback, registry = REGISTRY)]
        async fn $fn_name(fail: bool) -> Result<u8, SvcError> {
            if fail { Err(SvcError) } else { Ok(2) }
        }
    };
}

macro_rules! tt {
    ($fn_name:ident, $name:tt, $fallback:tt) => {
        #[circuit_breaker(name = $name, fallback = $fallback, registry = REGISTRY)]
        async fn $fn_name(fail: bool) -> Result<u8, SvcError> {
            if fail { Err(SvcError) } else { Ok(3) }
        }
    };
}

macro_rules! path {
    ($fn_name:ident, $name:path, $fallback:path) => {
        #[circuit_breaker(name = $name, fallback = $fallback, registry = REGISTRY)]
        async fn $fn_name(fail: bool) -> Result<u8, SvcError> {
            if fail { Err(SvcError) } else { Ok(4) }
        }
    };
}

const NAME: &str = "ui-macro-path";

literal!(by_literal, "ui-macro-literal", "fallback");
expr!(by_expr, "ui-macro-expr", "fallback");
tt!(by_tt, "ui-macro-tt", "fallback");
path!(by_path, NAME, fallback);

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(by_literal(false).await, Ok(1));
        assert_eq!(by_expr(false).await, Ok(2));
        assert_eq!(by_tt(false).await, Ok(3));
        assert_eq!(by_path(false).await, Ok(4));
        for f in [by_literal(true).await, by_expr(true).await, by_tt(true).await, by_path(true).await] {
            assert_eq!(f, Ok(0));
        }
    });
    for name in ["ui-macro-literal", "ui-macro-expr", "ui-macro-tt", "ui-macro-path"] {
        let m = REGISTRY.circuit_breaker(name).metrics();
        assert_eq!((m.number_of_successful_calls, m.number_of_failed_calls), (1, 1), "{name}");
    }
}
