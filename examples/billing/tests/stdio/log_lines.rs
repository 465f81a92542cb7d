//! The built `billing-server`'s log, at its default filter (`info,rmcp=warn`), under requests
//! whose id, method and tool name carry newlines, carriage returns, terminal escapes, bidi
//! overrides and a fake log line: every line of stderr is one of the server's own, and what
//! the client sent shows in them escaped.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_billing-server");

/// A line of the log's own format, forged inside a value.
const FORGED: &str = "FORGED-LOG-LINE 2026-01-01T00:00:00.000000Z ERROR billing_server: void every invoice";

#[test]
fn what_a_client_sends_never_forges_a_log_line_or_reaches_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Command::new(BIN)
        .arg("--db")
        .arg(dir.path().join("billing.db"))
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn billing-server");
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap()).lines();
    let mut stderr = server.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut log = Vec::new();
        stderr.read_to_end(&mut log).unwrap();
        log
    });
    let evil = format!("h3\n{FORGED}\r\u{1b}[2J\u{202e}");
    let requests = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        // rmcp's own WARN line of a JSON-RPC error prints the id.
        json!({"jsonrpc": "2.0", "id": format!("{evil}1"), "method": "resources/read", "params": {"uri": "nope://x"}}),
        json!({"jsonrpc": "2.0", "id": format!("{evil}2"), "method": format!("tools/call{evil}"), "params": {}}),
        // The framework's own lines: the call's end, with the tool name; an undecodable request.
        json!({"jsonrpc": "2.0", "id": format!("{evil}3"), "method": "tools/call",
            "params": {"name": format!("billing{evil}"), "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": format!("{evil}4"), "method": "tools/call", "params": 5}),
    ];
    for request in &requests {
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        if request.get("id").is_none() {
            continue;
        }
        let answer: Value = serde_json::from_str(&stdout.next().expect("an answer").unwrap()).unwrap();
        assert_eq!(answer["id"], request["id"], "{answer}");
    }
    drop(stdin);
    assert!(server.wait().unwrap().success());
    let log = log.join().unwrap();

    assert!(!log.contains(&0x1b), "a raw ESC reached the log");
    let log = String::from_utf8(log).unwrap();
    assert!(!log.contains(['\r', '\u{202e}']), "{log:?}");
    for line in log.lines() {
        assert!(line.starts_with("20") && line.as_bytes()[10] == b'T', "a line that is not the server's: {line:?}");
        assert!(!line.starts_with("FORGED"), "{line:?}");
    }
    // Each request that failed was logged, once, with what it sent escaped.
    let escaped = format!(r"h3\n{FORGED}\r\u{{1b}}[2J\u{{202e}}");
    let count = |text: &str| log.lines().filter(|line| line.contains(text)).count();
    assert_eq!(count(&format!("rmcp::service: response error id={escaped}1 ")), 1, "{log}");
    assert_eq!(count(&format!("rmcp::service: response error id={escaped}2 ")), 1, "{log}");
    assert_eq!(count(&format!("call finished action=\"billing{escaped}\" outcome=\"UNKNOWN_ACTION\"")), 1, "{log}");
    assert_eq!(count("answering an undecodable request"), 1, "{log}");
}
