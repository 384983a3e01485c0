//! The checkout's client for the payment provider: one async method per remote call, the
//! protected one behind `#[circuit_breaker]`, with a fallback that serves the last good quote.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use resilience4rs::{circuit_breaker, CallError, ErrorCatalog};

/// The breaker the client uses: `resilience4j.circuitbreaker.instances.paymentService`.
pub const BREAKER: &str = "paymentService";

/// An exchange-rate quote.
#[derive(Debug, Clone)]
#[allow(dead_code)] // the demo's callers only look at where a quote came from
pub struct Quote {
    /// Currency code.
    pub currency: String,
    /// Price of one unit in USD.
    pub usd: f64,
    /// Where the value came from.
    pub served: Served,
}

/// Where a quote came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// The provider answered it now.
    Live,
    /// The last good value, because the call failed or was not even attempted.
    Stale {
        /// The breaker rejected the call: it never reached the provider.
        short_circuited: bool,
    },
}

/// What can go wrong calling the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuoteError {
    /// No answer within the client's timeout.
    Timeout,
    /// Connection refused, reset, ...
    Io(String),
    /// An HTTP error status (4xx: our request was bad; 5xx: the provider failed).
    Status(u16),
    /// An answer we cannot read.
    BadBody(String),
    /// The breaker rejected the call and there was no last good value to serve.
    ShortCircuited,
}

impl QuoteError {
    /// A 4xx: the request was wrong, the provider is fine.
    pub fn is_client_error(&self) -> bool {
        matches!(self, QuoteError::Status(s) if (400..500).contains(s))
    }
}

impl fmt::Display for QuoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuoteError::Timeout => f.write_str("timed out"),
            QuoteError::Io(e) => write!(f, "I/O error: {e}"),
            QuoteError::Status(s) => write!(f, "HTTP {s}"),
            QuoteError::BadBody(e) => write!(f, "unreadable answer: {e}"),
            QuoteError::ShortCircuited => f.write_str("circuit open and no last good value"),
        }
    }
}

impl std::error::Error for QuoteError {}

/// Which Java exception names of the Spring file our error values answer to. The file says
/// `recordExceptions: [HttpServerErrorException, TimeoutException, IOException]` and
/// `ignoreExceptions: [HttpClientErrorException]`, so a 4xx is never counted as a failure.
pub fn error_catalog() -> ErrorCatalog {
    ErrorCatalog::new()
        .register(
            "org.springframework.web.client.HttpServerErrorException",
            |e: &QuoteError| matches!(e, QuoteError::Status(s) if *s >= 500),
        )
        .register(
            "org.springframework.web.client.HttpClientErrorException",
            |e: &QuoteError| e.is_client_error(),
        )
        .register("java.util.concurrent.TimeoutException", |e: &QuoteError| {
            matches!(e, QuoteError::Timeout)
        })
        .register("java.io.IOException", |e: &QuoteError| {
            matches!(e, QuoteError::Io(_) | QuoteError::BadBody(_))
        })
}

/// The client. Cheap to clone; clones share the connection pool and the last good values.
#[derive(Clone)]
pub struct PaymentClient {
    http: reqwest::Client,
    base_url: String,
    timeout: Duration,
    last_good: Arc<Mutex<HashMap<String, Quote>>>,
}

impl PaymentClient {
    /// A client for the provider at `base_url` with a per-call `timeout`.
    pub fn new(base_url: String, timeout: Duration) -> Self {
        PaymentClient {
            http: reqwest::Client::new(),
            base_url,
            timeout,
            last_good: Arc::default(),
        }
    }

    /// The quote for `currency`, through the `paymentService` circuit breaker.
    #[circuit_breaker(name = "paymentService", fallback = "last_good_quote")]
    pub async fn quote(&self, currency: String) -> Result<Quote, QuoteError> {
        self.fetch(&currency).await
    }

    /// Called for every failed or rejected `quote`: a bad request stays an error; anything
    /// else gets the last good value, if there is one.
    async fn last_good_quote(
        &self,
        currency: String,
        error: CallError<QuoteError>,
    ) -> Result<Quote, QuoteError> {
        match error {
            CallError::Inner(e) if e.is_client_error() => Err(e),
            CallError::Inner(e) => self.stale(&currency, false).ok_or(e),
            CallError::NotPermitted(_) => self
                .stale(&currency, true)
                .ok_or(QuoteError::ShortCircuited),
        }
    }

    /// The same call and the same fallback policy, without a circuit breaker.
    pub async fn quote_without_breaker(&self, currency: String) -> Result<Quote, QuoteError> {
        match self.fetch(&currency).await {
            Err(e) if !e.is_client_error() => self.stale(&currency, false).ok_or(e),
            other => other,
        }
    }

    fn stale(&self, currency: &str, short_circuited: bool) -> Option<Quote> {
        let cached = self.last_good.lock().unwrap().get(currency).cloned()?;
        Some(Quote {
            served: Served::Stale { short_circuited },
            ..cached
        })
    }

    /// One HTTP call: `GET /quote/{currency}`.
    async fn fetch(&self, currency: &str) -> Result<Quote, QuoteError> {
        let url = format!("{}/quote/{currency}", self.base_url);
        let response = self
            .http
            .get(url)
            .timeout(self.timeout)
            .send()
            .await
            .map_err(from_reqwest)?;
        let status = response.status();
        if !status.is_success() {
            return Err(QuoteError::Status(status.as_u16()));
        }
        let body = response.bytes().await.map_err(from_reqwest)?;
        let value: serde_json::Value =
            serde_json::from_slice(&body).map_err(|e| QuoteError::BadBody(e.to_string()))?;
        let usd = value["usd"]
            .as_f64()
            .ok_or_else(|| QuoteError::BadBody("no usd field".into()))?;
        let quote = Quote {
            currency: currency.to_string(),
            usd,
            served: Served::Live,
        };
        self.last_good
            .lock()
            .unwrap()
            .insert(currency.to_string(), quote.clone());
        Ok(quote)
    }
}

fn from_reqwest(e: reqwest::Error) -> QuoteError {
    if e.is_timeout() {
        QuoteError::Timeout
    } else {
        QuoteError::Io(e.to_string())
    }
}
