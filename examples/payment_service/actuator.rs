//! The service's actuator, as a Spring Boot service has one: `/actuator/*` (health, the
//! circuit breakers, their events, ...) and `/actuator/prometheus`, served by
//! breaker-actuator from the same live config, on a port of its own.

use breaker_actuator::{install_prometheus_recorder, Actuator};
use breaker_config::LiveConfig;

/// Serves the actuator on 127.0.0.1:`port` (0: any free port) for as long as the runtime
/// runs; returns its URL, e.g. `http://127.0.0.1:8081/actuator`.
pub async fn start(live: &LiveConfig, port: u16) -> Result<String, String> {
    let management = live.management();
    let mut actuator = Actuator::from_live(live);
    match install_prometheus_recorder(&management) {
        Ok(handle) => actuator = actuator.prometheus(handle),
        // Another recorder is installed (a second run in one process): no /prometheus.
        Err(e) => eprintln!("actuator: no /prometheus: {e}"),
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| format!("--actuator-port {port}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let router = actuator.router();
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            eprintln!("actuator: {e}");
        }
    });
    let base = if management.base_path == "/" {
        String::new()
    } else {
        management.base_path
    };
    Ok(format!("http://{addr}{base}"))
}
