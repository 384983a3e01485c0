//! `breaker`: checks, explains and simulates Spring Boot circuit-breaker configuration files.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod describe;
mod explain;
mod load;
mod progress;
mod simulate;
mod text;
mod units;

/// Circuit breakers that behave like Resilience4j: configuration tools.
#[derive(Parser, Debug)]
#[command(name = "breaker", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Load Spring Boot files and print the effective configuration of every circuit breaker,
    /// retry, time limiter, bulkhead, thread-pool bulkhead and rate limiter, where each value
    /// came from, the config of names not listed, the aspect order, and the warnings.
    /// Exits 1 if Spring Boot would refuse the files (or, with --strict, on any warning).
    /// Environment variables (RESILIENCE4J_..., SPRING_APPLICATION_JSON) override the files as
    /// they do for the service; the last line counts the errors and warnings.
    Check {
        /// Active Spring profile (repeatable, or comma-separated). Default: SPRING_PROFILES_ACTIVE,
        /// then spring.profiles.active in the files, then `default`.
        #[arg(long = "profile", value_name = "P")]
        profiles: Vec<String>,
        /// Print JSON: the circuit breakers' {"instances", "errors", "defaultConfig"}, the other
        /// modules' {"retry", "timelimiter", "bulkhead", "threadpoolbulkhead", "ratelimiter"}
        /// (each {"instances", "defaultConfig", "errors"}) and "aspectOrder", plus "sources",
        /// "moduleSources", "warnings" and "errorDetails" (each {"file", "line", "column",
        /// "key", "value", "message", "allowed"}).
        #[arg(long)]
        json: bool,
        /// Treat warnings as errors: exit 1 if there is any warning (an unknown or misspelt
        /// key, a Resilience4j 1.x key, ...), so CI catches a typo that Spring would ignore.
        #[arg(long)]
        strict: bool,
        /// application.yml / .yaml / .properties files; later files override earlier ones.
        /// Each is read as Spring Boot reads a `spring.config.location` file: with its
        /// profile-specific files beside it (`application-prod.yml`) and the files it imports
        /// (`spring.config.import`). Without FILE: the files the service would read from the
        /// working directory (`./`, `./config/`, or SPRING_CONFIG_LOCATION, plus
        /// SPRING_CONFIG_ADDITIONAL_LOCATION).
        #[arg(value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    Simulate(simulate::SimulateArgs),
    Explain(explain::ExplainArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check {
            profiles,
            json,
            strict,
            files,
        } => check(profiles, json, strict, &files),
        Command::Simulate(args) => simulate::run(args),
        Command::Explain(args) => explain::run(args),
    }
}

fn check(profiles: Vec<String>, json: bool, strict: bool, files: &[PathBuf]) -> ExitCode {
    let locations = if files.is_empty() {
        breaker_config::ConfigLocations::new()
    } else {
        breaker_config::ConfigLocations::files(files)
    };
    let loader = breaker_config::Loader::new().profiles(profiles);
    let (read, loaded) = match locations.load(&loader) {
        Ok(l) => l,
        Err(e) => {
            if json {
                println!("{}", serde_json::json!({ "loadError": e.to_string() }));
            }
            eprintln!("error: {e}");
            if !json {
                println!("{}", text::counts(1, 0));
            }
            return ExitCode::from(1);
        }
    };
    let errors = loaded.errors();
    let none_found = read.files.is_empty();
    if none_found {
        eprintln!("warning: {}", load::none_found(&read));
    }
    if json {
        let mut report = breaker_config::json::report(&loaded);
        if let Some(map) = report.as_object_mut() {
            map.insert("files".into(), load::files_json(&read));
        }
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("error: {e}"),
        }
    } else {
        print!("{}", load::files_text(&read));
        print!("{}", text::render(&loaded));
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    let warnings = &loaded.warnings;
    let failed_strict = strict && (!warnings.is_empty() || none_found);
    if strict {
        for w in warnings {
            eprintln!("warning: {w}");
        }
        if !warnings.is_empty() {
            eprintln!(
                "error: {} warning{} and --strict",
                warnings.len(),
                if warnings.len() == 1 { "" } else { "s" }
            );
        }
    }
    if !json {
        // Last, after the errors: the count of both, so nothing above an error says "none".
        println!("{}", text::counts(errors.len(), warnings.len()));
    }
    if errors.is_empty() && !failed_strict {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
