//! Command-line flags. Durations use the syntax of `application.yml`: a whole number with an
//! optional unit (`ns`, `us`, `ms`, `s`, `m`, `h`, `d`); a bare number is milliseconds.

use std::ops::Range;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

/// The example's own copy of the Spring file, found from any working directory.
pub const DEFAULT_CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/application.yml");

/// A checkout service rides out its payment provider's outage behind a circuit breaker.
///
/// The checkout calls the provider over HTTP through the `paymentService` circuit breaker,
/// configured by an unchanged Spring Boot application.yml. The provider goes down for a while;
/// the same Poisson traffic also runs without a breaker, and the two are compared. Halfway,
/// the run edits its copy of the config and the breaker picks the change up live.
#[derive(Parser, Debug, Clone)]
#[command(name = "payment_service", version)]
#[command(
    after_help = "Durations as in application.yml: 500ms, 10s, 2m (a bare number is ms).\n\
    Example: cargo run --example payment_service -- --duration 12s --outage 3s..8s --seed 7"
)]
pub struct Flags {
    /// Spring Boot config file [default: examples/application.yml]
    ///
    /// The run edits a temporary copy of it, never the file itself.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_CONFIG, hide_default_value = true)]
    pub config: PathBuf,

    /// How long to send traffic
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = duration)]
    pub duration: Duration,

    /// When the payment provider is down, from..to, measured from the start
    #[arg(long, value_name = "FROM..TO", default_value = "5s..13s", value_parser = window)]
    pub outage: Range<Duration>,

    /// Mean request rate (requests per second, Poisson arrivals)
    #[arg(long, value_name = "PER_SECOND", default_value_t = 50.0)]
    pub rate: f64,

    /// Seed of the traffic generator (same seed, same traffic)
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,

    /// Skip the comparison run without a circuit breaker
    #[arg(long)]
    pub no_baseline: bool,

    /// Write every state transition as a JSON line to FILE
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,

    /// What the provider does during the outage
    #[arg(long, value_name = "MODE", value_enum, default_value_t = OutageMode::Hang)]
    pub outage_mode: OutageMode,

    /// Per-call HTTP timeout of the client
    #[arg(long, value_name = "DURATION", default_value = "500ms", value_parser = duration)]
    pub timeout: Duration,

    /// When to edit the working copy of the config [default: half the duration]
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub reload_at: Option<Duration>,

    /// The new waitDurationInOpenState written into the working copy
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = duration)]
    pub reload_wait: Duration,

    /// Do not edit the config during the run
    #[arg(long)]
    pub no_reload: bool,

    /// Also print the summary as one machine-readable line at the end: `SUMMARY {json}`
    #[arg(long)]
    pub summary_json: bool,

    /// Serve /actuator/* and /actuator/prometheus on this port of 127.0.0.1 [default: any
    /// free port]
    #[arg(
        long,
        value_name = "PORT",
        default_value_t = 0,
        hide_default_value = true
    )]
    pub actuator_port: u16,
}

/// The provider's behaviour while it is down.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutageMode {
    /// Requests hang past the client's timeout (a dead or overloaded service)
    Hang,
    /// Requests get an immediate 503 Service Unavailable
    Error,
}

impl Flags {
    /// When the config edit happens, if it does.
    pub fn reload_time(&self) -> Option<Duration> {
        (!self.no_reload).then(|| self.reload_at.unwrap_or(self.duration / 2))
    }

    /// Checks what clap cannot: rates and windows that make sense together.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.rate > 0.0 && self.rate <= 2000.0) {
            return Err(format!(
                "--rate {} must be above 0 and at most 2000",
                self.rate
            ));
        }
        if self.duration.is_zero() {
            return Err("--duration must be above 0".into());
        }
        if self.timeout.is_zero() {
            return Err("--timeout must be above 0".into());
        }
        Ok(())
    }
}

/// Parses `500ms`, `10s`, `2m`, ... (Spring's simple duration format; bare numbers are ms).
pub fn duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = t.split_at(digits);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration (write e.g. 500ms, 10s, 2m)"))?;
    let d = match unit.to_ascii_lowercase().as_str() {
        "ns" => Duration::from_nanos(n),
        "us" => Duration::from_micros(n),
        "" | "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        "d" => Duration::from_secs(n.saturating_mul(86_400)),
        _ => {
            return Err(format!(
                "'{text}': unknown unit '{unit}' (ns, us, ms, s, m, h, d)"
            ))
        }
    };
    Ok(d)
}

/// Parses `5s..13s`.
pub fn window(text: &str) -> Result<Range<Duration>, String> {
    let (from, to) = text
        .split_once("..")
        .ok_or_else(|| format!("'{text}' is not a window (write FROM..TO, e.g. 5s..13s)"))?;
    let (from, to) = (duration(from)?, duration(to)?);
    if from >= to {
        return Err(format!("'{text}': the outage must end after it starts"));
    }
    Ok(from..to)
}

/// Formats a duration as short as the yml would write it (`500ms`, `2s`, `1.5s`).
pub fn show(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        format!("{}us", d.as_micros())
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.2}s", d.as_secs_f64())
    }
}
