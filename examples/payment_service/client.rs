//! The checkout's client for the payment provider: one async method per remote call, the
//! protected one behind the whole stack (`#[retry]`, `#[circuit_breaker]`, `#[rate_limiter]`,
//! `#[time_limiter]`, `#[bulkhead]`, nested by the file's aspect orders), with a fallback on
//! the retry (the outermost layer) that serves the last good quote.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use resilience4rs::bulkhead::BulkheadFullException;
use resilience4rs::ratelimiter::RequestNotPermitted;
use resilience4rs::retry::MaxRetriesExceeded;
use resilience4rs::timelimiter::Timeout;
use resilience4rs::{
    bulkhead, circuit_breaker, rate_limiter, retry, time_limiter, CallNotPermitted, ErrorCatalog,
    ModuleRegistries, StackError,
};

/// The breaker the client uses: `resilience4j.circuitbreaker.instances.paymentService`.
pub const BREAKER: &str = "paymentService";

tokio::task_local! {
    /// The id of the client call running in this task: every HTTP attempt sends it to the
    /// provider, which counts the calls it sees (`stats::SeenCalls`).
    pub static CALL_ID: u64;
}

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
    /// The last good value, because the bulkhead or the rate limiter shed the call: it never
    /// reached the provider.
    Shed,
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
    /// The bulkhead or the rate limiter shed the call and there was no last good value.
    Shed(String),
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
            QuoteError::Shed(e) => write!(f, "{e} and no last good value"),
        }
    }
}

impl std::error::Error for QuoteError {}

// A layer without a fallback hands its rejection to the caller as the fn's own error type.
impl From<CallNotPermitted> for QuoteError {
    fn from(_: CallNotPermitted) -> Self {
        QuoteError::ShortCircuited
    }
}
impl From<Timeout> for QuoteError {
    fn from(_: Timeout) -> Self {
        QuoteError::Timeout
    }
}
impl From<BulkheadFullException> for QuoteError {
    fn from(e: BulkheadFullException) -> Self {
        QuoteError::Shed(e.to_string())
    }
}
impl From<RequestNotPermitted> for QuoteError {
    fn from(e: RequestNotPermitted) -> Self {
        QuoteError::Shed(e.to_string())
    }
}
impl From<MaxRetriesExceeded> for QuoteError {
    fn from(e: MaxRetriesExceeded) -> Self {
        QuoteError::Io(e.to_string())
    }
}

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
        // The layers' own exceptions, as Resilience4j names them: the time limiter's timeout
        // is a `TimeoutException` too.
        .register_type::<Timeout>("java.util.concurrent.TimeoutException")
        .register_type::<CallNotPermitted>(
            "io.github.resilience4j.circuitbreaker.CallNotPermittedException",
        )
        .register_type::<BulkheadFullException>(
            "io.github.resilience4j.bulkhead.BulkheadFullException",
        )
        .register_type::<RequestNotPermitted>(
            "io.github.resilience4j.ratelimiter.RequestNotPermitted",
        )
}

/// What the client counts of its own calls: the provider calls in flight (and their
/// maximum), and the calls the fallback answered for each layer that shed them.
#[derive(Default, Debug)]
pub struct ClientCounters {
    in_flight: AtomicUsize,
    /// The most provider calls in flight at once.
    pub max_in_flight: AtomicUsize,
    /// Calls the bulkhead rejected, answered by the fallback.
    pub fallback_bulkhead: AtomicU64,
    /// Calls the rate limiter refused, answered by the fallback.
    pub fallback_rate_limiter: AtomicU64,
}

/// Decrements the in-flight count when a provider call ends, however it ends.
struct InFlight<'a>(&'a ClientCounters);

