//! The global registry loads the file named by `BREAKER_CONFIG` on first use and follows its
//! changes. (Its own test binary: the global registry is per process.)

use std::time::{Duration, Instant};

#[test]
fn global_registry_loads_and_watches_the_configured_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("application.yml");
    let yaml = "resilience4j.circuitbreaker.instances.paymentService:\n  sliding-window-size: 7\n  wait-duration-in-open-state: 5s\n";
    std::fs::write(&path, yaml).unwrap();

    // A variable naming a missing file stops the process: tests/global_start_up.rs.
    std::env::set_var(resilience4rs::CONFIG_ENV, &path);

    let cb = resilience4rs::global()
        .find("paymentService")
        .expect("instances are created eagerly");
    assert_eq!(cb.config().sliding_window_size(), 7);
    let live = resilience4rs::global_live_config().expect("loaded from a file");
    assert_eq!(live.paths(), std::slice::from_ref(&path));

    std::fs::write(&path, yaml.replace("5s", "1500ms")).unwrap();
    let start = Instant::now();
    while cb.config().wait_duration_in_open_state() != Duration::from_millis(1500) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the change was never applied"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(live.last_reload_error().is_none());
}
