//! What the implicit global registry loads at start, and what it does when it cannot
//! (issue #22, item 4). The global registry is per process, so every case runs in a child
//! process: this test binary run again with `START_UP_CASE` set, in its own directory and
//! environment.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use resilience4rs::retry::{MaxRetriesExceeded, RetryRegistry};
use resilience4rs::{circuit_breaker, retry, CallNotPermitted, Registry};

const CASE: &str = "START_UP_CASE";

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Runs case `case` in a child process in `dir` with only `env` (and `PATH`).
fn child(case: &str, dir: &Path, env: &[(&str, &str)]) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "case_entry", "--nocapture", "--test-threads=1"])
        .current_dir(dir)
        .env_clear()
        .env(CASE, case)
        .envs(env.iter().copied())
        .output()
        .expect("the test binary runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[derive(Debug)]
enum SvcError {
    Rejected,
}

impl std::fmt::Display for SvcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl From<CallNotPermitted> for SvcError {
    fn from(_: CallNotPermitted) -> Self {
        SvcError::Rejected
    }
}

impl From<MaxRetriesExceeded> for SvcError {
    fn from(_: MaxRetriesExceeded) -> Self {
        SvcError::Rejected
    }
}

static CALLS: AtomicUsize = AtomicUsize::new(0);

#[circuit_breaker(name = "svc")]
async fn protected() -> Result<u32, SvcError> {
    CALLS.fetch_add(1, Ordering::SeqCst);
    Ok(1)
}

static OWN_BREAKERS: LazyLock<Registry> = LazyLock::new(Registry::new);
static OWN_RETRIES: LazyLock<RetryRegistry> = LazyLock::new(RetryRegistry::new);

#[retry(name = "own", registry = OWN_RETRIES)]
#[circuit_breaker(name = "own", registry = OWN_BREAKERS)]
async fn own_registries_only() -> Result<u32, SvcError> {
    Ok(2)
}

/// Records `tracing` events as `LEVEL message`.
struct Recorder(Arc<Mutex<Vec<String>>>);

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        struct Message(String);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                if f.name() == "message" {
                    self.0 = format!("{v:?}");
                }
            }
        }
        let mut m = Message(String::new());
        event.record(&mut m);
        let line = format!("{} {}", event.metadata().level(), m.0);
        self.0.lock().unwrap().push(line);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// The child side: runs the case named by `START_UP_CASE` (nothing without it).
#[test]
fn case_entry() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    match case.as_str() {
        "invalid_file_under_load" => {
            // An axum-like service: many requests on a multi-threaded runtime hit the first
            // protected call at once.
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(4)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let tasks: Vec<_> = (0..16).map(|_| tokio::spawn(protected())).collect();
                for t in tasks {
                    let _ = t.await;
                }
            });
            println!("STILL SERVING after {} calls", CALLS.load(Ordering::SeqCst));
        }
        "no_file" => {
            let events = Arc::new(Mutex::new(Vec::new()));
            tracing::subscriber::set_global_default(Recorder(events.clone())).unwrap();
            let cb = resilience4rs::global().circuit_breaker("svc");
            let _ = resilience4rs::global_modules();
            let _ = resilience4rs::global();
            // Resilience4j's defaults.
            assert_eq!(cb.config().failure_rate_threshold(), 50.0);
            assert_eq!(cb.config().sliding_window_size(), 100);
            for e in events.lock().unwrap().iter() {
                println!("EVENT {e}");
            }
            println!("CHILD OK");
        }
        "profile_and_import" => {
            let cb = resilience4rs::global().circuit_breaker("svc");
            assert_eq!(cb.config().failure_rate_threshold(), 66.0);
            assert_eq!(cb.config().sliding_window_size(), 7);
            let live = resilience4rs::global_live_config().unwrap();
            let files: Vec<String> = live
                .paths()
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            assert_eq!(
                files,
                [
                    "./application.yml",
                    "./ops/extra.yml",
                    "./application-prod.yml"
                ]
            );
            println!("CHILD OK");
        }
        "own_registries" => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let r = rt.block_on(own_registries_only());
            assert_eq!(r.unwrap(), 2);
            // The global files were never read.
            assert!(resilience4rs::global_live_config().is_none());
            println!("CHILD OK");
        }
        "file_created_later" => {
            let cb = resilience4rs::global().circuit_breaker("svc");
            assert_eq!(cb.config().failure_rate_threshold(), 50.0);
            std::fs::write(
                "application.yml",
                "resilience4j.circuitbreaker.instances.svc.failureRateThreshold: 66\n",
            )
            .unwrap();
            // A hang guard, not a speed bound: the watch debounce and settle time are 200 ms.
            let mut waited = 0;
            while cb.config().failure_rate_threshold() != 66.0 {
                std::thread::sleep(std::time::Duration::from_millis(20));
                waited += 1;
                assert!(waited < 3000, "the file created later was never read");
            }
            println!("CHILD OK");
        }
        "missing_breaker_config" => {
            let _ = resilience4rs::global();
            println!("STILL RUNNING");
        }
        other => panic!("unknown case {other}"),
    }
}

