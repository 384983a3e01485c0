//! The whole run: load the Spring file, start the provider(s), send the traffic with and
//! without the breaker, edit the config halfway, print the log, the table and the summary.
//!
//! Shared by the example's `main.rs` and by `tests/example_payment_service.rs`, which runs it
//! in-process with a short schedule and asserts on the returned summary.

mod actuator;
mod client;
mod config;
mod downstream;
mod events;
pub mod flags;
mod layers;
mod stats;
mod style;
mod summary;
pub mod table;
mod traffic;

use std::ffi::OsString;
use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_config::ReloadEvent;
use clap::Parser;
use resilience4rs::{CircuitBreaker, State};
use serde_json::{json, Value};

use client::{PaymentClient, BREAKER};
use config::{short_class, Change, LiveFile};
use flags::{show, Flags, OutageMode};
use stats::{Epoch, Recorder, SeenCalls};
use summary::ReloadInfo;
use traffic::Protection;

/// Parses `args` (clap prints `--help` and usage errors and exits), runs, and returns the
/// summary JSON, or a message for the user.
#[cfg_attr(test, allow(dead_code))] // the test uses run_with_args_notify
pub async fn run_with_args<I, T>(args: I) -> Result<Value, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    run_with_args_notify(args, |_| {}).await
}

/// [`run_with_args`], handing the actuator's URL (as printed) to `on_actuator` once it
/// serves.
pub async fn run_with_args_notify<I, T>(
    args: I,
    on_actuator: impl FnOnce(String),
) -> Result<Value, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let flags = Flags::parse_from(args);
    flags.validate()?;
    run(flags, on_actuator).await
}

