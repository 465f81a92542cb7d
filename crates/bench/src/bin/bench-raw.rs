//! `bench-raw`: the benchmark's tool on rmcp alone, as a careful author writes it without a
//! framework: the tool list built once, the arguments checked by hand, and on stdio rmcp's
//! non-blocking `stdio_pipes()`, its fastest stdio transport.

use std::sync::Arc;

use axum::Router;
use axum::serve::ListenerExt as _;
use clap::Parser;
use fusion_bench::serve::ServeArgs;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{Value, json};

#[derive(Clone)]
struct Raw {
    tools: Arc<[Tool]>,
}

impl Raw {
    fn new() -> Raw {
        let schema = json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["get_invoice"], "description": "What to do."},
                "id": {"type": "string", "minLength": 1, "description": "The invoice's id."}
            },
            "required": ["action", "id"],
            "additionalProperties": false
        });
        let Value::Object(schema) = schema else { unreachable!("an object literal") };
        let tool = Tool::new("billing", "Invoices: get_invoice reads one by id.", Arc::new(schema));
        Raw { tools: Arc::new([tool]) }
    }
}

/// The id of a valid `get_invoice`, or what is wrong with the arguments.
fn check(arguments: Option<&JsonObject>) -> Result<&str, String> {
    let arguments = arguments.ok_or("arguments are required")?;
    match arguments.get("action") {
        Some(Value::String(action)) if action == "get_invoice" => {}
        Some(other) => return Err(format!("unknown action {other}: expected \"get_invoice\"")),
        None => return Err("missing field `action`".into()),
    }
    if let Some(unknown) = arguments.keys().find(|k| *k != "action" && *k != "id") {
        return Err(format!("unknown field `{unknown}`"));
    }
    match arguments.get("id") {
        Some(Value::String(id)) if !id.is_empty() => Ok(id),
        Some(_) => Err("`id` must be a non-empty string".into()),
        None => Err("missing field `id`".into()),
    }
}

impl ServerHandler for Raw {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("bench-raw", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "billing" {
            return Err(ErrorData::invalid_params(format!("unknown tool {}", request.name), None));
        }
        fusion_bench::serve::spend_extra_cpu();
        let result = match check(request.arguments.as_ref()) {
            Ok(id) => CallToolResult::structured(fusion_bench::invoice(id)),
            Err(problem) => CallToolResult::error(vec![ContentBlock::text(problem)]),
        };
        Ok(result.into())
    }
}

fn main() -> anyhow::Result<()> {
    let args = ServeArgs::parse();
    args.install_slowdown();
    args.runtime()?.block_on(serve(args))
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let raw = Raw::new();
    let Some(addr) = args.http else {
        if args.blocking_stdio {
            raw.serve(rmcp::transport::stdio()).await?.waiting().await?;
        } else {
            raw.serve(rmcp::transport::stdio_pipes()).await?.waiting().await?;
        }
        return Ok(());
    };
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(args.stateful)
        .with_json_response(!args.stateful);
    let service = StreamableHttpService::new(move || Ok(raw.clone()), Arc::new(LocalSessionManager::default()), config);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let listener = listener.tap_io(|tcp| {
        // Nagle's algorithm and delayed ACKs would add ~40 ms to every call.
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, Router::new().nest_service("/mcp", service)).await?;
    Ok(())
}
