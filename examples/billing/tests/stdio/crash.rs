//! Crash safety: `billing-server` killed with SIGKILL in the middle of a stream of creates,
//! again and again. After each kill the database passes `PRAGMA integrity_check` and holds
//! every create that was acknowledged; retrying every create that was not, with its
//! idempotency key, leaves exactly one invoice per key.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

const ROUNDS: usize = 12;
const CREATES_PER_ROUND: usize = 300;

/// `billing-server` on stdio over `db`, initialized — its answer to `initialize` read, so its
/// database is open and migrated; its answers arrive on the receiver as `(request id, invoice
/// id)` for each created invoice.
fn start(db: &Path) -> (Child, ChildStdin, mpsc::Receiver<(u64, String)>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_billing-server"))
        .arg("--db")
        .arg(db)
        .env("RUST_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start billing-server");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    let (ready, initialized) = mpsc::channel();
    thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { return };
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            if message["id"] == 0 {
                let _ = ready.send(());
                continue;
            }
            let (Some(id), Some(invoice)) =
                (message["id"].as_u64(), message["result"]["structuredContent"]["id"].as_str())
            else {
                continue;
            };
            if tx.send((id, invoice.to_owned())).is_err() {
                return;
            }
        }
    });
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "crash", "version": "0"}}});
    writeln!(stdin, "{initialize}").unwrap();
    // The server answers `initialize` only once its store is open: a kill from now on meets
    // a database with its schema.
    initialized.recv_timeout(Duration::from_secs(60)).expect("billing-server answers initialize");
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    (child, stdin, rx)
}

fn create(id: u64, key: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "billing", "arguments": {
        "action": "create_invoice", "customer_email": "crash@example.com", "amount_cents": 100,
        "currency": "EUR", "idempotency_key": key}}})
    .to_string()
}

fn key(round: usize, n: usize) -> String {
    format!("round-{round}-create-{n}")
}

#[test]
fn killed_mid_stream_again_and_again_it_keeps_every_acknowledged_write_and_no_key_twice() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let mut acknowledged_in_all = 0;
    let mut unacknowledged_commits = 0;
    for round in 0..ROUNDS {
        let (mut child, mut stdin, answers) = start(&db);
        // Written from another thread: a pipe full of requests must not block the kill.
        let writer = thread::spawn(move || {
            for n in 0..CREATES_PER_ROUND {
                if writeln!(stdin, "{}", create(n as u64 + 1, &key(round, n))).is_err() {
                    return;
                }
            }
            let _ = stdin.flush();
            // Kept open: the server must not see the end of its input before the kill.
            thread::sleep(Duration::from_secs(30));
        });
        // Spread the kills over the stream: early, in the middle, near its end. Each lands once
        // the round's share is acknowledged (none in the first round, 275 in the last), while
        // the creates after it are still running, however fast or slow the machine is.
        let share = round * CREATES_PER_ROUND / ROUNDS;
        let before_the_kill: Vec<(u64, String)> = (0..share)
            .map(|_| answers.recv_timeout(Duration::from_secs(60)).expect("billing-server answers the creates"))
            .collect();
        child.kill().unwrap();
        child.wait().unwrap();
        drop(writer);
        let acknowledged: HashMap<String, String> = before_the_kill
            .into_iter()
            .chain(answers.try_iter())
            .map(|(id, invoice)| (key(round, id as usize - 1), invoice))
            .collect();
        acknowledged_in_all += acknowledged.len();

        let conn = rusqlite::Connection::open(&db).unwrap();
        let check: String = conn.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
        assert_eq!(check, "ok", "round {round}");
        for (key, invoice) in &acknowledged {
            let kept: Option<String> = conn
                .query_row(
                    "SELECT k.invoice_id FROM idempotency_keys k JOIN invoices i ON i.id = k.invoice_id
                     WHERE k.action = 'create_invoice' AND k.key = ?1",
                    [key],
                    |row| row.get(0),
                )
                .ok();
            assert_eq!(kept.as_ref(), Some(invoice), "round {round}: acknowledged {key} is not in the database");
        }
        let committed: i64 = conn
            .query_row("SELECT COUNT(*) FROM idempotency_keys WHERE key LIKE ?1", [format!("round-{round}-%")], |row| {
                row.get(0)
            })
            .unwrap();
        // Committed but not acknowledged: the answers the kill lost, which only the key in the
        // database keeps from being created twice.
        unacknowledged_commits += committed as usize - acknowledged.len();
        eprintln!(
            "round {round}: {} of {CREATES_PER_ROUND} creates acknowledged before the kill, {committed} committed",
            acknowledged.len()
        );
        drop(conn);

        // Retry every create that was not acknowledged, with its key, on a fresh server.
        let (mut child, mut stdin, answers) = start(&db);
        let missing: Vec<usize> =
            (0..CREATES_PER_ROUND).filter(|n| !acknowledged.contains_key(&key(round, *n))).collect();
        for &n in &missing {
            writeln!(stdin, "{}", create(n as u64 + 1, &key(round, n))).unwrap();
        }
        stdin.flush().unwrap();
        for _ in &missing {
            answers.recv_timeout(Duration::from_secs(30)).expect("every retried create is answered");
        }
        drop(stdin);
        child.wait().unwrap();

        let conn = rusqlite::Connection::open(&db).unwrap();
        let invoices: i64 = conn.query_row("SELECT COUNT(*) FROM invoices", [], |row| row.get(0)).unwrap();
        assert_eq!(
            invoices as usize,
            6 + (round + 1) * CREATES_PER_ROUND,
            "round {round}: one invoice per key, no more"
        );
        let unkeyed: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM invoices WHERE seq > 6 AND id NOT IN (SELECT invoice_id FROM idempotency_keys)",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(unkeyed, 0, "round {round}: every invoice belongs to its key");
    }
    // The kills did land mid-stream: some creates were acknowledged and some were not.
    assert!(acknowledged_in_all > 0 && acknowledged_in_all < ROUNDS * CREATES_PER_ROUND, "{acknowledged_in_all}");
    eprintln!("{unacknowledged_commits} creates were committed but never acknowledged, and not created twice");
}