async fn run(flags: Flags, on_actuator: impl FnOnce(String)) -> Result<Value, String> {
    // Work on a copy: the reload step edits it, the user's file stays as it is.
    let dir =
        tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let copy_name = flags
        .config
        .file_name()
        .unwrap_or("application.yml".as_ref());
    let working = dir.path().join(copy_name);
    std::fs::copy(&flags.config, &working)
        .map_err(|e| format!("{}: {e}", flags.config.display()))?;

    let catalog = client::error_catalog();
    let (live, warnings) = LiveFile::load(&working, catalog.clone())?;
    // Every module's registry and the aspect orders, for the attributes of `client`.
    resilience4rs::init_live(live.live()).map_err(|e| e.to_string())?;
    // Transitions, rejection summaries and reloads as `tracing` events (main.rs shows them).
    live.live().trace_events();
    let cb = resilience4rs::global().circuit_breaker(BREAKER);
    let rejections = layers::Rejections::attach();
    // The retry-alone client's retry and time limiter: the same file, its own instances.
    let retry_only_modules = breaker_config::LiveConfig::load(
        &[&working],
        breaker_config::Loader::new(),
        catalog.clone(),
    )
    .map_err(|e| e.to_string())?
    .module_registries()
    .clone();
    let events_file = match &flags.events {
        Some(p) => Some(File::create(p).map_err(|e| format!("{}: {e}", p.display()))?),
        None => None,
    };

    let actuator_url = actuator::start(live.live(), flags.actuator_port).await?;
    let epoch = Epoch::now();
    let started_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let events = events::EventLog::attach(&cb, epoch, events_file);
    let outage = flags.outage.clone();
    // Each provider notes the client calls it receives requests for (the summary's count).
    let (provider_seen, baseline_seen) = (
        Arc::new(SeenCalls::default()),
        Arc::new(SeenCalls::default()),
    );
    let provider = downstream::start(
        epoch,
        outage.clone(),
        flags.slow_window(),
        flags.outage_mode,
        provider_seen.clone(),
    )
    .await
    .map_err(|e| e.to_string())?;
    let baseline_provider = match flags.no_baseline {
        true => None,
        false => Some(
            downstream::start(
                epoch,
                outage.clone(),
                flags.slow_window(),
                flags.outage_mode,
                baseline_seen.clone(),
            )
            .await
            .map_err(|e| e.to_string())?,
        ),
    };

    let bad_burst = traffic::bad_burst(&outage).filter(|w| w.end <= flags.duration);
    print_banner(
        &flags,
        &live,
        &warnings,
        &provider.url,
        baseline_provider.as_ref().map(|d| d.url.as_str()),
    );
    println!("actuator: {actuator_url}");
    on_actuator(actuator_url);
    let seconds = flags.duration.as_secs_f64().ceil() as usize;
    let arrivals = Arc::new(traffic::schedule(
        flags.seed,
        flags.rate,
        flags.duration,
        bad_burst.clone(),
        flags.slow_window(),
    ));
    let breaker_calls = Arc::new(Recorder::new(seconds, provider_seen.clone()));
    let baseline_calls = baseline_provider
        .as_ref()
        .map(|_| Arc::new(Recorder::new(seconds, baseline_seen.clone())));

    let reloads = Arc::new(Mutex::new(Vec::new()));
    let name = file_name(&live.path().to_string_lossy());
    live.on_reload(on_reload(name, cb.clone(), epoch, reloads.clone()));
    let _watch = live.watch()?;
    let live = Arc::new(live);
    let edit = flags.reload_time().map(|at| {
        tokio::spawn(edit_config(
            live.clone(),
            cb.clone(),
            epoch,
            at,
            flags.reload_wait,
        ))
    });

    let table = table::Table {
        expected: traffic::per_second(&arrivals, seconds),
        breaker: breaker_calls.clone(),
        baseline: baseline_calls.clone(),
        events: events.clone(),
        outage: outage.clone(),
    };
    let with_breaker = PaymentClient::new(
        provider.url.clone(),
        flags.timeout,
        resilience4rs::ModuleRegistries::default(),
    );
    let counters = with_breaker.counters.clone();
    let protected = traffic::run(
        arrivals.clone(),
        with_breaker,
        Protection::Breaker,
        epoch,
        breaker_calls.clone(),
    );
    let unprotected = async {
        if let (Some(p), Some(rec)) = (&baseline_provider, &baseline_calls) {
            let client = PaymentClient::new(p.url.clone(), flags.timeout, retry_only_modules);
            traffic::run(
                arrivals.clone(),
                client,
                Protection::None,
                epoch,
                rec.clone(),
            )
            .await;
        }
    };
    tokio::join!(protected, unprotected, table.print_live());

    let edited = match edit {
        Some(task) => task.await.map_err(|e| e.to_string())?.map(Some),
        None => Ok(None),
    };
    // Give a just-written edit a moment to be picked up.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let reload = edited.and_then(|edit| {
        let Some((edited_at, state, calls)) = edit else {
            return Ok(None);
        };
        let first = reloads.lock().unwrap().first().cloned();
        first
            .map(|r: ReloadInfo| {
                let state = (state, r.state.1);
                let window_calls = (calls, r.window_calls.1);
                Some(ReloadInfo {
                    edited_at,
                    state,
                    window_calls,
                    ..r
                })
            })
            .ok_or_else(|| "the edit was not picked up".to_string())
    });
    let inputs = summary::Inputs {
        outage,
        bad_burst,
        timeout: flags.timeout,
        breaker: breaker_calls,
        baseline: baseline_calls,
        events,
        final_state: cb.state(),
        reload,
        run: json!({
            "seed": flags.seed,
            "rate": flags.rate,
            "duration_s": flags.duration.as_secs_f64(),
            "timeout_ms": flags.timeout.as_millis() as u64,
            "outage_mode": format!("{:?}", flags.outage_mode).to_lowercase(),
            "provider_requests": provider.received.load(std::sync::atomic::Ordering::Relaxed),
            "started_unix_ms": started_unix_ms,
        }),
        shed: rejections
            .bulkhead
            .load(std::sync::atomic::Ordering::Relaxed)
            + rejections
                .rate_limiter
                .load(std::sync::atomic::Ordering::Relaxed),
    };
    let mut summary = summary::report(&inputs);
    let stack = layers::report(&layers::Inputs {
        outage: inputs.outage.clone(),
        slow: flags.slow_window(),
        stacked: &inputs.breaker,
        retry_only: inputs.baseline.as_deref(),
        provider_outage_requests: (
            provider
                .received_in_outage
                .load(std::sync::atomic::Ordering::Relaxed),
            baseline_provider.as_ref().map(|p| {
                p.received_in_outage
                    .load(std::sync::atomic::Ordering::Relaxed)
            }),
        ),
        counters: &counters,
        rejections: &rejections,
    });
    if let Some(obj) = summary.as_object_mut() {
        let ok = obj.get("ok").and_then(Value::as_bool).unwrap_or(false)
            && stack["ok"].as_bool().unwrap_or(false);
        obj.insert("stack".into(), stack);
        obj.insert("ok".into(), json!(ok));
    }
    if let Some(line) = summary_line(&flags, &summary) {
        println!("{line}");
    }
    Ok(summary)
}

