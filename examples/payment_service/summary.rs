//! The summary: the outage with and without the breaker, side by side, the 4xx and reload
//! evidence and the expectations checked; the same as JSON for `--summary-json`.

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use resilience4rs::State;
use serde_json::{json, Value};

use super::config::Change;
use super::events::{round3, EventLog, Transition};
use super::flags::show;
use super::stats::{ms, CallRecord, Outcome, Recorder, Stats};
use super::style;

/// At least this share of the outage calls must never reach the provider.
pub const MIN_NEVER_REACHED: f64 = 0.80;
/// The mean outage latency must fall at least this many times.
pub const MIN_LATENCY_REDUCTION: f64 = 5.0;

/// What the config reload did.
#[derive(Clone, Debug)]
pub struct ReloadInfo {
    /// When the file was edited.
    pub edited_at: Duration,
    /// When the new config was in force.
    pub applied_at: Duration,
    /// What changed.
    pub changes: Vec<Change>,
    /// The breaker's state just before and just after.
    pub state: (State, State),
    /// Calls in the breaker's window just before and just after.
    pub window_calls: (u32, u32),
}

/// Everything the summary reads.
pub struct Inputs {
    /// The outage window.
    pub outage: Range<Duration>,
    /// The all-4xx second, if there was one.
    pub bad_burst: Option<Range<Duration>>,
    /// The client timeout.
    pub timeout: Duration,
    /// Calls with the breaker.
    pub breaker: Arc<Recorder>,
    /// Calls without, if run.
    pub baseline: Option<Arc<Recorder>>,
    /// The breaker's events.
    pub events: Arc<EventLog>,
    /// The breaker's state at the end.
    pub final_state: State,
    /// The reload, if one happened, or why not.
    pub reload: Result<Option<ReloadInfo>, String>,
    /// Flags worth echoing: seed, rate, duration.
    pub run: Value,
    /// Calls the bulkhead or the rate limiter shed inside the breaker: the breaker ignores
    /// those too (its `ignoreExceptions`), so they are not among the 4xx it ignored.
    pub shed: u64,
}

/// Prints the summary and returns it as JSON (what `--summary-json` prints as the `SUMMARY`
/// line).
pub fn report(i: &Inputs) -> Value {
    let everything = Duration::ZERO..Duration::MAX;
    let b_all = i.breaker.started_in(everything.clone());
    let b = i.breaker.stats(i.outage.clone());
    let n = i.baseline.as_ref().map(|r| r.stats(i.outage.clone()));
    let n_all = i.baseline.as_ref().map(|r| r.started_in(everything));
    let transitions = i.events.transitions();
    let opened = transitions.iter().any(|t| t.to == State::Open);
    let closed_at = transitions
        .iter()
        .find(|t| t.to == State::Closed && t.t >= i.outage.end)
        .map(|t| t.t - i.outage.end);
    let closed_after_recovery = closed_at.is_some() && i.final_state == State::Closed;
    let reduction = n.map(|n| n.mean_ms / b.mean_ms.max(1e-3));
    let client_errors = Stats::of(&b_all, &i.breaker.seen).client_errors;
    let ignored = i
        .events
        .ignored
        .load(Ordering::Relaxed)
        .saturating_sub(i.shed) as usize;
    let burst_opened = i.bad_burst.as_ref().map(|w| {
        let until = w.end + i.timeout;
        transitions
            .iter()
            .any(|t| t.to == State::Open && w.start <= t.t && t.t <= until)
    });
    let waits = open_waits(&transitions);

    let checks = json!({
        "opened": opened,
        "closed_after_recovery": closed_after_recovery,
        "never_reached_share": b.never_reached_share() >= MIN_NEVER_REACHED,
        "mean_latency_reduction": reduction.map(|r| r >= MIN_LATENCY_REDUCTION),
        "client_errors_ignored": ignored == client_errors,
    });
    let ok = checks
        .as_object()
        .unwrap()
        .values()
        .all(|v| v.as_bool() != Some(false));

    print_table(
        i,
        &b,
        n.as_ref(),
        &b_all,
        n_all.as_deref(),
        closed_at,
        reduction,
    );
    print_notes(i, client_errors, ignored, burst_opened, &waits);
    print_checks(
        opened,
        closed_after_recovery,
        &b,
        reduction,
        client_errors == ignored,
    );

    let summary = json!({
        "run": i.run,
        "outage": { "from_s": i.outage.start.as_secs_f64(), "to_s": i.outage.end.as_secs_f64() },
        "outage_calls": b.calls,
        "breaker": side(&b, &b_all, i.outage.end),
        "baseline": n.as_ref().zip(n_all.as_deref()).map(|(n, all)| side(n, all, i.outage.end)),
        "mean_latency_reduction": reduction.map(|r| (r * 10.0).round() / 10.0),
        "opened": opened,
        "closed_after_recovery": closed_after_recovery,
        "recovery_to_closed_s": closed_at.map(|d| round3(d.as_secs_f64())),
        "final_state": i.final_state.name(),
        "transitions": transitions.len(),
        "open_waits_s": waits.iter().map(|w| round3(w.as_secs_f64())).collect::<Vec<_>>(),
        "client_errors": {
            "answers": client_errors,
            "ignored_by_breaker": ignored,
            "all_bad_window_s": i.bad_burst.as_ref().map(|w| [w.start.as_secs_f64(), w.end.as_secs_f64()]),
            "opened_during_all_bad_window": burst_opened,
        },
        "reload": reload_json(&i.reload),
        // What the breaker published, as its Micrometer meters count it.
        "breaker_events": {
            "successful": i.events.successes.load(Ordering::Relaxed),
            "failed": i.events.errors.load(Ordering::Relaxed),
            "ignored": i.events.ignored.load(Ordering::Relaxed),
            "not_permitted": i.events.not_permitted.load(Ordering::Relaxed),
        },
        "checks": checks,
        "ok": ok,
    });
    summary
}

