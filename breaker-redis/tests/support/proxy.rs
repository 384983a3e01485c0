//! A TCP proxy in front of a `redis-server` that delays every answer by a set time: a slow
//! Redis (or a slow network) that still answers within the store's `timeout`.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Forwards requests at once and answers after `delay` ms (each chunk read from Redis).
pub struct DelayProxy {
    pub port: u16,
    delay_ms: Arc<AtomicU64>,
}

impl DelayProxy {
    pub fn start(redis_port: u16) -> DelayProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let delay_ms = Arc::new(AtomicU64::new(0));
        let delay = delay_ms.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(("127.0.0.1", redis_port)) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                pump(
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    None,
                );
                pump(server, client, Some(delay.clone()));
            }
        });
        DelayProxy { port, delay_ms }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Answers from now on arrive `ms` later.
    pub fn set_delay_ms(&self, ms: u64) {
        self.delay_ms.store(ms, Ordering::Relaxed);
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream, delay: Option<Arc<AtomicU64>>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if let Some(d) = &delay {
                std::thread::sleep(Duration::from_millis(d.load(Ordering::Relaxed)));
            }
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
}
