//! Exports Resilience4j's meters over OTLP (HTTP/protobuf) to an OpenTelemetry collector:
//!
//! ```text
//! cargo run -p breaker-otel --example otlp [ENDPOINT]   # default http://localhost:4318/v1/metrics
//! ```
//!
//! A breaker trips and recovers on a ManualClock while a periodic reader exports every
//! second; the collector receives `resilience4j.circuitbreaker.state`, `...calls`, ... with
//! the `application` and `name` attributes. With no collector listening the exports fail
//! (reported by the SDK's internal logs) and the example still ends.

use std::sync::Arc;
use std::time::Duration;

use breaker_core::{CircuitBreakerConfig, ManualClock, Registry};
use breaker_otel::OtelPublisher;
use opentelemetry::metrics::MeterProvider;
use opentelemetry_otlp::{MetricExporter, WithExportConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "http://localhost:4318/v1/metrics".to_string());
    let exporter = MetricExporter::builder()
        .with_http()
        .with_endpoint(endpoint.clone())
        .with_timeout(Duration::from_secs(2))
        .build()?;
    let reader = PeriodicReader::builder(exporter)
        .with_interval(Duration::from_secs(1))
        .build();
    let provider = SdkMeterProvider::builder().with_reader(reader).build();
    let meter = provider.meter("resilience4j");

    let clock = ManualClock::at_epoch_millis(1_700_000_000_000);
    let registry = Registry::with_default_config(
        CircuitBreakerConfig::builder()
            .sliding_window_size(4)
            .minimum_number_of_calls(4)
            .wait_duration_in_open_state(Duration::from_secs(10))
            .clock(Arc::new(clock.clone()))
            .build()?,
    );
    OtelPublisher::new(&meter, [("application", "checkout")]).bind(&registry);
    let cb = registry.circuit_breaker("paymentService");

    println!("exporting to {endpoint} every second");
    for round in 0..3 {
        for i in 0..4 {
            let _ = cb.call_sync(|| {
                clock.advance(Duration::from_millis(20));
                if round == 0 && i % 2 == 0 {
                    Err(std::io::Error::other("payment provider down"))
                } else {
                    Ok(())
                }
            });
        }
        println!("state: {}", cb.state());
        std::thread::sleep(Duration::from_millis(1200));
        clock.advance(Duration::from_secs(11));
    }
    provider.shutdown()?;
    Ok(())
}
