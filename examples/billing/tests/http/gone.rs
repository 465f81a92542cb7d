//! A client that goes away mid-call: a write is never left half-told. A half-closed connection
//! (the request sent, the writing side shut, as HTTP/1.1 allows) is answered; a connection
//! closed outright has each of its calls either not written and logged `CANCELLED`, or written
//! and logged with its outcome.

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use serde_json::json;

use crate::support;

const CALLS: usize = 30;

/// A session-less 2026-07-28 `create_invoice` as raw HTTP/1.1 to `url`'s host.
fn create_request(url: &str, n: usize) -> (String, Vec<u8>) {
    let host = url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
        "name": "billing",
        "arguments": {"action": "create_invoice", "customer_email": format!("gone{n}@example.com"),
            "amount_cents": 100 + n, "currency": "EUR"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "gone", "version": "0"}}}})
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: billing\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    (host, [head.into_bytes(), body.into_bytes()].concat())
}

/// The outcomes the log holds of `create_invoice` calls.
fn create_outcomes(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.contains("call finished") && line.contains("action=\"billing.create_invoice\""))
        .filter_map(|line| line.split("outcome=\"").nth(1)?.split('"').next().map(str::to_owned))
        .collect()
}

/// How many invoices the server holds.
async fn invoices(url: &str) -> usize {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "billing")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "billing", "arguments": {"action": "list_invoices", "limit": 100},
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "gone", "version": "0"}}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    let message = support::last_message(&response.text().await.unwrap());
    message["result"]["structuredContent"]["invoices"].as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn a_half_closed_call_is_answered_and_a_closed_one_is_written_only_if_logged() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let server = support::spawn_http_logging(&dir.path().join("billing.db"), &[], &log);
    let url = server.url.clone();
    let seeded = invoices(&url).await;

    // Half-closed after the request: every call answered, with the invoice it made.
    let answered = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            (0..CALLS)
                .filter(|&n| {
                    let (host, request) = create_request(&url, n);
                    let mut socket = TcpStream::connect(&host).unwrap();
                    socket.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
                    socket.write_all(&request).unwrap();
                    socket.shutdown(Shutdown::Write).unwrap();
                    let mut answer = String::new();
                    let _ = socket.read_to_string(&mut answer);
                    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
                    answer.starts_with("HTTP/1.1 200")
                        && support::last_message(body)["result"]["structuredContent"]["id"].is_string()
                })
                .count()
        }
    })
    .await
    .unwrap();
    assert_eq!(answered, CALLS, "half-closed calls answered with their invoice");
    assert_eq!(invoices(&url).await, seeded + CALLS);

    // Closed outright right after the request: whatever each call did, its log line says.
    for n in CALLS..2 * CALLS {
        let (host, request) = create_request(&url, n);
        let mut socket = TcpStream::connect(&host).unwrap();
        socket.write_all(&request).unwrap();
        drop(socket);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let outcomes = loop {
        let outcomes = create_outcomes(&log);
        if outcomes.len() >= 2 * CALLS {
            break outcomes;
        }
        assert!(std::time::Instant::now() < deadline, "{} of {} calls logged", outcomes.len(), 2 * CALLS);
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(outcomes.len(), 2 * CALLS, "one line per call: {outcomes:?}");
    assert!(outcomes.iter().all(|outcome| outcome == "ok" || outcome == "CANCELLED"), "{outcomes:?}");
    let written = outcomes.iter().filter(|outcome| *outcome == "ok").count();
    assert_eq!(
        invoices(&url).await,
        seeded + written,
        "every invoice written is a call logged ok, and no other: {outcomes:?}"
    );
}
