//! `breaker simulate`: clients calling one dependency through the real circuit breaker, on
//! virtual time, with and without the breaker.

mod engine;
mod latency;
mod report;
mod scenario;
mod stats;
mod svg;
mod timeline;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use breaker_core::{CircuitBreaker, ManualClock};
use clap::Args;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::load::{self, ConfigFiles};
use crate::progress::Progress;
use crate::units::{self, Span};
pub use engine::EPOCH_NS;
pub use latency::Latency;
use report::Report;
use scenario::{Arrivals, Scenario};
use stats::Collector;
use timeline::Timeline;

/// The flags of `breaker simulate`.
#[derive(Args, Debug)]
#[command(
    about = "Replay traffic and an outage through a circuit breaker from your files, on virtual time",
    long_about = "Replay traffic and an outage through a circuit breaker from your files, on virtual time.\n\n\
Clients call one dependency at a steady average rate (Poisson arrivals). The dependency answers \
after a random latency; during an outage it answers with an error after the outage latency. \
Every call goes through the real circuit breaker (the same state machine your service runs), \
configured from your files as `breaker check` shows it, on a virtual clock: a minute of traffic \
takes milliseconds, a day of traffic at 20 calls/s under half a second of CPU. The same calls are then counted without the breaker.\n\n\
Prints the state transitions with their times, a summary of the outage with and without the \
breaker (calls, how many reached the dependency, mean and p99 latency, time to OPEN after the \
outage began and to CLOSED after it ended) and a per-second table. A call the breaker rejects \
fails at once (0 ms). Every error of the dependency is recorded as a failure.",
    after_help = "Example:\n  breaker simulate application.yml --instance backend --rate 50/s --latency exp:20ms \\\n      --outage 15s..35s --outage-latency 2000ms --duration 60s --seed 1 --svg timeline.svg"
)]
pub struct SimulateArgs {
    #[command(flatten)]
    files: ConfigFiles,
    /// The circuit breaker to simulate: a name under resilience4j.circuitbreaker.instances
    /// (may be left out when the files list exactly one).
    #[arg(long, value_name = "NAME")]
    instance: Option<String>,
    /// Average rate of client calls (Poisson arrivals): 50/s, 3000/min.
    #[arg(long, value_name = "RATE", default_value = "50/s", value_parser = units::rate)]
    rate: f64,
    /// Latency of the healthy dependency: 20ms (constant), exp:20ms (exponential with mean
    /// 20 ms), uniform:10ms..30ms, normal:20ms,5ms (mean, deviation), lognormal:20ms,0.5
    /// (median, sigma).
    #[arg(long, value_name = "DIST", default_value = "exp:20ms", value_parser = Latency::parse)]
    latency: Latency,
    /// Share of healthy calls that fail: 1% or 0.01.
    #[arg(long, value_name = "P", default_value = "0%", value_parser = units::fraction)]
    error_rate: f64,
    /// A window of virtual time in which the dependency is down: START..END, e.g. 15s..35s.
    /// Repeat the flag for several outages.
    #[arg(long = "outage", value_name = "START..END", value_parser = units::span)]
    outages: Vec<Span>,
    /// Latency of a call made during an outage (same forms as --latency); default: the
    /// healthy latency.
    #[arg(long, value_name = "DIST", value_parser = Latency::parse)]
    outage_latency: Option<Latency>,
    /// Share of calls made during an outage that fail (after the outage latency).
    #[arg(long, value_name = "P", default_value = "100%", value_parser = units::fraction)]
    outage_error_rate: f64,
    /// Length of the run in virtual time: 60s, 10m, 24h.
    #[arg(long, value_name = "TIME", default_value = "60s", value_parser = units::positive_duration)]
    duration: Duration,
    /// Seed of the random numbers: the same seed gives the same run.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Also draw the run as an SVG picture (state, latency, calls reaching the dependency).
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Print one JSON object instead of the text report: outage_calls, reached_with_breaker,
    /// reached_without_breaker, mean_latency_ms_with/without, p99_latency_ms_with/without,
    /// open_after_outage_s, closed_after_recovery_s (null when it did not happen),
    /// transitions [{t_s, from, to}], seconds [...] and more.
    #[arg(long)]
    json: bool,
}

/// Runs `breaker simulate`.
pub fn run(args: SimulateArgs) -> ExitCode {
    match simulate(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn simulate(args: SimulateArgs) -> Result<(), String> {
    let loaded = args.files.load()?;
    let name = load::pick_instance(&loaded, args.instance.as_deref())?;
    let clock = ManualClock::default();
    clock.set_epoch_nanos(engine::EPOCH_NS);
    let config = load::core_config(&loaded, &name, &clock)?;
    let config_line = crate::describe::config_line(&config);
    for o in &args.outages {
        if o.start >= args.duration {
            eprintln!(
                "warning: --outage {}..{} starts after the run ends (--duration {})",
                humantime::format_duration(o.start),
                humantime::format_duration(o.end),
                humantime::format_duration(args.duration)
            );
        }
    }
    let scenario = Scenario {
        rate: args.rate,
        outage_latency: args.outage_latency.unwrap_or_else(|| args.latency.clone()),
        latency: args.latency,
        error_rate: args.error_rate,
        outages: args.outages,
        outage_error_rate: args.outage_error_rate,
        duration: args.duration,
    };

    let started = Instant::now();
    let cb = CircuitBreaker::new(name.clone(), config.clone());
    let mut log = engine::TransitionLog::new(&cb);
    let end_ns = scenario.duration.as_nanos() as u64;
    let expected_calls = scenario.rate * scenario.duration.as_secs_f64();
    let mut progress = Progress::new(expected_calls, scenario.duration.as_secs(), "virtual s");
    let mut collector = Collector::default();
    let calls = Arrivals::new(&scenario, ChaCha8Rng::seed_from_u64(args.seed));
    engine::run(&cb, &mut log, &clock, calls, end_ns, |call, admitted| {
        collector.add(call, admitted);
        progress.set(call.at_ns / 1_000_000_000);
    });
    progress.finish();
    let stats = collector.finish(end_ns);
    let wall = started.elapsed();
    let transitions = log.transitions();
    let timeline = Timeline {
        initial: config.initial_state(),
        transitions,
    };
    let report = Report {
        instance: &name,
        config_line,
        scenario: &scenario,
        seed: args.seed,
        stats,
        timeline,
        wall,
    };
    if let Some(path) = &args.svg {
        svg::write(path, &report.picture())?;
    }
    if args.json {
        let v = report.json();
        println!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", report.text());
        if let Some(path) = &args.svg {
            println!("\nTimeline drawn in {}", path.display());
        }
    }
    Ok(())
}
