//! Issue 23 item 3: 90,000 names in `ignoreExceptions` that no catalog entry claims took
//! 6.2 s to load (0.24 / 1.29 / 4.75 s at 25k / 50k / 90k: quadratic). Loading must grow
//! linearly with the list. Checked without a wall-clock bound: the same work at 5,000 and at
//! 40,000 names in each of two lists (a circuit breaker's and a retry's), the fastest of three runs each; linear work takes about 8 times as long,
//! quadratic work 64 times, and the test allows 24 (three times the linear ratio), which
//! load on the machine does not reach because both sizes run under the same load and the
//! fastest run of each is kept.

use std::time::{Duration, Instant};

use breaker_config::{Format, Loader};
use breaker_core::ErrorCatalog;

fn yaml(names: usize) -> String {
    let mut y = String::from("resilience4j.circuitbreaker.instances.a.ignoreExceptions:\n");
    for i in 0..names {
        y.push_str(&format!("  - x.U{i}\n"));
    }
    y.push_str("resilience4j.retry.instances.r.ignoreExceptions:\n");
    for i in 0..names {
        y.push_str(&format!("  - x.U{i}\n"));
    }
    y
}

/// Loads the file and lists its unclaimed names, as a registry load does; returns the time
/// and the number of names reported.
fn run(text: &str) -> (Duration, usize) {
    let catalog = ErrorCatalog::new();
    let start = Instant::now();
    let loaded = Loader::new()
        .env(Default::default())
        .load_str("application.yml", Format::Yaml, text)
        .unwrap();
    let unclaimed = loaded.config.unclaimed_in_catalog(&catalog).len()
        + loaded
            .modules
            .retry
            .unclaimed_exception_names(&|n| catalog.claims(n))
            .len();
    (start.elapsed(), unclaimed)
}

fn fastest_of_three(text: &str, names: usize) -> Duration {
    (0..3)
        .map(|_| {
            let (t, unclaimed) = run(text);
            // Every name, once per list (the instance's and the default config's lists are
            // the instance's here: the default config has none).
            assert_eq!(unclaimed, 2 * names);
            t
        })
        .min()
        .unwrap()
}

#[test]
fn unclaimed_names_load_in_linear_time() {
    let (small, large) = (5_000, 40_000);
    let t_small = fastest_of_three(&yaml(small), small);
    let t_large = fastest_of_three(&yaml(large), large);
    let ratio = t_large.as_secs_f64() / t_small.as_secs_f64().max(1e-6);
    eprintln!("{small}: {t_small:?}, {large}: {t_large:?}, ratio {ratio:.1}");
    assert!(ratio < 24.0, "ratio {ratio:.1} for 8x the names (quadratic gives 64)");
}

/// A name listed twice is reported once per list.
#[test]
fn a_repeated_name_is_reported_once() {
    let text = "resilience4j.circuitbreaker.instances.a.ignoreExceptions: [x.A, x.B, x.A]\n";
    let (_, unclaimed) = run(text);
    assert_eq!(unclaimed, 2);
}
