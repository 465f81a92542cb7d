//! The server built in process over a SQLite file, and calls of its `billing` tool.

use std::path::Path;

use billing_server::{Options, Store, server};
use mcp_fusion::FusionServer;
use mcp_fusion::transport::RequestInfo;
use rmcp::model::CallToolResult;
use serde_json::Value;

pub fn build(db: &Path, options: &Options) -> FusionServer {
    server(Store::open(db).expect("open the store"), options).expect("build the server")
}

pub async fn call(server: &FusionServer, arguments: Value) -> CallToolResult {
    server.call("billing", arguments.as_object().cloned(), RequestInfo::default()).await
}

/// The first text block.
pub fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}