fn side(s: &Stats, all: &[CallRecord], recovery: Duration) -> Value {
    json!({
        "reached": s.reached,
        "never_reached_share": round3(s.never_reached_share()),
        "mean_ms": round3(s.mean_ms),
        "p99_ms": round3(s.p99_ms),
        "fallback_served": s.fallback,
        "errors_returned": s.failed,
        "first_live_after_recovery_s": first_live_after(all, recovery).map(|d| round3(d.as_secs_f64())),
    })
}

/// How long after `recovery` the first fresh answer arrived.
fn first_live_after(all: &[CallRecord], recovery: Duration) -> Option<Duration> {
    all.iter()
        .filter(|c| c.outcome == Outcome::Live && c.start >= recovery)
        .map(|c| c.start + c.latency - recovery)
        .min()
}

/// The measured length of every OPEN period that ended (-> HALF_OPEN).
fn open_waits(transitions: &[Transition]) -> Vec<Duration> {
    transitions
        .windows(2)
        .filter(|w| w[0].to == State::Open && w[1].from == State::Open)
        .map(|w| w[1].t - w[0].t)
        .collect()
}

fn print_table(
    i: &Inputs,
    b: &Stats,
    n: Option<&Stats>,
    b_all: &[CallRecord],
    n_all: Option<&[CallRecord]>,
    closed_at: Option<Duration>,
    reduction: Option<f64>,
) {
    let pct = |s: &Stats| {
        format!(
            "{} ({:.1}%)",
            s.reached,
            100.0 * (1.0 - s.never_reached_share())
        )
    };
    let after =
        |d: Option<Duration>| d.map_or("-".to_string(), |d| format!("+{:.2}s", d.as_secs_f64()));
    let rec = i.outage.end;
    let rows: Vec<(String, String, String)> = vec![
        (
            "outage calls that reached the provider".into(),
            pct(b),
            n.map_or("-".into(), pct),
        ),
        (
            "outage calls that never reached it".into(),
            format!("{:.1}%", 100.0 * b.never_reached_share()),
            n.map_or("-".into(), |n| {
                format!("{:.1}%", 100.0 * n.never_reached_share())
            }),
        ),
        (
            "mean latency during the outage".into(),
            format!("{} ms", ms(b.mean_ms)),
            n.map_or("-".into(), |n| format!("{} ms", ms(n.mean_ms))),
        ),
        (
            "p99 latency during the outage".into(),
            format!("{} ms", ms(b.p99_ms)),
            n.map_or("-".into(), |n| format!("{} ms", ms(n.p99_ms))),
        ),
        (
            "fallback (last good quote) served".into(),
            b.fallback.to_string(),
            n.map_or("-".into(), |n| n.fallback.to_string()),
        ),
        (
            format!("recovery ({}) -> first fresh quote", show(rec)),
            after(first_live_after(b_all, rec)),
            n_all.map_or("-".into(), |a| after(first_live_after(a, rec))),
        ),
        (
            format!("recovery ({}) -> breaker CLOSED", show(rec)),
            after(closed_at),
            "-".into(),
        ),
    ];
    println!();
    println!("{}", style::bold("Summary"));
    println!(
        "The payment provider was down from {} to {} ({}); {} calls were sent in that time.\n",
        show(i.outage.start),
        show(i.outage.end),
        show(i.outage.end - i.outage.start),
        b.calls
    );
    if n.is_some() {
        let (w, wo) = (style::bold("whole stack"), style::bold("retry alone"));
        println!("  {:<42} {w:>15} {wo:>17}", "");
    } else {
        println!("  {:<42} {:>15}", "", style::bold("whole stack"));
    }
    for (label, with, without) in rows {
        match n {
            Some(_) => println!("  {label:<42} {with:>15} {without:>17}"),
            None => println!("  {label:<42} {with:>15}"),
        }
    }
    if let Some(r) = reduction {
        println!(
            "  {:<42} {:>15}",
            "mean outage latency, lower by",
            format!("{r:.1}x")
        );
    }
}

