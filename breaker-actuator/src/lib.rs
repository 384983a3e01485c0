//! Spring Boot Actuator's Resilience4j endpoints for breaker, as an [`axum::Router`]
//! (integration spec §4, §5), with the JSON Resilience4j's endpoints produce:
//!
//! | path (under `management.endpoints.web.base-path`, `/actuator`) | what |
//! |---|---|
//! | `GET /actuator` | `_links` to every exposed endpoint |
//! | `GET /actuator/health`, `/health/{component}`, `/health/{component}/{name}` | status, and the `circuitBreakers`, `rateLimiters` and `ping` components when shown |
//! | `GET /actuator/circuitbreakers` | every breaker's rates, counts and state |
//! | `POST /actuator/circuitbreakers/{name}` | `{"updateState": "CLOSE" \| "FORCE_OPEN" \| "DISABLE"}`, when turned on |
//! | `GET /actuator/circuitbreakerevents`, `/{name}`, `/{name}/{eventType}` | recent events |
//! | `GET /actuator/retries`, `/retryevents...` | retry names, recent events |
//! | `GET /actuator/bulkheads`, `/bulkheadevents...` | semaphore and thread-pool bulkheads |
//! | `GET /actuator/ratelimiters`, `/ratelimiterevents...` | rate limiters (events with `subscribeForEvents`) |
//! | `GET /actuator/timelimiters`, `/timelimiterevents...` | time limiters |
//! | `GET /actuator/prometheus` | every meter, Resilience4j's names (feature `prometheus`) |
//!
//! ```no_run
//! use breaker_actuator::{install_prometheus_recorder, Actuator};
//! use breaker_config::{LiveConfig, Loader};
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let live = LiveConfig::load(&["application.yml"], Loader::new(), Default::default())?;
//! let handle = install_prometheus_recorder(&live.management())?;
//! let app = Actuator::from_live(&live).prometheus(handle).router();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8081").await?;
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```
//!
//! Reads never wait for a call: they take the snapshot each instance offers (a breaker's
//! metrics under its short lock, a copy of an event buffer).
//!
//! # Where this differs from Spring Boot
//!
//! - `creationTime` is printed in UTC (`2026-11-30T19:37:45.132172896Z`), Java's
//!   `ZonedDateTime.toString()` for the zone `Z`, whatever the machine's zone.
//! - A circuit breaker event's `errorMessage` is `class: message` as Resilience4j writes it,
//!   with the error's Rust type name as the class; the message is there when the type shows
//!   it without a `Display` bound (a boxed `dyn Error` such as tower's `BoxError`,
//!   `std::io::Error`, `String`), else the class stands alone (Java's `toString()` of an
//!   exception without a message). An outcome recorded on a `Permit` without the error has
//!   none.
//! - `POST /actuator/circuitbreakers/{name}` is off unless turned on (403), and for a name
//!   the registry does not have answers 404 without creating a breaker. Like Spring Boot's
//!   write operations it consumes only `application/vnd.spring-boot.actuator.v3+json`,
//!   `application/vnd.spring-boot.actuator.v2+json` and `application/json` (parameters such
//!   as `charset` allowed): any other `Content-Type`, or none, is a 415, so a cross-site form
//!   cannot change a state.
//! - An unknown `{eventType}` is a 400 listing the types (Spring answers 500).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod actuator;
mod drill;
mod dto;
mod events;
mod health;
mod media;
mod prometheus;
mod response;
mod router;
#[cfg(feature = "serve")]
mod serve;
mod time;

pub use actuator::{Actuator, RateLimiterSettings};
#[cfg(feature = "prometheus")]
pub use prometheus::{install_prometheus_recorder, prometheus_builder, TIMER_BUCKETS};
#[cfg(feature = "serve")]
pub use serve::{serve, ServeTimeouts};
pub use time::zoned_date_time;