#[test]
fn an_invalid_file_on_the_implicit_path_prints_one_message_and_stops_the_process() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "application.yml",
        "resilience4j.circuitbreaker.instances.svc:\n  failureRateThreshold: 150\n",
    );
    let out = child("invalid_file_under_load", d.path(), &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(!stdout.contains("STILL SERVING"), "{stdout}");
    assert_eq!(
        stderr
            .matches("cannot load the Spring config files")
            .count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "./application.yml:2:25: resilience4j.circuitbreaker.instances.svc.\
             failureRateThreshold = '150'"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    // No protected body ran with settings other than the ones written.
    assert_eq!(CALLS.load(Ordering::SeqCst), 0);
}

#[test]
fn breaker_config_naming_no_file_stops_the_process_naming_the_variable() {
    let d = tempfile::tempdir().unwrap();
    let out = child(
        "missing_breaker_config",
        d.path(),
        &[("BREAKER_CONFIG", "missing.yml")],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("(BREAKER_CONFIG=missing.yml)"), "{stderr}");
    assert!(stderr.contains("missing.yml: cannot read file"), "{stderr}");
    assert!(!stdout.contains("STILL RUNNING"));
}

#[test]
fn no_config_file_is_said_once_with_the_places_looked_in() {
    let d = tempfile::tempdir().unwrap();
    let out = child("no_file", d.path(), &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("CHILD OK"), "{stdout}");
    // (The harness prints `test case_entry ... ` before the child's first line.)
    let warnings: Vec<&str> = stdout
        .split("EVENT ")
        .skip(1)
        .filter(|l| l.starts_with("WARN"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stdout}");
    assert!(
        warnings[0].contains(
            "no config file found (looked for ./application.yaml, ./application.yml, \
             ./application.properties, ./config/application.yaml, ./config/application.yml, \
             ./config/application.properties, ./application-default.yaml"
        ),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[0].contains("Resilience4j's defaults apply"),
        "{}",
        warnings[0]
    );
}

#[test]
fn a_config_file_created_after_start_is_read() {
    let d = tempfile::tempdir().unwrap();
    let out = child("file_created_later", d.path(), &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("CHILD OK"), "{stdout}");
}

#[test]
fn the_global_registry_reads_the_profile_file_and_imports() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "application.yml",
        "spring.config.import: optional:file:ops/extra.yml\n\
         resilience4j.circuitbreaker.instances.svc.failureRateThreshold: 50\n",
    );
    write(
        d.path(),
        "application-prod.yml",
        "resilience4j.circuitbreaker.instances.svc.failureRateThreshold: 66\n",
    );
    write(
        d.path(),
        "ops/extra.yml",
        "resilience4j.circuitbreaker.instances.svc.slidingWindowSize: 7\n",
    );
    let out = child(
        "profile_and_import",
        d.path(),
        &[("SPRING_PROFILES_ACTIVE", "prod")],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("CHILD OK"), "{stdout}");
}

#[test]
fn a_stack_whose_layers_all_name_their_registry_never_reads_the_global_files() {
    let d = tempfile::tempdir().unwrap();
    // A stray, broken application.yml in the working directory.
    write(d.path(), "application.yml", "resilience4j: [unclosed\n");
    let out = child("own_registries", d.path(), &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("CHILD OK"), "{stdout}");
}

#[test]
fn init_from_file_error_debug_is_the_one_line_message() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("application.yml");
    std::fs::write(
        &path,
        "resilience4j.circuitbreaker.instances.svc.slidingWindowType: SLIDING\n",
    )
    .unwrap();
    let err = resilience4rs::init_from_file(&path, resilience4rs::ErrorCatalog::new()).unwrap_err();
    // What `main`'s `?` prints: Debug, through Box<dyn Error>.
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    let shown = format!("{boxed:?}");
    assert_eq!(shown.lines().count(), 1, "{shown}");
    assert!(
        shown.starts_with(&format!(
            "{}:1:62: resilience4j.circuitbreaker.instances.svc.slidingWindowType = 'SLIDING': ",
            path.display()
        )),
        "{shown}"
    );
    assert!(
        shown.ends_with("(allowed: COUNT_BASED or TIME_BASED (any case, '-' or '_' ignored))"),
        "{shown}"
    );
}
