//! `export_invoices` as a task over stdio, for a client of MCP 2025-11-25's experimental tasks
//! (raw JSON-RPC lines to the built `billing-server`): `capabilities.tasks` at `initialize`, a
//! handle at once, `tasks/get` working then completed, `tasks/result` with every invoice id, the
//! `notifications/tasks/status` of its end, `tasks/list`, and a cancel that stops an export.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_billing-server");

/// A billing-server on stdio, read line by line on a thread of its own.
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    /// The notifications read so far, in order.
    notifications: Vec<Value>,
    next_id: u64,
}

impl Server {
    fn start(db: &std::path::Path, export_delay_ms: u64) -> Server {
        let mut child = Command::new(BIN)
            .arg("--db")
            .arg(db)
            .args(["--export-delay-ms", &export_delay_ms.to_string()])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn billing-server");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let message = serde_json::from_str(&line.expect("readable stdout")).expect("stdout carries JSON-RPC");
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        Server { child, stdin, lines, notifications: Vec::new(), next_id: 0 }
    }

    /// The next message, within a minute (a server that never answers fails the test).
    fn next(&mut self) -> Value {
        match self.lines.recv_timeout(Duration::from_secs(60)) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => panic!("no message from the server in a minute"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its stdout"),
        }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The answer to `method` with `params`; notifications read on the way are kept.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.next();
            if message["id"] == id {
                return message;
            }
            assert!(message.get("id").is_none(), "an answer to another request: {message}");
            self.notifications.push(message);
        }
    }

    /// The first notification of `method`, read now if not read yet.
    fn notification(&mut self, method: &str) -> Value {
        loop {
            if let Some(found) = self.notifications.iter().find(|message| message["method"] == method) {
                return found.clone();
            }
            let message = self.next();
            self.notifications.push(message);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn initialized(server: &mut Server) -> Value {
    let answer = server.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-2025", "version": "0"}}),
    );
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    answer
}

fn ids(csv: &str) -> Vec<&str> {
    csv.lines().skip(1).map(|line| line.split(',').next().unwrap()).collect()
}

#[test]
fn an_export_asked_as_a_task_is_answered_at_once_and_its_result_lists_every_invoice() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(&dir.path().join("billing.db"), 1_500);
    let answer = initialized(&mut server);
    let capabilities = &answer["result"]["capabilities"];
    assert_eq!(capabilities["tasks"]["requests"]["tools"]["call"], json!({}), "{answer}");
    let listed = server.request("tools/list", json!({}));
    assert_eq!(listed["result"]["tools"][0]["execution"]["taskSupport"], "optional", "{listed}");

    let call = json!({"name": "billing", "arguments": {"action": "export_invoices"}, "task": {"ttl": 600_000}});
    let created = server.request("tools/call", call);
    let task = &created["result"]["task"];
    assert_eq!((&task["status"], &task["ttl"]), (&json!("working"), &json!(600_000)), "{created}");
    let id = task["taskId"].as_str().unwrap().to_owned();
    let working = server.request("tasks/get", json!({"taskId": id}));
    assert_eq!(working["result"]["status"], "working", "{working}");

    let result = server.request("tasks/result", json!({"taskId": id}));
    let csv = result["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{result}"));
    let expected: Vec<String> = (1..=6).map(|n| format!("inv_2026_{n:04}")).collect();
    assert_eq!(ids(csv), expected);
    assert_eq!(result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], id.as_str());
    let ended = server.notification("notifications/tasks/status");
    assert_eq!((&ended["params"]["taskId"], &ended["params"]["status"]), (&json!(id), &json!("completed")), "{ended}");
    assert_eq!(server.request("tasks/get", json!({"taskId": id}))["result"]["status"], "completed");
    let listed = server.request("tasks/list", json!({}));
    assert_eq!(listed["result"]["tasks"][0]["taskId"], id.as_str(), "{listed}");
}

#[test]
fn a_cancelled_export_stops_and_a_plain_call_gets_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    // An hour's export: only the cancel ends it within the test.
    let mut server = Server::start(&dir.path().join("billing.db"), 3_600_000);
    initialized(&mut server);
    let call = json!({"name": "billing", "arguments": {"action": "export_invoices"}, "task": {}});
    let created = server.request("tools/call", call);
    let id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    let cancelled = server.request("tasks/cancel", json!({"taskId": id}));
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let result = server.request("tasks/result", json!({"taskId": id}));
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(r#"code="CANCELLED""#), "{text}");

    // Without `task`, the call is the plain call (an hour: so another server, of short exports).
    let mut quick = Server::start(&dir.path().join("quick.db"), 10);
    initialized(&mut quick);
    let plain = quick.request(
        "tools/call",
        json!({"name": "billing", "arguments": {"action": "export_invoices", "status": "open"}}),
    );
    let csv = plain["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{plain}"));
    assert_eq!(ids(csv), ["inv_2026_0002", "inv_2026_0003", "inv_2026_0006"]);
}
