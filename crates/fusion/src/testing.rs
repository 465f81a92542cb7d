//! An in-process client for a server's tests (cargo feature `testing`).
//!
//! [`TestClient::connect`] serves a [`FusionServer`] on one end of an in-memory pipe and
//! connects rmcp's own client to the other: every call goes through the real protocol —
//! JSON-RPC, the handshake, the tool list, the guards — without a process or a port. A call by
//! qualified action name comes back as the value it returned, or as the envelope the model
//! would read, parsed:
//!
//! ```
//! use mcp_fusion::prelude::*;
//! use mcp_fusion::testing::TestClient;
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct GetInvoice {
//!     /// The invoice id, like `inv_1`.
//!     #[schemars(regex(pattern = r"^inv_[0-9]+$"))]
//!     id: String,
//! }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Invoice { id: String, amount_cents: u64 }
//!
//! /// Read one invoice by id.
//! #[action(read_only)]
//! async fn get_invoice(_ctx: Ctx<()>, input: GetInvoice) -> Result<Json<Invoice>> {
//!     match input.id.as_str() {
//!         "inv_1" => Ok(Json(Invoice { id: input.id, amount_cents: 1200 })),
//!         _ => Err(ToolError::not_found(format!("No invoice {}.", input.id)).into()),
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = FusionServer::builder("billing", "1.0.0")
//!     .group(Group::new("billing", "Invoices.").action(get_invoice()))
//!     .build(())
//!     .unwrap();
//! let test = TestClient::connect(server).await;
//!
//! let invoice = test.call("billing.get_invoice", json!({"id": "inv_1"})).await.unwrap();
//! assert_eq!(invoice.structured(), Some(&json!({"id": "inv_1", "amount_cents": 1200})));
//!
//! let missing = test.call("billing.get_invoice", json!({"id": "inv_2"})).await.unwrap_err();
//! assert_eq!(missing.error.code, ErrorCode::NotFound);
//!
//! let healed = test.call("billing.get_invoice", json!({"id": "INV-2"})).await.unwrap_err();
//! assert_eq!(healed.error.code, ErrorCode::ValidationError);
//! assert_eq!(healed.fields[0].name, "id");
//! # }
//! ```
//!
//! The pipe needs no timer, so tests on tokio's paused clock (`#[tokio::test(start_paused =
//! true)]`) work as they do on the real one: a timeout guard of ten seconds fires at once
//! when the handler waits longer, and no test waits in real time.
//!
//! Everything else a client does is rmcp's: [`TestClient::peer`] is its `Peer`, for
//! resources, prompts, completions, subscriptions and raw calls.

use std::sync::Mutex;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::{Peer, RoleClient, ServiceExt as _};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use mcp_fusion_contract::{PublishedRoute, published_route};
use mcp_fusion_wire::{Envelope, ParsedResult};

use crate::lock::locked;
use crate::server::FusionServer;

/// Bytes the in-memory pipe holds in each direction before a writer waits.
const PIPE_BYTES: usize = 1 << 20;

/// A client connected to a server in this process. Dropping it closes the pipe, which ends the
/// server's side too.
pub struct TestClient {
    service: RunningService<RoleClient, ()>,
    /// The tools as last listed: how a qualified action name finds its tool.
    tools: Mutex<Vec<Tool>>,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient").field("tools", &locked(&self.tools).len()).finish_non_exhaustive()
    }
}

/// What a successful call returned: the result as the client received it, and the warnings
/// that rode on it (a deprecation, a truncation).
#[derive(Debug, Clone)]
pub struct Called {
    /// The `tools/call` result, whole.
    pub result: CallToolResult,
    /// Each warning envelope among the result's text blocks, parsed.
    pub warnings: Vec<Envelope>,
}

impl Called {
    /// The `structuredContent`: what a handler returning `Json(..)` of an object returned.
    pub fn structured(&self) -> Option<&Value> {
        self.result.structured_content.as_ref()
    }

    /// The text blocks, joined by newlines.
    pub fn text(&self) -> String {
        text_blocks(&self.result).join("\n")
    }

