//! A real rmcp client talking to a server over an in-process duplex pipe.

#![allow(dead_code)]

use mcp_fusion::FusionServer;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{Peer, RoleClient, ServiceExt};
use serde_json::Value;

/// A connected client; dropping it closes the pipe and ends the server task.
pub type Client = RunningService<RoleClient, ()>;

/// Serves `server` on one end of a duplex pipe and connects an rmcp client to the other.
pub async fn connect(server: FusionServer) -> Client {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_io).await.expect("the client connects")
}

/// Calls `tool` with `arguments` (a JSON object) and returns the result.
pub async fn call(client: &Peer<RoleClient>, tool: &str, arguments: Value) -> CallToolResult {
    let arguments = match arguments {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, not {other}"),
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .expect("tools/call answers with a result")
}

/// The text blocks of a result.
pub fn texts(result: &CallToolResult) -> Vec<String> {
    result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.clone()).collect()
}

/// The single text block of an error result, asserting it is flagged `isError`.
pub fn error_text(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "expected an error result, got {result:?}");
    assert!(result.structured_content.is_none(), "a failed call never carries structuredContent");
    let texts = texts(result);
    assert_eq!(texts.len(), 1, "expected one text block, got {texts:?}");
    texts.into_iter().next().unwrap_or_default()
}

/// The `<field>` lines of a validation error.
pub fn field_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("<field ")).collect()
}

/// The validation envelope of `action` with these field lines.
pub fn validation_envelope(action: &str, fields: &[&str]) -> String {
    let mut text = format!("<validation_error action=\"{action}\">\n");
    for field in fields {
        text.push_str(field);
        text.push('\n');
    }
    text.push_str("<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>");
    text
}

/// Waits until `done` holds, checking every 10 ms for 30 s.
pub async fn wait_until(mut done: impl FnMut() -> bool) {
    for _ in 0..3000 {
        if done() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the condition did not hold within 30 s");
}
