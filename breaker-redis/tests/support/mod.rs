//! A real `redis-server` per test (free loopback port, no persistence), and replica
//! processes: this test binary run again in child mode, driven line by line.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::{Child, ChildStdin, Command, Stdio};

pub mod child;
pub mod fleet_child;
pub mod proxy;
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// `None` (with a message) when `redis-server` is not installed: the test then skips.
pub fn redis_server_binary() -> Option<&'static str> {
    match Command::new("redis-server").arg("--version").output() {
        Ok(o) if o.status.success() => Some("redis-server"),
        _ => {
            eprintln!(
                "SKIPPED: redis-server is not installed (apt-get install redis-server); \
                 the shared-state tests need a real Redis"
            );
            None
        }
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `redis-server` on a loopback port, stopped (SIGKILL) when dropped.
pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
}

impl RedisServer {
    pub fn start() -> Option<RedisServer> {
        redis_server_binary()?;
        let mut s = RedisServer {
            port: free_port(),
            child: None,
        };
        s.restart();
        Some(s)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kills the server (its data is gone: no persistence).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts (again) on the same port, empty, and waits until it answers.
    pub fn restart(&mut self) {
        self.stop();
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .current_dir(std::env::temp_dir())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut con) = redis::Client::open(self.url())
                .unwrap()
                .get_connection_with_timeout(Duration::from_millis(200))
            {
                if redis::cmd("PING").query::<String>(&mut con).is_ok() {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGSTOP: the server stops running (its sockets still accept and buffer requests,
    /// which it runs at [`resume`](Self::resume)), as a hung or swapped-out Redis.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT after [`pause`](Self::pause).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, sig: &str) {
        let pid = self.child.as_ref().expect("running").id().to_string();
        let ok = Command::new("kill")
            .args([sig, &pid])
            .status()
            .expect("kill");
        assert!(ok.success(), "kill {sig} {pid}");
    }

    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .unwrap()
            .get_connection()
            .unwrap()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // SIGKILL ends a paused (SIGSTOPped) server too.
        self.stop();
    }
}

pub fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// One replica: a process with its own breaker and store, answering commands.
pub struct Replica {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

/// The replica settings a test passes down.
pub struct ReplicaSpec<'a> {
    pub url: &'a str,
    pub name: &'a str,
    pub wait_ms: u64,
    pub lease_ms: u64,
    /// The store's `timeout` (ms).
    pub timeout_ms: u64,
}

impl Replica {
    pub fn spawn(spec: &ReplicaSpec<'_>) -> Replica {
        Replica::spawn_test(
            "replica_process",
            &[
                ("BREAKER_REDIS_REPLICA", "1".into()),
                ("REPLICA_URL", spec.url.into()),
                ("REPLICA_NAME", spec.name.into()),
                ("REPLICA_WAIT_MS", spec.wait_ms.to_string()),
                ("REPLICA_LEASE_MS", spec.lease_ms.to_string()),
                ("REPLICA_TIMEOUT_MS", spec.timeout_ms.to_string()),
            ],
        )
    }

    /// This test binary run again as the test `test` alone, with `env`: a replica process
    /// answering lines prefixed `@@ ` (see [`child`] and [`fleet_child`]).
    pub fn spawn_test(test: &str, env: &[(&str, String)]) -> Replica {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn replica");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                // libtest's "test replica_process ... " may precede the first answer.
                if let Some(i) = line.find("@@ ") {
                    if tx.send(line[i + 3..].to_string()).is_err() {
                        return;
                    }
                }
            }
        });
        let mut r = Replica {
            child,
            stdin,
            lines: rx,
        };
        assert_eq!(r.read(), "ready");
        r
    }

    /// Sends a command and returns its one-line answer.
    pub fn ask(&mut self, cmd: &str) -> String {
        self.send(cmd);
        self.read()
    }

    pub fn send(&mut self, cmd: &str) {
        writeln!(self.stdin, "{cmd}").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn read(&mut self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("replica answered")
    }

    /// SIGKILL, as a crash.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Field `i` (by whitespace) of a replica's answer.
pub fn field<T: std::str::FromStr>(line: &str, i: usize) -> T
where
    T::Err: std::fmt::Debug,
{
    line.split_whitespace()
        .nth(i)
        .unwrap_or_else(|| panic!("no field {i} in {line:?}"))
        .parse()
        .unwrap()
}

/// Waits (up to 10 s: only a write that never comes reaches it) until the shared hash of
/// `name` has state `state` (0 CLOSED, 1 OPEN, 2 HALF_OPEN).
pub fn wait_for_shared_state(redis: &RedisServer, name: &str, state: i64) {
    use redis::Commands;
    let mut con = redis.connection();
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let s: Option<i64> = con.hget(format!("breaker:{{{name}}}"), "s").unwrap();
        if s == Some(state) {
            return;
        }
        assert!(
            Instant::now() < end,
            "shared state of {name}: {s:?}, never {state}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}