    /// The returned value as `T`: from `structuredContent`, else from the text read as JSON.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match self.structured() {
            Some(value) => T::deserialize(value),
            None => serde_json::from_str(&self.text()),
        }
    }
}

impl TestClient {
    /// Serves `server` on one end of an in-memory pipe, connects rmcp's client to the other,
    /// and lists the tools.
    ///
    /// # Panics
    ///
    /// When the handshake or the tool list fails: the server did not speak MCP, which is the
    /// test's failure to report.
    pub async fn connect(server: FusionServer) -> TestClient {
        let (server_end, client_end) = tokio::io::duplex(PIPE_BYTES);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_end).await {
                let _ = running.waiting().await;
            }
        });
        let service = ().serve(client_end).await.expect("the in-process client completes the MCP handshake");
        let client = TestClient { service, tools: Mutex::new(Vec::new()) };
        client.refresh().await;
        client
    }

    /// Lists the tools again, after the server added or removed some.
    ///
    /// # Panics
    ///
    /// When the server does not answer `tools/list`.
    pub async fn refresh(&self) {
        let tools = self.service.peer().list_all_tools().await.expect("the server answers tools/list");
        *locked(&self.tools) = tools;
    }

    /// The tools as last listed.
    pub fn tools(&self) -> Vec<Tool> {
        locked(&self.tools).clone()
    }

    /// rmcp's client, for everything beyond tool calls.
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// Calls an action by its qualified name (`billing.get_invoice`), whether the server
    /// groups it under one tool or exposes it flat, or a tool by its own name. `Ok` holds what
    /// the handler returned; `Err` the envelope the model would read, parsed (a validation
    /// error's fields, a tool error's code, recovery and available actions). A name no tool
    /// serves is sent as it is, and the server's answer to it comes back.
    ///
    /// # Panics
    ///
    /// When `arguments` is not a JSON object, or the server gives no answer (the pipe broke).
    pub async fn call(&self, name: &str, arguments: Value) -> Result<Called, Box<Envelope>> {
        let Value::Object(arguments) = arguments else {
            panic!("the arguments of {name} must be a JSON object, not {arguments}");
        };
        let (tool, arguments) = self.route(name, arguments);
        let result = self.call_tool(&tool, arguments).await;
        let texts = text_blocks(&result);
        let parsed = ParsedResult::from_blocks(
            &texts.iter().map(String::as_str).collect::<Vec<_>>(),
            result.is_error == Some(true),
        );
        if parsed.is_error { Err(Box::new(parsed.envelope)) } else { Ok(Called { warnings: parsed.warnings, result }) }
    }

    /// Calls the tool named `tool` with `arguments` as they are, and returns rmcp's result.
    ///
    /// # Panics
    ///
    /// When the server gives no answer (the pipe broke).
    pub async fn call_tool(&self, tool: &str, arguments: Map<String, Value>) -> CallToolResult {
        self.peer()
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
            .await
            .unwrap_or_else(|error| panic!("tools/call {tool} got no result: {error}"))
    }

    /// The tool that serves `name`, and the arguments it takes for it: a tool named `name`
    /// first, then the tool whose published route serves the qualified action.
    fn route(&self, name: &str, mut arguments: Map<String, Value>) -> (String, Map<String, Value>) {
        let tools = locked(&self.tools);
        if tools.iter().any(|tool| tool.name == name) {
            return (name.to_owned(), arguments);
        }
        let Some((group, action)) = name.split_once('.') else {
            return (name.to_owned(), arguments);
        };
        for tool in tools.iter() {
            match published_route(tool) {
                Some(PublishedRoute::Flat { action: served }) if served == name => {
                    return (tool.name.to_string(), arguments);
                }
                Some(PublishedRoute::Grouped { discriminator, actions })
                    if tool.name == group && actions.iter().any(|served| served == action) =>
                {
                    arguments.insert(discriminator, Value::String(action.to_owned()));
                    return (tool.name.to_string(), arguments);
                }
                _ => {}
            }
        }
        (name.to_owned(), arguments)
    }
}

/// The text of each text block of a result, in order.
fn text_blocks(result: &CallToolResult) -> Vec<String> {
    result.content.iter().filter_map(|block| block.as_text()).map(|text| text.text.clone()).collect()
}
