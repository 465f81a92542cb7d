//! The built `billing-server` over HTTP, as tests start it.

#![allow(dead_code)]

pub mod in_process;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_billing-server");

/// A server on a free loopback port; killed when dropped, unless already stopped.
pub struct HttpChild {
    pub child: Child,
    pub url: String,
}

/// Starts `billing-server --db DB --http 127.0.0.1:0 EXTRA..` with `envs`, and waits for the
/// line it prints once bound.
pub fn spawn_http(db: &Path, extra: &[&str], envs: &[(&str, &str)]) -> HttpChild {
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(db)
        .args(["--http", "127.0.0.1:0"])
        .args(extra)
        .envs(envs.iter().copied())
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn billing-server");
    let mut lines = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
    let url = loop {
        let line = lines.next().expect("the server prints its address").expect("readable stderr");
        if let Some(url) = line.strip_prefix("billing-server: listening on ") {
            break url.to_owned();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    HttpChild { child, url }
}

impl HttpChild {
    /// Sends SIGTERM and waits (up to 10 s) for the exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().expect("kill -TERM");
        for _ in 0..200 {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("billing-server did not stop within 10 s of SIGTERM");
    }
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
