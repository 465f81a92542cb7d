//! The server built in process over a SQLite file, a client connected to it through
//! `mcp_fusion::testing` (the real protocol over an in-memory pipe), and calls of its `billing`
//! tool.

use std::path::Path;

use billing_server::{Options, Store, server};
use mcp_fusion::FusionServer;
use mcp_fusion::testing::TestClient;
use mcp_fusion::transport::RequestInfo;
use rmcp::model::CallToolResult;
use serde_json::Value;

pub async fn build(db: &Path, options: &Options) -> TestClient {
    TestClient::connect(server(Store::open(db).expect("open the store"), options).expect("build the server")).await
}

pub async fn call(client: &TestClient, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else { panic!("arguments are an object") };
    client.call_tool("billing", arguments).await
}

/// The first text block.
pub fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

/// The server itself, for tests that call it from many tasks at once or hold it beside a
/// client (retries, timeouts, crashes).
pub fn build_server(db: &Path, options: &Options) -> FusionServer {
    server(Store::open(db).expect("open the store"), options).expect("build the server")
}

/// A call of the `billing` tool made on the server directly, without a transport.
pub async fn call_server(server: &FusionServer, arguments: Value) -> CallToolResult {
    server.call("billing", arguments.as_object().cloned(), RequestInfo::default()).await
}
