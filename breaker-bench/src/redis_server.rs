//! A throwaway `redis-server` on a free loopback port for the benches that share state
//! through Redis (`shared_state`, `fleet`).

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `redis-server`, killed when dropped.
pub struct RedisServer(Child);

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `redis-server` without persistence on a free loopback port and returns it with its
/// `redis://` URL; `None` when it is not installed or does not listen within 2 s.
pub fn start_redis() -> Option<(RedisServer, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let server = RedisServer(child);
    let url = format!("redis://127.0.0.1:{port}/");
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some((server, url));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}
