//! `billing-server` over stdio exits when its client stops reading, even while stdin stays
//! open: nothing it could still do would reach anyone.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_billing-server");

#[test]
fn a_closed_stdout_ends_the_process_while_stdin_stays_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(dir.path().join("billing.db"))
        .env("RUST_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn billing-server");
    let mut stdin = child.stdin.take().unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "exit-test", "version": "0"}}});
    writeln!(stdin, "{initialize}").unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains(r#""id":1"#), "{line}");
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    drop(stdout);
    // Its answer cannot be written: the server learns that nobody reads.
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"ping"}}"#).unwrap();
    stdin.flush().unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(30) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.is_none() {
        child.kill().unwrap();
    }
    drop(stdin);
    assert!(status.is_some(), "billing-server still runs 30 s after its stdout closed");
}

/// A client that sends its writes and closes stdin at once: each write either is not made and
/// is logged `CANCELLED`, or is made and logged with its outcome, before the process ends.
#[test]
fn stdin_closed_mid_call_leaves_no_write_untold() {
    const CREATES: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let log = dir.path().join("server.log");
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(&db)
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("spawn billing-server");
    let mut stdin = child.stdin.take().unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "gone", "version": "0"}}});
    let mut frames = format!("{initialize}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
    for n in 1..=CREATES {
        let create = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "billing",
            "arguments": {"action": "create_invoice", "customer_email": "gone@example.com", "amount_cents": n,
                "currency": "EUR"}}});
        frames.push_str(&format!("{create}\n"));
    }
    stdin.write_all(frames.as_bytes()).unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let text = std::fs::read_to_string(&log).unwrap();
    let outcomes: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("call finished") && line.contains("billing.create_invoice"))
        .filter_map(|line| line.split("outcome=\"").nth(1)?.split('"').next())
        .collect();
    let written = outcomes.iter().filter(|outcome| **outcome == "ok").count();
    assert!(outcomes.iter().all(|outcome| *outcome == "ok" || *outcome == "CANCELLED"), "{outcomes:?}");
    // The demo seeds its invoices under their own customers: this one's are the calls'.
    let connection = rusqlite::Connection::open(&db).unwrap();
    let made: i64 = connection
        .query_row("SELECT COUNT(*) FROM invoices WHERE customer_email = 'gone@example.com'", [], |row| row.get(0))
        .unwrap();
    assert_eq!(usize::try_from(made).unwrap(), written, "every invoice made is a call logged ok: {outcomes:?}\n{text}");
}
