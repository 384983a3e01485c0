//! Issue #26's table, the Rust side: ns per call of each row through an attribute, the core
//! API and breaker-tower, printed beside the Resilience4j 2.4 figures the issue quotes (JVM
//! measured by the issue's own harness, which is not in this repository; see BENCHMARKS.md).
//!
//! Same rows and configs as the issue: Resilience4j's defaults, the rate limiter at
//! `limitForPeriod` = `i32::MAX` per 1 s with timeout 0, a body that returns a counter
//! (`breaker_bench::rows`). Each figure is a median over rounds of alternated batches
//! (`breaker_bench::alternate`): the attribute and the tower path each alternate with the core
//! call, so the three figures of a row come from the same minutes of the same process.
//!
//! `cargo bench -p breaker-bench --bench r4j_rows` (about a minute once built).

use std::time::Duration;

use breaker_bench::alternate::{alternate, Plan, Side};
use breaker_bench::poll_once;
use breaker_bench::rows::{self, oneshot, Core, TowerRegistries};

/// One row: the Resilience4j figure (ns, as quoted in issue #26) and the three Rust sides.
struct Row<'a> {
    name: &'static str,
    r4j: &'static str,
    attribute: Side<'a>,
    core: Side<'a>,
    tower: Side<'a>,
    /// A second core figure (`call_sync`), when the issue quotes one.
    sync: Option<Side<'a>>,
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("tokio runtime");
    // The time limiter arms a tokio timer: every row runs inside the runtime.
    let _in_runtime = rt.enter();
    let core: &'static Core = Box::leak(Box::new(Core::new("r4j-rows")));
    let tower: &'static TowerRegistries = Box::leak(Box::default());
    macro_rules! row {
        ($name:expr, $r4j:expr, $attr:expr, $core:expr, $svc:expr, $sync:expr) => {{
            let mut svc = $svc;
            Row {
                name: $name,
                r4j: $r4j,
                attribute: Side::looped("attribute", || poll_once($attr).is_ok()),
                core: Side::looped("core", move || poll_once($core).is_ok()),
                tower: Side::looped("tower", move || oneshot(&mut svc).is_ok()),
                sync: $sync,
            }
        }};
    }
    let rows = vec![
        row!(
            "Retry(CB(RL(Bulkhead(fn)))), 4 layers",
            "118",
            rows::attr_stack4(),
            core.stack4(),
            tower.stack4(),
            None
        ),
        row!(
            "same, 5 layers with TimeLimiter",
            "269",
            rows::attr_stack5(),
            core.stack5(),
            tower.stack5(),
            None
        ),
        row!(
            "circuit breaker alone",
            "64",
            rows::attr_circuit_breaker(),
            core.circuit_breaker(),
            tower.circuit_breaker(),
            None
        ),
        row!(
            "retry alone",
            "10",
            rows::attr_retry(),
            core.retry(),
            tower.retry(),
            None
        ),
        row!(
            "rate limiter alone",
            "41",
            rows::attr_rate_limiter(),
            core.rate_limiter(),
            tower.rate_limiter(),
            Some(Side::looped("call_sync", || {
                core.limiter.call_sync(rows::count).is_ok()
            }))
        ),
        row!(
            "bulkhead alone",
            "12",
            rows::attr_bulkhead(),
            core.bulkhead(),
            tower.bulkhead(),
            Some(Side::looped("call_sync", || {
                core.bulkhead.call_sync(rows::count).is_ok()
            }))
        ),
        row!(
            "time limiter alone",
            "97-172",
            rows::attr_time_limiter(),
            core.time_limiter(),
            tower.time_limiter(),
            None
        ),
    ];
    let plan = Plan {
        rounds: 11,
        pairs: 10,
        batch: Duration::from_millis(2),
    };
    println!(
        "ns per call, median of {} rounds (each side's fastest of {} ~{} ms batches, alternated with the core call)",
        plan.rounds,
        plan.pairs,
        plan.batch.as_millis()
    );
    println!();
    println!("| row | Resilience4j (issue #26) | ours: attribute | ours: core API | ours: breaker-tower |");
    println!("|---|---:|---:|---:|---:|");
    for mut row in rows {
        let with_attr = alternate(plan, &mut row.attribute, &mut row.core);
        let with_tower = alternate(plan, &mut row.tower, &mut row.core);
        let core_ns = (with_attr.b_median_ns() + with_tower.b_median_ns()) / 2.0;
        let sync = row.sync.as_mut().map(|s| {
            let m = alternate(plan, s, &mut row.core);
            format!(" (`call_sync` {:.0})", m.a_median_ns())
        });
        println!(
            "| {} | {} | {:.0} | {:.0}{} | {:.0} |",
            row.name,
            row.r4j,
            with_attr.a_median_ns(),
            core_ns,
            sync.unwrap_or_default(),
            with_tower.a_median_ns()
        );
    }
}
