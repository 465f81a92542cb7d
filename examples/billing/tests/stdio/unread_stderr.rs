//! A client that never reads stderr, which MCP allows: the server's log lines fill the pipe
//! within a few hundred calls, and serving goes on — lines are dropped, calls are not.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const CALLS: u64 = 3_000;

#[test]
fn with_stderr_a_pipe_nobody_reads_every_one_of_3000_calls_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_billing-server"))
        .arg("--db")
        .arg(dir.path().join("billing.db"))
        // Debug: the most lines a call can write, so the pipe is full after a few calls.
        .env("RUST_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Held open and never read, as such a client does.
    let _stderr = server.stderr.take().unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let stdout = BufReader::new(server.stdout.take().unwrap());
    let (answers, answered) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            if answers.send(message["id"].as_u64()).is_err() {
                return;
            }
        }
    });
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "deaf", "version": "0"}}});
    writeln!(stdin, "{initialize}\n{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    assert_eq!(answered.recv_timeout(Duration::from_secs(60)).unwrap(), Some(0));
    let writer = std::thread::spawn(move || {
        for id in 1..=CALLS {
            // A refused call writes the most: its problems and the call's end.
            let arguments = if id % 2 == 0 {
                json!({"action": "list_invoices"})
            } else {
                json!({"action": "create_invoice", "amount_cents": "lots", "currency": "euro"})
            };
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "billing", "arguments": arguments}});
            if writeln!(stdin, "{call}").is_err() {
                break;
            }
        }
        stdin
    });
    let mut seen = 0;
    while seen < CALLS {
        match answered.recv_timeout(Duration::from_secs(60)) {
            Ok(Some(_)) => seen += 1,
            Ok(None) => {}
            Err(_) => panic!("billing-server stopped answering after {seen} of {CALLS} calls"),
        }
    }
    drop(writer.join().unwrap());
    let status = server.wait().unwrap();
    assert!(status.success(), "billing-server exits cleanly when stdin closes: {status}");
}
