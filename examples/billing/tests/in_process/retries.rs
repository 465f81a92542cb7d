//! Nothing done twice: calls that time out while another process holds the database's write
//! lock, retried with their idempotency keys; two servers writing one file at once.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::support;

use billing_server::Options;
use mcp_fusion::FusionServer;
use mcp_fusion::wire::{ErrorCode, parse};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use support::in_process::{build_server, call_server, text};

fn code(result: &CallToolResult) -> Option<ErrorCode> {
    (result.is_error == Some(true)).then(|| parse(text(result)).error.code.clone())
}

fn rows(db: &Path) -> i64 {
    rusqlite::Connection::open(db).unwrap().query_row("SELECT COUNT(*) FROM invoices", [], |row| row.get(0)).unwrap()
}

/// Another process's write transaction on `db`, held until dropped: the server's writes wait
/// on it past their deadline.
fn hold_write_lock(db: &Path) -> rusqlite::Connection {
    let holder = rusqlite::Connection::open(db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    holder
}

/// A server whose calls time out after 2 s: a write waiting on another process's lock does
/// (SQLite waits 5 s for it), and a write that can run finishes in time on a busy machine too.
fn timing_out(db: &Path) -> FusionServer {
    build_server(db, &Options { timeout: Some(Duration::from_secs(2)), ..Options::default() })
}

fn create(key: Option<&str>) -> Value {
    let mut arguments = json!({"action": "create_invoice", "customer_email": "dora@example.com", "amount_cents": 700, "currency": "EUR"});
    if let Some(key) = key {
        arguments["idempotency_key"] = json!(key);
    }
    arguments
}

/// Fails before this change: all 50 timed-out creates committed once the lock was gone, and
/// their retries created 50 more.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_timed_out_creates_retried_with_their_keys_create_fifty_invoices() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let server = Arc::new(timing_out(&db));
    let before = rows(&db);

    let holder = hold_write_lock(&db);
    let calls = (0..50).map(|i| {
        let server = Arc::clone(&server);
        tokio::spawn(async move { call_server(&server, create(Some(&format!("create-{i}")))).await })
    });
    let timed_out = futures_util::future::join_all(calls).await;
    for result in &timed_out {
        let result = result.as_ref().unwrap();
        assert_eq!(code(result), Some(ErrorCode::Timeout), "{}", text(result));
        assert!(
            text(result).contains("the same idempotency_key: it takes effect at most once per key"),
            "{}",
            text(result)
        );
    }
    drop(holder);
    // The timed-out writes got the lock now; none may commit.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(rows(&db), before, "a write answered with TIMEOUT was committed");

    let mut ids = Vec::new();
    for round in 0..2 {
        for i in 0..50 {
            let result = call_server(&server, create(Some(&format!("create-{i}")))).await;
            assert_eq!(code(&result), None, "{}", text(&result));
            let id = result.structured_content.expect("the invoice")["id"].clone();
            if round == 0 {
                ids.push(id);
            } else {
                assert_eq!(id, ids[i], "a retry with the same key returns the first invoice");
            }
        }
    }
    assert_eq!(rows(&db), before + 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payment_retried_after_a_timeout_pays_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let server = timing_out(&db);
    // inv_2026_0002: 45000 EUR cents open, nothing paid.
    let pay = json!({"action": "pay_invoice", "id": "inv_2026_0002", "amount_cents": 1000, "idempotency_key": "pay-7"});

    let holder = hold_write_lock(&db);
    let timed_out = call_server(&server, pay.clone()).await;
    assert_eq!(code(&timed_out), Some(ErrorCode::Timeout), "{}", text(&timed_out));
    drop(holder);
    tokio::time::sleep(Duration::from_millis(300)).await;

    for _ in 0..3 {
        let paid = call_server(&server, pay.clone()).await;
        assert_eq!(code(&paid), None, "{}", text(&paid));
        assert_eq!(paid.structured_content.unwrap()["paid_cents"], 1000);
    }
    let read = call_server(&server, json!({"action": "get_invoice", "id": "inv_2026_0002"})).await;
    assert_eq!(read.structured_content.unwrap()["paid_cents"], 1000, "paid once");

    let other =
        json!({"action": "pay_invoice", "id": "inv_2026_0002", "amount_cents": 2000, "idempotency_key": "pay-7"});
    let conflict = call_server(&server, other).await;
    assert_eq!(code(&conflict), Some(ErrorCode::Conflict), "{}", text(&conflict));
    assert!(text(&conflict).contains("send a new idempotency_key"), "{}", text(&conflict));
}

/// Without a key, a write the deadline overtook is rolled back, and the envelope says what to
/// do instead of "retry".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_answered_with_timeout_never_commits_later() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let server = timing_out(&db);
    let before = rows(&db);

    let holder = hold_write_lock(&db);
    let create = call_server(&server, create(None)).await;
    let void = json!({"action": "void_invoice", "id": "inv_2026_0006", "reason": "Duplicate"});
    let void = call_server(&server, void).await;
    drop(holder);
    tokio::time::sleep(Duration::from_millis(500)).await;

    assert_eq!(code(&create), Some(ErrorCode::Timeout));
    assert!(text(&create).contains("It may have run"), "{}", text(&create));
    assert!(text(&create).contains("Send an idempotency_key with each call"), "{}", text(&create));
    assert!(text(&void).contains("call billing.get_invoice to see whether it took effect"), "{}", text(&void));
    assert!(text(&void).contains("<action>billing.get_invoice</action>"), "{}", text(&void));
    assert_eq!(rows(&db), before);
    let read = call_server(&server, json!({"action": "get_invoice", "id": "inv_2026_0006"})).await;
    assert_eq!(read.structured_content.unwrap()["status"], "open");

    let list = call_server(&server, json!({"action": "get_invoice", "id": "inv_2026_0001"})).await;
    assert_eq!(code(&list), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_calls_with_one_key_create_one_invoice() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let server = Arc::new(build_server(&db, &Options::default()));
    let before = rows(&db);
    let calls = (0..20).map(|_| {
        let server = Arc::clone(&server);
        tokio::spawn(async move { call_server(&server, create(Some("one-key"))).await })
    });
    let results = futures_util::future::join_all(calls).await;
    let first = results[0].as_ref().unwrap().structured_content.clone().expect("the invoice");
    for result in results {
        assert_eq!(result.unwrap().structured_content.as_ref(), Some(&first));
    }
    assert_eq!(rows(&db), before + 1);
}

/// Fails before this change: some creates of one server met the other's lock and answered
/// INTERNAL_ERROR "database is locked".
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_one_file_never_fail_on_its_lock() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let replicas = Arc::new([build_server(&db, &Options::default()), build_server(&db, &Options::default())]);
    let before = rows(&db);
    let calls = (0..120).map(|i| {
        let replicas = Arc::clone(&replicas);
        tokio::spawn(async move { call_server(&replicas[i % 2], create(None)).await })
    });
    let results = futures_util::future::join_all(calls).await;
    let failed: Vec<String> = results
        .iter()
        .map(|result| result.as_ref().unwrap())
        .filter(|result| result.is_error == Some(true))
        .map(|result| text(result).to_owned())
        .collect();
    assert!(failed.is_empty(), "{} of 120 failed, the first: {}", failed.len(), failed[0]);
    assert_eq!(rows(&db), before + 120);
    let mode: String =
        rusqlite::Connection::open(&db).unwrap().query_row("PRAGMA journal_mode", [], |row| row.get(0)).unwrap();
    assert_eq!(mode, "wal");
}
