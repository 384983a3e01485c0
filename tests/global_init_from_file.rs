//! `resilience4rs::init_from_file` with an error catalog makes a Spring file that names exceptions
//! drive `#[circuit_breaker]` fns. (Its own test binary: the global registry is per process.)

use resilience4rs::{circuit_breaker, CallNotPermitted, ErrorCatalog, InitError, State};

#[derive(Debug, PartialEq)]
enum ApiError {
    Unavailable,
    BadRequest,
    Rejected,
}

impl From<CallNotPermitted> for ApiError {
    fn from(_: CallNotPermitted) -> Self {
        ApiError::Rejected
    }
}

#[circuit_breaker(name = "quotes")]
async fn quote(e: Option<ApiError>) -> Result<u32, ApiError> {
    match e {
        Some(e) => Err(e),
        None => Ok(1),
    }
}

const YAML: &str = "
resilience4j.circuitbreaker:
  instances:
    quotes:
      slidingWindowSize: 4
      minimumNumberOfCalls: 4
      recordExceptions: org.springframework.web.client.HttpServerErrorException
      ignoreExceptions: org.springframework.web.client.HttpClientErrorException
";

#[tokio::test]
async fn a_file_with_exception_names_needs_a_catalog_and_then_classifies_like_java() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    std::fs::write(&path, YAML).unwrap();

    // Without a catalog the names bind to nothing: refused, and the global stays unset.
    match resilience4rs::init_from_file(&path, ErrorCatalog::new()) {
        Err(InitError::Load(e)) => assert!(
            e.to_string()
                .contains("'org.springframework.web.client.HttpServerErrorException'"),
            "{e}"
        ),
        other => panic!("expected a load error, got {other:?}"),
    }

    let catalog = ErrorCatalog::new()
        .register(
            "org.springframework.web.client.HttpServerErrorException",
            |e: &ApiError| *e == ApiError::Unavailable,
        )
        .register(
            "org.springframework.web.client.HttpClientErrorException",
            |e: &ApiError| *e == ApiError::BadRequest,
        );
    let live = resilience4rs::init_from_file(&path, catalog).unwrap();
    assert!(live.last_reload_error().is_none());

    // Client errors are ignored: four of them do not open the breaker.
    for _ in 0..4 {
        assert_eq!(
            quote(Some(ApiError::BadRequest)).await,
            Err(ApiError::BadRequest)
        );
    }
    let cb = resilience4rs::global().find("quotes").unwrap();
    assert_eq!(cb.metrics().number_of_buffered_calls, 0);
    // Two server errors in four calls: 50 % >= 50 %, OPEN.
    for e in [
        None,
        None,
        Some(ApiError::Unavailable),
        Some(ApiError::Unavailable),
    ] {
        let _ = quote(e).await;
    }
    assert_eq!(cb.state(), State::Open);
    assert_eq!(quote(None).await, Err(ApiError::Rejected));
    assert!(matches!(
        resilience4rs::init_from_file(&path, ErrorCatalog::new()),
        Err(InitError::AlreadyInitialized(_))
    ));
}
