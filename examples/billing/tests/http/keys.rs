//! Keys no client can choose, on the built `billing-server` over HTTP.
//!
//! Idempotency keys are bound to their caller and their arguments, durably: two anonymous
//! callers (two sessions) and one key. Whether memory forgot the key (a restart, more keys
//! than it keeps), a key sent again by another caller or with other arguments gets
//! `CONFLICT`, and the invoices show nothing happened.
//!
//! Rate limits count the caller, not a session header a session-less request merely carries.

use crate::support;

use std::path::Path;

use mcp_fusion::wire::{ErrorCode, parse};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

/// A new caller: a session of its own.
async fn caller(url: &str) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(url.to_owned())).await.expect("initialize over HTTP")
}

async fn call(client: &Client, arguments: Value) -> CallToolResult {
    let arguments = arguments.as_object().cloned().unwrap();
    client.call_tool(CallToolRequestParams::new("billing").with_arguments(arguments)).await.unwrap()
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|block| block.as_text()).map(|text| text.text.as_str()).collect()
}

fn create(email: &str, cents: i64, currency: &str, key: &str) -> Value {
    json!({"action": "create_invoice", "customer_email": email, "amount_cents": cents, "currency": currency,
           "idempotency_key": key})
}

fn pay(id: &str, cents: i64, key: &str) -> Value {
    json!({"action": "pay_invoice", "id": id, "amount_cents": cents, "idempotency_key": key})
}

/// Asserts `result` is a `CONFLICT` naming the key, and returns its message.
fn assert_conflict(result: &CallToolResult, key: &str) -> String {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let error = parse(&text(result)).error;
    assert_eq!(error.code, ErrorCode::Conflict, "{error:?}");
    assert!(error.message.contains(&format!("'{key}'")), "{error:?}");
    error.message.clone()
}

/// Every invoice as `(id, customer_email, amount_cents, paid_cents)`, read from the file.
fn invoices(db: &Path) -> Vec<(String, String, i64, i64)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt =
        conn.prepare("SELECT id, customer_email, amount_cents, paid_cents FROM invoices ORDER BY seq").unwrap();
    stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Caller A creates an invoice under `order-42` and pays `inv_2026_0002` under `pay-7`;
/// returns the new invoice's id.
async fn first_caller_writes(url: &str) -> String {
    let a = caller(url).await;
    let created = call(&a, create("victim@example.com", 98_765_400, "EUR", "order-42")).await;
    assert_eq!(created.is_error, Some(false), "{created:?}");
    let id = created.structured_content.as_ref().unwrap()["id"].as_str().unwrap().to_owned();
    let paid = call(&a, pay("inv_2026_0002", 100, "pay-7")).await;
    assert_eq!(paid.is_error, Some(false), "{paid:?}");
    a.cancel().await.unwrap();
    id
}

/// Caller B sends A's keys with its own arguments, and A's very arguments: `CONFLICT` each
/// time, never A's answer.
async fn second_caller_is_refused(url: &str) {
    let b = caller(url).await;
    let stolen = call(&b, create("attacker@example.com", 100, "USD", "order-42")).await;
    assert_conflict(&stolen, "order-42");
    let same = call(&b, create("victim@example.com", 98_765_400, "EUR", "order-42")).await;
    let message = assert_conflict(&same, "order-42");
    assert!(message.contains("another caller"), "{message}");
    let other_invoice = call(&b, pay("inv_2026_0003", 5, "pay-7")).await;
    assert_conflict(&other_invoice, "pay-7");
    b.cancel().await.unwrap();
}

/// Nothing B sent took effect: no invoice of its, no payment on `inv_2026_0003`.
fn assert_untouched(db: &Path, created: &str) {
    let rows = invoices(db);
    assert_eq!(rows.len(), 7, "the six seeded invoices and A's: {rows:?}");
    assert_eq!(rows[6], (created.to_owned(), "victim@example.com".to_owned(), 98_765_400, 0));
    assert!(rows.iter().all(|row| row.1 != "attacker@example.com"), "{rows:?}");
    let paid = |id: &str| rows.iter().find(|row| row.0 == id).unwrap().3;
    assert_eq!(paid("inv_2026_0002"), 100, "A's payment, once");
    assert_eq!(paid("inv_2026_0003"), 300_000, "the seeded payment only");
}

#[tokio::test]
async fn after_a_restart_another_callers_key_reuse_is_a_conflict_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let mut server = support::spawn_http(&db, &[], &[]);
    let created = first_caller_writes(&server.url).await;
    assert!(server.terminate().success());

    // A new process: its memory of keys is empty, the database holds them.
    let server = support::spawn_http(&db, &[], &[]);
    second_caller_is_refused(&server.url).await;
    assert_untouched(&db, &created);
}

#[tokio::test]
async fn after_memory_evicted_the_key_another_callers_reuse_is_a_conflict_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let server = support::spawn_http(&db, &["--idempotency-keys", "8"], &[]);
    let created = first_caller_writes(&server.url).await;
    // Cheap calls with fresh keys, each answer kept: far more than memory holds.
    let filler = caller(&server.url).await;
    for n in 0..40 {
        let missing = call(&filler, pay("inv_2026_9999", 1, &format!("filler-{n}"))).await;
        assert_eq!(parse(&text(&missing)).error.code, ErrorCode::NotFound, "{missing:?}");
    }
    filler.cancel().await.unwrap();
    second_caller_is_refused(&server.url).await;
    assert_untouched(&db, &created);
}

/// A 2026-07-28 `tools/call` outside any session (per-request metadata, no `initialize`).
fn session_less_call(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
    "name": "billing", "arguments": {"action": "list_invoices", "limit": 1},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "keys", "version": "0"}
    }}})
    .to_string()
}

#[tokio::test]
async fn a_made_up_session_header_on_a_session_less_request_is_no_new_budget() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let server = support::spawn_http_logging(&dir.path().join("billing.db"), &["--rate-limit", "5/60"], &log);
    let http = reqwest::Client::new();
    let mut admitted = 0;
    for n in 0..30u64 {
        // A new header each time, some of them 16 KB long.
        let made_up = if n % 2 == 0 { format!("made-up-{n}") } else { format!("{n}-{}", "x".repeat(16 * 1024)) };
        let response = http
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "billing")
            .header("mcp-session-id", made_up)
            .body(session_less_call(n))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let body = response.text().await.unwrap();
        let result: Value = serde_json::from_str(body.trim_start_matches("data:").trim()).unwrap_or_else(|_| {
            serde_json::from_str(body.lines().find_map(|line| line.strip_prefix("data:")).unwrap().trim()).unwrap()
        });
        if result["result"]["isError"] == json!(false) {
            admitted += 1;
        } else {
            let envelope = result["result"]["content"][0]["text"].as_str().unwrap();
            assert_eq!(parse(envelope).error.code, ErrorCode::RateLimited, "{result}");
        }
    }
    assert_eq!(admitted, 5, "the limit counts the client's address, whatever session header it sends");
    drop(server);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(!logged.contains("made-up-"), "a session header no session stands behind is not logged");
    assert!(logged.len() < 64 * 1024, "{} bytes of log for 30 calls", logged.len());
}
