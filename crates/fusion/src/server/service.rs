//! The server as rmcp sees it: `initialize`, `tools/list`, `tools/call`, and an answer that
//! names the problem for requests whose params do not decode.

use mcp_fusion_contract::MOUNTS_CAPABILITY;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::FusionServer;
use crate::transport::RequestInfo;

impl ServerHandler for FusionServer {
    fn get_info(&self) -> ServerConfig {
        // The catalog can change while the server runs (groups added or removed).
        let mut capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
        let mounts: Vec<Value> = self.inner.catalog.load().mounts().map(Value::from).collect();
        if !mounts.is_empty() {
            let mut namespaces = JsonObject::new();
            namespaces.insert("namespaces".into(), Value::Array(mounts));
            capabilities.experimental = Some([(MOUNTS_CAPABILITY.to_owned(), namespaces)].into());
        }
        let mut config = ServerConfig::new(capabilities).with_server_info(self.inner.info.clone());
        if let Some(instructions) = &self.inner.instructions {
            config = config.with_instructions(instructions.clone());
        }
        config
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.inner.peers.add(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    /// rmcp routes a request whose params do not decode to this handler; say what is wrong
    /// with them instead of claiming the method does not exist.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        match request.method.as_str() {
            "tools/call" => Err(ErrorData::invalid_params(call_params_problem(request.params.as_ref()), None)),
            "tools/list" | "initialize" | "ping" => Err(ErrorData::invalid_params(
                format!("Invalid params for {}: they do not match the MCP schema", request.method),
                None,
            )),
            _ => {
                Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {}", request.method), None))
            }
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.catalog.load().tool(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let info = RequestInfo::from_context(context);
        Ok(self.call(&request.name, request.arguments, info).await.into())
    }
}

/// What is wrong with the params of a `tools/call` that did not decode.
fn call_params_problem(params: Option<&Value>) -> String {
    use mcp_fusion_wire::value_kind as kind;
    let Some(Value::Object(params)) = params else {
        return "Invalid params for tools/call: expected an object with \"name\" and \"arguments\"".to_owned();
    };
    match (params.get("name"), params.get("arguments")) {
        (Some(Value::String(_)), Some(arguments)) if !arguments.is_object() && !arguments.is_null() => format!(
            "Invalid params for tools/call: \"arguments\" must be a JSON object of the tool's fields, but it is {}",
            kind(arguments)
        ),
        (Some(Value::String(_)), _) => "Invalid params for tools/call: they do not match the MCP schema".to_owned(),
        (Some(name), _) => {
            format!("Invalid params for tools/call: \"name\" must be a string, but it is {}", kind(name))
        }
        (None, _) => "Invalid params for tools/call: \"name\" is missing".to_owned(),
    }
}