fn print_notes(
    i: &Inputs,
    client_errors: usize,
    ignored: usize,
    burst_opened: Option<bool>,
    waits: &[Duration],
) {
    println!();
    let burst = match (&i.bad_burst, burst_opened) {
        (Some(w), Some(false)) => format!(
            "; from {} to {} every request was bad and the breaker stayed CLOSED",
            show(w.start),
            show(w.end)
        ),
        (Some(w), Some(true)) => format!(
            "; the breaker OPENED during the all-bad window at {}",
            show(w.start)
        ),
        _ => String::new(),
    };
    println!(
        "  4xx answers: {client_errors}, of which {ignored} ignored by the breaker \
         (ignoreExceptions: HttpClientErrorException){burst}."
    );
    match &i.reload {
        Ok(Some(r)) => {
            let changes: Vec<String> = r
                .changes
                .iter()
                .map(|c| format!("{}.{} {} -> {}", c.instance, c.setting, c.old, c.new))
                .collect();
            let waits: Vec<String> = waits
                .iter()
                .map(|w| format!("{:.2}s", w.as_secs_f64()))
                .collect();
            let kept = if r.state.0 == r.state.1 && r.window_calls.0 == r.window_calls.1 {
                format!(
                    "the breaker kept its state ({}) and its {} recorded calls",
                    r.state.1.name(),
                    r.window_calls.1
                )
            } else {
                format!(
                    "the breaker went {} -> {}, {} -> {} recorded calls",
                    r.state.0.name(),
                    r.state.1.name(),
                    r.window_calls.0,
                    r.window_calls.1
                )
            };
            println!(
                "  Reload at t={:.2}s, no restart: {}; {kept}. OPEN periods measured: {}.",
                r.applied_at.as_secs_f64(),
                if changes.is_empty() {
                    "nothing changed".to_string()
                } else {
                    changes.join(", ")
                },
                if waits.is_empty() {
                    "none".to_string()
                } else {
                    waits.join(", ")
                },
            );
        }
        Ok(None) => println!("  No config reload in this run."),
        Err(e) => println!("  Config reload: {e}"),
    }
}

fn print_checks(opened: bool, closed: bool, b: &Stats, reduction: Option<f64>, ignored_all: bool) {
    println!();
    let mark = |ok: bool| {
        if ok {
            style::green("✓")
        } else {
            style::red("✗")
        }
    };
    println!("  {} the breaker opened during the outage", mark(opened));
    println!(
        "  {} it closed again after the provider recovered",
        mark(closed)
    );
    println!(
        "  {} {:.1}% of outage calls never reached the provider (expected >= {:.0}%)",
        mark(b.never_reached_share() >= MIN_NEVER_REACHED),
        100.0 * b.never_reached_share(),
        100.0 * MIN_NEVER_REACHED
    );
    if let Some(r) = reduction {
        println!(
            "  {} mean outage latency fell {r:.1}x (expected >= {MIN_LATENCY_REDUCTION:.0}x)",
            mark(r >= MIN_LATENCY_REDUCTION)
        );
    }
    println!("  {} no 4xx answer counted as a failure", mark(ignored_all));
    println!();
}

fn reload_json(r: &Result<Option<ReloadInfo>, String>) -> Value {
    match r {
        Ok(None) => Value::Null,
        Err(e) => json!({ "error": e }),
        Ok(Some(r)) => json!({
            "edited_at_s": round3(r.edited_at.as_secs_f64()),
            "applied_at_s": round3(r.applied_at.as_secs_f64()),
            "changes": r.changes.iter().map(|c| json!({
                "instance": c.instance, "setting": c.setting, "old": c.old, "new": c.new,
            })).collect::<Vec<_>>(),
            "state_before": r.state.0.name(),
            "state_after": r.state.1.name(),
            "window_calls_before": r.window_calls.0,
            "window_calls_after": r.window_calls.1,
        }),
    }
}