impl<'a> InFlight<'a> {
    fn enter(c: &'a ClientCounters) -> Self {
        let now = c.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        c.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(c)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The client. Cheap to clone; clones share the connection pool and the last good values.
#[derive(Clone)]
pub struct PaymentClient {
    http: reqwest::Client,
    base_url: String,
    timeout: Duration,
    last_good: Arc<Mutex<HashMap<String, Quote>>>,
    /// The retry and time limiter of the comparison client ("retry alone"): loaded from the
    /// same file, apart from the global ones the protected `quote` uses.
    modules: ModuleRegistries,
    /// What this client counted.
    pub counters: Arc<ClientCounters>,
}

impl PaymentClient {
    /// A client for the provider at `base_url` with a per-call HTTP `timeout`; `modules` are
    /// the registries `quote_retry_only` uses.
    pub fn new(base_url: String, timeout: Duration, modules: ModuleRegistries) -> Self {
        PaymentClient {
            http: reqwest::Client::new(),
            base_url,
            timeout,
            last_good: Arc::default(),
            modules,
            counters: Arc::default(),
        }
    }

    /// The quote for `currency`, through the `paymentService` instances of every module,
    /// nested as Spring nests them: `Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(
    /// fetch)))))` with the file's (default) aspect orders, whatever the order written here.
    #[retry(name = "paymentService", fallback = "last_good_quote")]
    #[circuit_breaker(name = "paymentService")]
    #[rate_limiter(name = "paymentService")]
    #[time_limiter(name = "paymentService")]
    #[bulkhead(name = "paymentService")]
    pub async fn quote(&self, currency: String) -> Result<Quote, QuoteError> {
        self.fetch(&currency).await
    }

    /// Called for every failed or rejected `quote`, with what escaped the retry (the last
    /// attempt's error, or a layer's rejection): a bad request stays an error; anything else
    /// gets the last good value, if there is one.
    async fn last_good_quote(
        &self,
        currency: String,
        error: StackError<QuoteError>,
    ) -> Result<Quote, QuoteError> {
        match error {
            StackError::Inner(e) if e.is_client_error() => Err(e),
            StackError::Inner(e) => self
                .stale(
                    &currency,
                    Served::Stale {
                        short_circuited: false,
                    },
                )
                .ok_or(e),
            StackError::Timeout(_) => self
                .stale(
                    &currency,
                    Served::Stale {
                        short_circuited: false,
                    },
                )
                .ok_or(QuoteError::Timeout),
            StackError::CallNotPermitted(_) => self
                .stale(
                    &currency,
                    Served::Stale {
                        short_circuited: true,
                    },
                )
                .ok_or(QuoteError::ShortCircuited),
            StackError::BulkheadFull(_) => {
                self.counters
                    .fallback_bulkhead
                    .fetch_add(1, Ordering::Relaxed);
                self.stale(&currency, Served::Shed)
                    .ok_or_else(|| QuoteError::Shed(error.to_string()))
            }
            StackError::RequestNotPermitted(_) => {
                self.counters
                    .fallback_rate_limiter
                    .fetch_add(1, Ordering::Relaxed);
                self.stale(&currency, Served::Shed)
                    .ok_or_else(|| QuoteError::Shed(error.to_string()))
            }
            other => Err(QuoteError::Io(other.to_string())),
        }
    }

    /// The same call and the same fallback policy with retry (and its time limiter) alone:
    /// no breaker, no bulkhead, no rate limiter. Instances of its own registries.
    #[retry(name = "paymentService", registry = self.modules.retry, fallback = "last_good_quote")]
    #[time_limiter(name = "paymentService", registry = self.modules.time_limiter)]
    pub async fn quote_retry_only(&self, currency: String) -> Result<Quote, QuoteError> {
        self.fetch(&currency).await
    }

    fn stale(&self, currency: &str, served: Served) -> Option<Quote> {
        let cached = self.last_good.lock().unwrap().get(currency).cloned()?;
        Some(Quote { served, ..cached })
    }

    /// One HTTP call: `GET /quote/{currency}`.
    async fn fetch(&self, currency: &str) -> Result<Quote, QuoteError> {
        let _in_flight = InFlight::enter(&self.counters);
        let url = format!("{}/quote/{currency}", self.base_url);
        let mut request = self.http.get(url).timeout(self.timeout);
        if let Ok(id) = CALL_ID.try_with(|id| *id) {
            request = request.header(super::downstream::CALL_ID_HEADER, id.to_string());
        }
        let response = request.send().await.map_err(from_reqwest)?;
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
