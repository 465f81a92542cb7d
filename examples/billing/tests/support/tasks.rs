//! Tasks over raw MCP 2026-07-28 JSON-RPC: starting one, reading it, waiting for its end.

use std::time::Duration;

use serde_json::{Map, Value, json};

/// The `_meta` of a 2026-07-28 request, from a client that declares the tasks extension or not.
pub fn meta(tasks: bool) -> Value {
    let extensions = if tasks { json!({"io.modelcontextprotocol/tasks": {}}) } else { json!({}) };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    })
}

/// Posts one 2026-07-28 request (its `Mcp-Name` the tool or the task id); the JSON-RPC answer.
pub async fn post(url: &str, method: &str, name: &str, params: Value) -> Value {
    let mut params: Map<String, Value> = params.as_object().cloned().unwrap();
    params.entry("_meta").or_insert_with(|| meta(true));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    super::last_message(&response.text().await.unwrap())
}

/// Starts an export of `arguments` as a task; its id.
pub async fn start_export(url: &str, arguments: Value) -> String {
    let created = post(url, "tools/call", "billing", json!({"name": "billing", "arguments": arguments})).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert_eq!(created["result"]["status"], "working");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

/// The task as `tasks/get` reads it.
pub async fn read_task(url: &str, id: &str) -> Value {
    post(url, "tasks/get", id, json!({"taskId": id})).await
}

/// Polls the task until it is no longer working, for at most `within`.
pub async fn settled(url: &str, id: &str, within: Duration) -> Value {
    tokio::time::timeout(within, async {
        loop {
            let task = read_task(url, id).await;
            if task["result"]["status"] != "working" {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    })
    .await
    .expect("the task settles in time")
}
