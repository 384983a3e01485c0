//! `breaker explain`: what a circuit-breaker config does, in numbers: failures that open it,
//! time to detect a dead dependency, accidental trips on a healthy one, and a retry's
//! worst case against a budget.

mod binomial;
mod probe;
mod report;
mod retry_budget;
mod retry_config;
mod trips;

use std::process::ExitCode;
use std::time::Duration;

use breaker_core::{CircuitBreakerConfig, ManualClock, SlidingWindowType};
use clap::Args;

use crate::load::{self, ConfigFiles};
use crate::progress::Progress;
use crate::units;
use binomial::DAY_S;
use report::{Explained, RetryFinding, TripRow};
use retry_budget::RetryPlan;
use trips::Traffic;

/// The flags of `breaker explain`.
#[derive(Args, Debug)]
#[command(
    about = "Explain in numbers what each circuit breaker in your files will do",
    long_about = "Explain in numbers what each circuit breaker in your files will do.\n\n\
For each instance (loaded as `breaker check` loads it):\n\
  - how many failures in a row open it, when its window is full of successes and when it is fresh;\n\
  - how long it takes to notice a dependency that fails every call, at --rate;\n\
  - how often it opens by accident on a healthy dependency that fails --error-rate of calls:\n\
    the simple binomial estimate (independent errors, disjoint windows: the probability that\n\
    enough calls of one window fail, times the windows in a day), next to the true figure for\n\
    the real sliding window, measured by simulating --days days of traffic through the real\n\
    state machine on virtual time;\n\
  - with a retry section and --budget: the worst-case time of all attempts against the budget.",
    after_help = "Example:\n  breaker explain application.yml --instance backend --error-rate 1%,5% --rate 20/s --budget 10s"
)]
pub struct ExplainArgs {
    #[command(flatten)]
    files: ConfigFiles,
    /// The circuit breaker to explain (repeatable); default: every instance in the files.
    #[arg(long = "instance", value_name = "NAME")]
    instances: Vec<String>,
    /// Shares of healthy calls that fail, comma-separated: 1%,5% (or 0.01,0.05).
    #[arg(long, value_name = "P,..", default_value = "1%,5%", value_delimiter = ',', value_parser = units::fraction)]
    error_rate: Vec<f64>,
    /// Average rate of calls through the breaker: 20/s, 1200/min.
    #[arg(long, value_name = "RATE", default_value = "20/s", value_parser = units::rate)]
    rate: f64,
    /// Days of traffic to simulate for each error rate (0: the binomial estimate only).
    #[arg(long, value_name = "DAYS", default_value = "7", value_parser = days)]
    days: f64,
    /// Seed of the random numbers of the simulation.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// A caller's time budget for one retried call (e.g. 10s), checked against the retry's
    /// worst case.
    #[arg(long, value_name = "TIME", value_parser = units::duration)]
    budget: Option<Duration>,
    /// Print one JSON object instead of the text report: per instance failures_to_open,
    /// failures_to_open_fresh, detection_s and false_trips_per_day [{error_rate,
    /// calls_per_s, binomial, simulated, ...}].
    #[arg(long)]
    json: bool,
}

fn days(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(d) if d.is_finite() && (0.0..=3650.0).contains(&d) => Ok(d),
        _ => Err(format!(
            "'{s}' is not a number of days between 0 and 3650; write e.g. 7 or 0.5"
        )),
    }
}

/// Runs `breaker explain`.
pub fn run(args: ExplainArgs) -> ExitCode {
    match explain(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// The binomial estimate for `config`: count windows hold `slidingWindowSize` calls; time
/// windows hold the calls of `slidingWindowSize` seconds at `calls_per_s` (rounded), and
/// cannot trip when that is below `minimumNumberOfCalls`.
fn binomial_estimate(config: &CircuitBreakerConfig, p: f64, calls_per_s: f64) -> f64 {
    let size = config.sliding_window_size();
    let threshold = config.failure_rate_threshold();
    match config.sliding_window_type() {
        SlidingWindowType::CountBased => binomial::trips_per_day(size, threshold, p, calls_per_s),
        SlidingWindowType::TimeBased => {
            let n = (f64::from(size) * calls_per_s).round() as u32;
            if n == 0 || n < config.minimum_number_of_calls() {
                return 0.0;
            }
            // trips_per_day counts calls_per_s * day / n windows; a time window is
            // `size` seconds, so that is day / size windows.
            binomial::trips_per_day(n, threshold, p, calls_per_s)
        }
    }
}

fn explain(args: ExplainArgs) -> Result<(), String> {
    let loaded = args.files.load()?;
    let mut names = args.instances.clone();
    if names.is_empty() {
        names = load::instance_names(&loaded);
    }
    if names.is_empty() {
        eprintln!(
            "note: the files list no instance; explaining the default config (what any name gets)"
        );
        names.push("default".into());
    }
    let configs: Vec<(String, CircuitBreakerConfig)> = names
        .iter()
        .map(|n| {
            Ok((
                n.clone(),
                load::core_config(&loaded, n, &ManualClock::default())?,
            ))
        })
        .collect::<Result<_, String>>()?;

    let sims = (configs.len() * args.error_rate.len()) as f64;
    let seconds_each = (args.days * DAY_S) as u64;
    let mut progress = Progress::new(
        sims * args.days * DAY_S * args.rate,
        seconds_each * sims as u64,
        "virtual s",
    );
    let mut explained = Vec::new();
    for (i, (name, config)) in configs.iter().enumerate() {
        let detection = probe::detection(config, name, args.rate)?;
        let mut rows = Vec::new();
        for (j, &p) in args.error_rate.iter().enumerate() {
            let simulated = if args.days > 0.0 {
                let k = (i * args.error_rate.len() + j) as u64;
                let traffic = Traffic {
                    calls_per_s: args.rate,
                    error_rate: p,
                    days: args.days,
                    seed: args.seed.wrapping_add(k),
                };
                Some(trips::measure(
                    config,
                    name,
                    traffic,
                    &mut progress,
                    k * seconds_each,
                )?)
            } else {
                None
            };
            rows.push(TripRow {
                error_rate: p,
                calls_per_s: args.rate,
                binomial: binomial_estimate(config, p, args.rate),
                simulated,
            });
        }
        explained.push(Explained {
            name: name.clone(),
            config: config.clone(),
            detection,
            trips: rows,
            retry: retry_finding(&loaded, name, args.budget),
        });
    }
    progress.finish();
    if args.budget.is_some() && !retry_config::has_section(&loaded, "retry") {
        eprintln!("note: --budget: the files have no resilience4j.retry section, so there is no retry to check against it");
    }
    if args.json {
        let v = report::json(&explained, args.rate, args.days);
        println!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", report::text(&explained, args.rate, args.days));
    }
    Ok(())
}

fn retry_finding(
    loaded: &breaker_config::Loaded,
    name: &str,
    budget: Option<Duration>,
) -> RetryFinding {
    match retry_config::retry_plan(loaded, name) {
        Ok(Some(plan)) => RetryFinding::Plan {
            plan,
            budget,
            fit: budget.map(|b| RetryPlan::fit(&plan, b)),
        },
        Ok(None) => RetryFinding::NoRetry,
        Err(why) => RetryFinding::Unbounded(why),
    }
}
