//! A JSON-RPC error is a protocol failure carrying its code, not a tool error.

use std::sync::Arc;

use mcp_fusion_client::{FusionClient, FusionClientError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;

/// A server whose one tool answers every call with a JSON-RPC error.
struct Refusing;

impl ServerHandler for Refusing {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        Ok(ListToolsResult::with_all_items(vec![Tool::new("echo", "Echo.", Arc::new(schema))]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Err(ErrorData::invalid_params("echo refuses everything", Some(json!({"why": "test"}))))
    }
}

#[tokio::test]
async fn json_rpc_errors_keep_their_code() {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = Refusing.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = FusionClient::from_service(().serve(client_io).await.unwrap()).await.unwrap();
    match client.call("echo", json!({})).await {
        Err(FusionClientError::Protocol { code, message, data }) => {
            assert_eq!(
                (code, message.as_str(), data),
                (-32602, "echo refuses everything", Some(json!({"why": "test"})))
            );
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
    match client.call("echo", json!([1])).await {
        Err(FusionClientError::Arguments { action, found }) => {
            assert_eq!((action.as_str(), found), ("echo", json!([1])))
        }
        other => panic!("{other:?}"),
    }
}
