//! `cargo run --example payment_service`: a checkout service rides out its payment provider's
//! outage, then a slow spell, behind a retry, a circuit breaker, a rate limiter, a time limiter
//! and a bulkhead stacked on one method and configured by an unchanged Spring Boot
//! `application.yml`.
//!
//! `cargo run --example payment_service -- --help` lists the flags. Logs (transitions,
//! rejection summaries, reloads) go to stderr, filtered by `RUST_LOG` (errors only when
//! unset): `RUST_LOG=breaker=info cargo run --example payment_service`. The parts, one per file:
//! `flags` (command line), `config` (the Spring file, live), `downstream` (the provider, an
//! axum server), `client` (reqwest + the stacked attributes + fallback), `layers` (the stack's summary), `traffic` (Poisson
//! arrivals), `stats` / `table` / `events` / `summary` (what is printed), `app` (the run).

use std::process::ExitCode;

// `#[path]` makes `app.rs` a directory-owning module here and in the test alike, so its
// submodules are the sibling files either way.
#[path = "app.rs"]
mod app;

#[tokio::main]
async fn main() -> ExitCode {
    // `RUST_LOG` picks what is shown (`breaker=info`, `breaker::circuit_breaker=debug`, ...).
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    match app::run_with_args(std::env::args_os()).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("payment_service: {e}");
            ExitCode::FAILURE
        }
    }
}
