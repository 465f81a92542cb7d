//! `export_invoices` as a task: raw MCP 2026-07-28 JSON-RPC over HTTP from a client that
//! declares the tasks extension (a handle at once, then the CSV of every invoice), one that
//! does not (the plain result), and a cancel that stops the export.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use billing_server::{EXPORT_HEADER, Options, Store, server};
use mcp_fusion::http::{HttpConfig, HttpServer};
use serde_json::json;

use crate::support::tasks::{meta, post, read_task, settled, start_export};

async fn serve(dir: &Path, export_delay: Duration) -> SocketAddr {
    let options = Options { export_delay: Some(export_delay), ..Options::default() };
    let server = server(Store::open(&dir.join("billing.db")).unwrap(), &options).unwrap();
    let http = HttpServer::bind(server, HttpConfig::new("127.0.0.1:0")).await.unwrap();
    let addr = http.local_addr();
    tokio::spawn(http.serve(std::future::pending()));
    addr
}

fn ids(csv: &str) -> Vec<&str> {
    csv.lines().skip(1).map(|line| line.split(',').next().unwrap()).collect()
}

#[tokio::test]
async fn an_export_runs_as_a_task_and_its_result_lists_every_invoice() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}/mcp", serve(dir.path(), Duration::from_millis(300)).await);
    let id = start_export(&url, json!({"action": "export_invoices"})).await;
    let done = settled(&url, &id, Duration::from_secs(20)).await;
    let result = &done["result"];
    assert_eq!(result["status"], "completed", "{done}");
    let csv = result["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(csv.lines().next(), Some(EXPORT_HEADER));
    let expected: Vec<String> = (1..=6).map(|n| format!("inv_2026_{n:04}")).collect();
    assert_eq!(ids(csv), expected);
    assert!(csv.contains("\ninv_2026_0003,bruno@example.com.br,990000,300000,BRL,open,2026-03-15,"), "{csv}");
}

#[tokio::test]
async fn a_client_without_tasks_waits_for_the_plain_csv_of_one_status() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}/mcp", serve(dir.path(), Duration::from_millis(50)).await);
    let arguments = json!({"action": "export_invoices", "status": "open"});
    let answer =
        post(&url, "tools/call", "billing", json!({"name": "billing", "arguments": arguments, "_meta": meta(false)}))
            .await;
    let csv = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(ids(csv), ["inv_2026_0002", "inv_2026_0003", "inv_2026_0006"]);
}

#[tokio::test]
async fn cancelling_an_export_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    // An hour's export: only a cancel ends it within the test.
    let url = format!("http://{}/mcp", serve(dir.path(), Duration::from_secs(3600)).await);
    let id = start_export(&url, json!({"action": "export_invoices"})).await;
    assert_eq!(read_task(&url, &id).await["result"]["status"], "working");
    let ack = post(&url, "tasks/cancel", &id, json!({"taskId": id})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = settled(&url, &id, Duration::from_secs(20)).await;
    assert_eq!(done["result"]["status"], "cancelled", "{done}");
    // A validation error is answered as the plain call: no task to poll.
    let refused = post(
        &url,
        "tools/call",
        "billing",
        json!({"name": "billing", "arguments": {"action": "export_invoices", "status": "late"}}),
    )
    .await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(refused["result"].get("taskId").is_none());
}
