//! A reload never applies a half-written file (issue #22, item 3): a file rewritten in place
//! (truncate, then small writes with pauses) 500 times under CPU load, while a reader samples
//! the live config: every sample is the old config or the new one, never a mixture, the
//! defaults, or an empty config.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breaker_config::{LiveConfig, Loader};
use breaker_core::ErrorCatalog;

/// The report: a bulkhead of 3, a window of 20 and a 5 s open wait, rewritten.
/// Flat keys, one per line: almost every prefix of the file is valid YAML holding some of
/// the settings, which is what a torn read would apply. Comments make it long enough to
/// need many writes.
fn config(bulkhead: u32, window: u32, min_calls: u32) -> String {
    let mut s = String::new();
    for i in 0..6 {
        s.push_str(&format!(
            "# padding line {i} so that the file takes many writes\n"
        ));
    }
    s.push_str(&format!(
        "resilience4j.bulkhead.instances.svc.maxConcurrentCalls: {bulkhead}\n"
    ));
    for i in 0..6 {
        s.push_str(&format!(
            "# more padding {i}, the settings are spread out\n"
        ));
    }
    s.push_str(&format!(
        "resilience4j.circuitbreaker.instances.svc.slidingWindowSize: {window}\n"
    ));
    s.push_str("# between the two circuit-breaker settings\n");
    s.push_str(&format!(
        "resilience4j.circuitbreaker.instances.svc.minimumNumberOfCalls: {min_calls}\n"
    ));
    s
}

/// Old: bulkhead 3, window 20, minimum 10. New: 7, 40, 30. Resilience4j's defaults (what a
/// torn file falls back to) are 25, 100, 100.
const OLD: (u32, u32, u32) = (3, 20, 10);
const NEW: (u32, u32, u32) = (7, 40, 30);

/// `((slidingWindowSize, minimumNumberOfCalls), maxConcurrentCalls)` of instance `svc`.
type Sample = ((u32, u32), u32);

fn sample(live: &LiveConfig) -> Sample {
    let cb = live.registry().circuit_breaker("svc").config();
    let bulkhead = live
        .module_registries()
        .bulkhead
        .bulkhead("svc")
        .config()
        .max_concurrent_calls();
    (
        (cb.sliding_window_size(), cb.minimum_number_of_calls()),
        bulkhead,
    )
}

