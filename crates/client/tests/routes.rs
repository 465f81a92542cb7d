//! Calls reach the tool a server publishes for them, with the discriminator it publishes,
//! through a real MCP session.

use std::sync::Arc;

use mcp_fusion_client::contract::{ACTION_META_KEY, ACTIONS_META_KEY, DISCRIMINATOR_META_KEY, Exposition};
use mcp_fusion_client::{FusionClient, FusionClientError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult, MetaObject, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// A server whose tools publish their routes, and whose every call answers with the tool it
/// reached and the arguments it got.
struct Echo;

fn tool(name: &str, meta: Value) -> Tool {
    let mut tool = Tool::new(name.to_owned(), "d", Arc::new(json!({"type": "object"}).as_object().cloned().unwrap()));
    tool.meta = Some(MetaObject(meta.as_object().cloned().unwrap()));
    tool
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            tool("billing", json!({DISCRIMINATOR_META_KEY: "op", ACTIONS_META_KEY: {"pay": {"inputSchema": {}}}})),
            tool("crm::find", json!({ACTION_META_KEY: "crm.find_contact"})),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let echoed = json!({"tool": request.name, "arguments": request.arguments});
        Ok(CallToolResult::structured(echoed).into())
    }
}

#[tokio::test]
async fn calls_follow_the_published_routes() {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = Echo.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = FusionClient::from_service(().serve(client_io).await.unwrap()).await.unwrap();
    assert_eq!(client.exposition(), Some(Exposition::Grouped { discriminator: "op".into() }));

    let paid = client.call("billing.pay", json!({"id": "inv_1"})).await.unwrap();
    assert_eq!(paid.value, Some(json!({"tool": "billing", "arguments": {"id": "inv_1", "op": "pay"}})));
    let found = client.call("crm.find_contact", json!({"q": "ada"})).await.unwrap();
    assert_eq!(found.value, Some(json!({"tool": "crm::find", "arguments": {"q": "ada"}})));

    match client.call("crm.delete_contact", json!({})).await {
        Err(FusionClientError::NoSuchAction { action, tools }) => {
            assert_eq!((action.as_str(), tools), ("crm.delete_contact", vec!["billing".into(), "crm::find".into()]));
        }
        other => panic!("expected NoSuchAction, got {other:?}"),
    }
}