/// The machine-readable last line, printed only with `--summary-json`.
pub fn summary_line(flags: &Flags, summary: &Value) -> Option<String> {
    flags.summary_json.then(|| format!("SUMMARY {summary}"))
}

/// The banner's traffic line: the rate, the share of bad requests throughout the run, and
/// the second in which every request is a bad one.
pub fn traffic_text(flags: &Flags) -> String {
    let burst = traffic::bad_burst(&flags.outage)
        .filter(|w| w.end <= flags.duration)
        .map(|w| {
            format!(
                ", plus every request from {} to {}",
                show(w.start),
                show(w.end)
            )
        })
        .unwrap_or_default();
    format!(
        "Poisson, {} req/s for {}, seed {}; {:.0}% of requests throughout ask for an unknown currency (404){burst}",
        flags.rate,
        show(flags.duration),
        flags.seed,
        100.0 * traffic::BAD_REQUEST_SHARE,
    )
}

fn print_banner(
    flags: &Flags,
    live: &LiveFile,
    warnings: &[String],
    url: &str,
    baseline_url: Option<&str>,
) {
    let label = |s: &str| style::bold(&format!("  {s:<9}"));
    println!(
        "{}\n",
        style::bold(
            "payment_service: a checkout asks its payment provider for FX quotes over HTTP, \
                     through the `paymentService` retry, circuit breaker, rate limiter, time limiter and bulkhead"
        )
    );
    println!(
        "{} {} (an unchanged Spring Boot file)",
        label("config"),
        flags.config.display()
    );
    println!("{} working copy {}", label(""), live.path().display());
    if let Some(i) = live.resolved(BREAKER) {
        let at = i
            .wait_duration_in_open_state
            .origin
            .as_ref()
            .map(|o| format!(" ({}:{})", file_name(&o.file), o.line))
            .unwrap_or_default();
        let list = |l: &Option<Vec<String>>| {
            l.as_ref().map_or("-".to_string(), |v| {
                v.iter()
                    .map(|n| short_class(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        };
        println!(
            "{} {BREAKER}: {} window of {} calls, opens at failure rate >= {}% (after {} calls),",
            label("breaker"),
            i.sliding_window_type.value.name(),
            i.sliding_window_size.value,
            i.failure_rate_threshold.value,
            i.minimum_number_of_calls.value,
        );
        println!(
            "{} stays OPEN {}{at}, then lets {} trial calls through",
            label(""),
            show(i.wait_duration_in_open_state.value),
            i.permitted_number_of_calls_in_half_open_state.value,
        );
        println!("{} records {}", label(""), list(&i.record_exceptions.value));
        println!("{} ignores {}", label(""), list(&i.ignore_exceptions.value));
    }
    let m = resilience4rs::global_modules();
    let (retry, tl) = (
        m.retry.retry(BREAKER).config(),
        m.time_limiter.time_limiter(BREAKER).config(),
    );
    let (bh, rl) = (
        m.bulkhead.bulkhead(BREAKER).config(),
        m.rate_limiter.rate_limiter(BREAKER).config(),
    );
    println!(
        "{} {}: retry maxAttempts {} every {}, time limiter {}, bulkhead {} calls, rate limiter {} per {}",
        label("stack"),
        resilience4rs::global_stack_order(),
        retry.max_attempts(),
        show(retry.wait_duration().unwrap_or_default()),
        show(tl.timeout_duration()),
        bh.max_concurrent_calls(),
        rl.limit_for_period(),
        show(rl.limit_refresh_period()),
    );
    let others: Vec<&str> = live
        .instance_names()
        .into_iter()
        .filter(|n| *n != BREAKER)
        .collect();
    if !others.is_empty() {
        println!(
            "{} also loaded: {} (not called here)",
            label(""),
            others.join(", ")
        );
    }
    for w in warnings {
        println!("{} {w}", style::red("  warning"));
    }
    match baseline_url {
        Some(b) => println!(
            "{} {url} (the whole stack), {b} (retry and time limiter alone, same traffic)",
            label("provider")
        ),
        None => println!("{} {url}", label("provider")),
    }
    println!("{} {}", label("traffic"), traffic_text(flags));
    let how = match flags.outage_mode {
        OutageMode::Hang => format!(
            "requests hang past the client's {} timeout",
            show(flags.timeout)
        ),
        OutageMode::Error => "requests get 503 Service Unavailable".to_string(),
    };
    if let Some(w) = &flags.slow_window() {
        println!(
            "{} {}..{}: the provider answers in {} and traffic triples",
            label("slow"),
            show(w.start),
            show(w.end),
            show(downstream::SLOW_ANSWER)
        );
    }
    println!(
        "{} {}..{}: {how}",
        label("outage"),
        show(flags.outage.start),
        show(flags.outage.end)
    );
    if let Some(at) = flags.reload_time() {
        println!(
            "{} at {} the example edits waitDurationInOpenState to {} in its working copy",
            label("reload"),
            show(at),
            show(flags.reload_wait)
        );
    }
    println!();
}

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or(path.to_string(), |f| f.to_string_lossy().into_owned())
}

/// At `at`, rewrites the breaker's `waitDurationInOpenState` in the working copy, where the
/// file sets it. Returns when it was written, and the breaker's state and recorded calls just
/// before.
async fn edit_config(
    live: Arc<LiveFile>,
    cb: CircuitBreaker,
    epoch: Epoch,
    at: Duration,
    wait: Duration,
) -> Result<(Duration, State, u32), String> {
    tokio::time::sleep_until(epoch.at(at).into()).await;
    let instance = live
        .resolved(BREAKER)
        .ok_or("paymentService has an invalid configuration")?;
    let origin = instance.wait_duration_in_open_state.origin.clone();
    let origin = origin.ok_or(
        "the file does not set waitDurationInOpenState for paymentService; nothing to edit",
    )?;
    let before = (cb.state(), cb.metrics().number_of_buffered_calls);
    let (old, new) = config::edit_value(&origin, "waitDurationInOpenState", &show(wait))?;
    let t = epoch.elapsed();
    println!(
        "{} {} {}:{}: `{old}` -> `{new}`",
        style::cyan(&format!("t={:.2}s", t.as_secs_f64())),
        style::bold("edit"),
        file_name(&origin.file),
        origin.line,
    );
    Ok((t, before.0, before.1))
}

/// What to do after each reload of the watched file: print what changed and the breaker's
/// state, and keep it for the summary.
fn on_reload(
    name: String,
    cb: CircuitBreaker,
    epoch: Epoch,
    reloads: Arc<Mutex<Vec<ReloadInfo>>>,
) -> impl Fn(&ReloadEvent) + Send + Sync + 'static {
    move |event| {
        let t = epoch.elapsed();
        let stamp = style::cyan(&format!("t={:.2}s", t.as_secs_f64()));
        match event {
            // The bad line is printed once: by the `breaker::reload` ERROR log when it is
            // shown (it is unless RUST_LOG turns it off), else here.
            ReloadEvent::Failed(_) if tracing::enabled!(target: "breaker::reload", tracing::Level::ERROR) =>
            {
                println!(
                    "{stamp} {} failed, the previous config stays in force (the log says why)",
                    style::red("reload")
                )
            }
            ReloadEvent::Failed(e) => {
                println!(
                    "{stamp} {} failed, the previous config stays in force: {e}",
                    style::red("reload")
                )
            }
            ReloadEvent::Applied(report) => {
                let changes: Vec<Change> = report.changes.iter().map(Change::from).collect();
                let after = (cb.state(), cb.metrics().number_of_buffered_calls);
                let what: Vec<String> = changes
                    .iter()
                    .map(|c| format!("{}.{} {} -> {}", c.instance, c.setting, c.old, c.new))
                    .collect();
                println!(
                    "{stamp} {} {name}: {}; {BREAKER} still {} ({} calls in its window), no restart",
                    style::bold("reload"),
                    if what.is_empty() {
                        "no setting changed".to_string()
                    } else {
                        what.join(", ")
                    },
                    style::state(after.0),
                    after.1,
                );
                let info = ReloadInfo {
                    edited_at: t,
                    applied_at: t,
                    changes,
                    state: (after.0, after.0),
                    window_calls: (after.1, after.1),
                };
                reloads.lock().unwrap().push(info);
            }
        }
    }
}