/// Truncates `path`, then writes `text` in chunks of 24 bytes with a pause after each.
fn torn_write(path: &Path, text: &str) {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    for chunk in text.as_bytes().chunks(24) {
        f.write_all(chunk).unwrap();
        f.flush().unwrap();
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn rewrites_in_place_under_load_show_only_the_old_or_the_new_config() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    let (old, new) = (config(OLD.0, OLD.1, OLD.2), config(NEW.0, NEW.1, NEW.2));
    fs::write(&path, &old).unwrap();
    let live = LiveConfig::load(
        &[&path],
        Loader::new().env(Default::default()),
        ErrorCatalog::new(),
    )
    .unwrap();
    // Far longer than the writer's pauses (200 µs), so that a writer descheduled by the
    // load for a while still does not look finished.
    live.set_settle_time(Duration::from_millis(300));
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    // CPU load: two spinning threads on a machine that may have two cores.
    for _ in 0..2 {
        let stop = stop.clone();
        threads.push(std::thread::spawn(move || {
            let mut x = 0u64;
            while !stop.load(Ordering::Relaxed) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                std::hint::black_box(x);
            }
        }));
    }
    // The watcher's part: reload whenever the bytes differ.
    {
        let (stop, live) = (stop.clone(), live.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = live.reload_if_changed();
                std::thread::sleep(Duration::from_millis(1));
            }
        }));
    }
    // The reader: every sample must be the old or the new config, as a whole per instance.
    let samples = Arc::new(AtomicUsize::new(0));
    let bad: Arc<std::sync::Mutex<Vec<Sample>>> = Default::default();
    {
        let (stop, live, samples, bad) = (stop.clone(), live.clone(), samples.clone(), bad.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let (cb, bulkhead) = sample(&live);
                let cb_ok = cb == (OLD.1, OLD.2) || cb == (NEW.1, NEW.2);
                let bh_ok = bulkhead == OLD.0 || bulkhead == NEW.0;
                if !(cb_ok && bh_ok) {
                    bad.lock().unwrap().push((cb, bulkhead));
                }
                samples.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let mut applied = 0;
    for i in 1..=500 {
        let (text, want) = if i % 2 == 1 { (&new, NEW) } else { (&old, OLD) };
        torn_write(&path, text);
        // Every 50th rewrite, wait until it is applied, so that the test sees real reloads
        // between torn reads (a hang guard, not a speed bound: 10 settle times would do).
        if i % 50 == 0 {
            let mut waited = 0;
            while sample(&live) != ((want.1, want.2), want.0) {
                std::thread::sleep(Duration::from_millis(10));
                waited += 1;
                assert!(waited < 6000, "rewrite {i} never applied");
            }
            applied += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let bad = bad.lock().unwrap();
    assert!(
        bad.is_empty(),
        "samples neither old nor new: {:?}",
        &bad[..bad.len().min(10)]
    );
    assert_eq!(applied, 10);
    assert!(samples.load(Ordering::Relaxed) > 0);
    assert_eq!(live.last_reload_error(), None);
}

#[test]
fn an_empty_file_or_a_vanished_section_keeps_the_last_good_config() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    fs::write(&path, config(OLD.0, OLD.1, OLD.2)).unwrap();
    let live = LiveConfig::load(
        &[&path],
        Loader::new().env(Default::default()),
        ErrorCatalog::new(),
    )
    .unwrap();
    live.set_settle_time(Duration::ZERO);
    let old = ((OLD.1, OLD.2), OLD.0);
    assert_eq!(sample(&live), old);
    // Empty (the truncate of a rewrite): kept.
    fs::write(&path, "").unwrap();
    assert_eq!(live.reload_if_changed().unwrap(), None);
    assert_eq!(sample(&live), old);
    // Only comments and other sections: the resilience4j section is gone; kept.
    fs::write(&path, "# comment\nspring.application.name: svc\n").unwrap();
    assert_eq!(live.reload_if_changed().unwrap(), None);
    assert_eq!(sample(&live), old);
    // Written explicitly empty: applied, every instance back to Resilience4j's defaults
    // (window 100, minimum 100, bulkhead 25).
    fs::write(&path, "resilience4j: {}\n").unwrap();
    let report = live.reload_if_changed().unwrap().expect("applied");
    assert!(report.removed.contains(&"svc".to_string()), "{report}");
    assert_eq!(sample(&live), ((100, 100), 25));
}

#[test]
fn a_file_still_changing_is_not_applied_until_it_settles() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    fs::write(&path, config(OLD.0, OLD.1, OLD.2)).unwrap();
    let live = LiveConfig::load(
        &[&path],
        Loader::new().env(Default::default()),
        ErrorCatalog::new(),
    )
    .unwrap();
    live.set_settle_time(Duration::from_millis(50));
    // A writer that keeps appending a comment every 5 ms while a reload runs: the reload
    // waits; once the writer stops, the content (the new config plus comments) applies.
    let text = config(NEW.0, NEW.1, NEW.2);
    fs::write(&path, &text).unwrap();
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || {
            for i in 0..40 {
                let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
                writeln!(f, "# still writing {i}").unwrap();
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let report = live.reload_if_changed().unwrap();
    writer.join().unwrap();
    // Either it settled after the writer stopped, or the reload gave up and the next one
    // applies; both end with the whole file.
    if report.is_none() {
        live.reload_if_changed()
            .unwrap()
            .expect("applied once settled");
    }
    assert_eq!(sample(&live), ((NEW.1, NEW.2), NEW.0));
    let written = fs::read_to_string(&path).unwrap();
    assert!(written.ends_with("# still writing 39\n"));
}
