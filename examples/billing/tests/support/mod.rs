//! The built `billing-server` over HTTP, as tests start it.

#![allow(dead_code)]

pub mod in_process;
pub mod tasks;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_billing-server");

/// A server on a free loopback port; killed when dropped, unless already stopped.
pub struct HttpChild {
    pub child: Child,
    pub url: String,
    /// The line that told the URL.
    pub line: String,
}

/// Starts `billing-server --db DB --http 127.0.0.1:0 EXTRA..` with `envs`, and waits for the
/// line it logs once bound.
pub fn spawn_http(db: &Path, extra: &[&str], envs: &[(&str, &str)]) -> HttpChild {
    spawn_http_on("127.0.0.1:0", db, extra, envs)
}

/// Starts `billing-server --db DB --http ADDR EXTRA..` with `envs` and `RUST_LOG=warn`, and
/// waits for the line it logs once bound (whatever RUST_LOG says).
pub fn spawn_http_on(addr: &str, db: &Path, extra: &[&str], envs: &[(&str, &str)]) -> HttpChild {
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(db)
        .args(["--http", addr])
        .args(extra)
        .envs(envs.iter().copied())
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn billing-server");
    let mut lines = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
    let (url, line) = loop {
        let line = lines.next().expect("the server prints its address").expect("readable stderr");
        if let Some(url) = listening_url(&line) {
            break (url, line);
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    HttpChild { child, url, line }
}

/// Starts `billing-server --db DB --http 127.0.0.1:0 EXTRA..` with `RUST_LOG=info`, its
/// stderr written to `log`, and waits for the start-up line there.
pub fn spawn_http_logging(db: &Path, extra: &[&str], log: &Path) -> HttpChild {
    let file = std::fs::File::create(log).expect("create the log file");
    let child = Command::new(BIN)
        .arg("--db")
        .arg(db)
        .args(["--http", "127.0.0.1:0"])
        .args(extra)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .expect("spawn billing-server");
    let mut server = HttpChild { child, url: String::new(), line: String::new() };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some((url, line)) = text.lines().find_map(|line| Some((listening_url(line)?, line.to_owned()))) {
            (server.url, server.line) = (url, line);
            return server;
        }
        assert!(server.child.try_wait().unwrap().is_none(), "billing-server exited before listening:\n{text}");
        assert!(std::time::Instant::now() < deadline, "billing-server did not listen within 60 s:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The last JSON-RPC message of a Streamable HTTP answer: the JSON body, or the last event of
/// its SSE stream (`null` when it has none).
pub fn last_message(text: &str) -> serde_json::Value {
    match text.trim_start().starts_with('{') {
        true => serde_json::from_str(text).unwrap(),
        false => text
            .lines()
            .filter_map(|line| line.strip_prefix("data:").map(str::trim))
            .filter(|data| !data.is_empty())
            .map(|data| serde_json::from_str(data).unwrap())
            .next_back()
            .unwrap_or(serde_json::Value::Null),
    }
}

/// The URL of the start-up line, `… INFO billing-server: listening on http://ADDR/mcp addr=ADDR`.
pub fn listening_url(line: &str) -> Option<String> {
    let (_, after) = line.split_once("listening on ")?;
    let url = after.split_whitespace().next()?;
    url.starts_with("http://").then(|| url.to_owned())
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
