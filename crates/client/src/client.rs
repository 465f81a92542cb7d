//! The client: connect, learn the server's tools, call actions by their qualified names.

use std::time::Duration;

use mcp_fusion_contract::Exposition;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{FusionClientError, ToolFailure};
use crate::outcome::{CallOutcome, Reply};
use crate::retry::RetryPolicy;
use crate::routing::Routes;

/// A connection to an MCP server that calls actions by qualified name and reads every
/// envelope back as a typed error.
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_fusion_client::FusionClientError> {
/// use mcp_fusion_client::FusionClient;
///
/// let client = FusionClient::connect_http("http://127.0.0.1:8080/mcp", None).await?;
/// match client.call("billing.get_invoice", serde_json::json!({"id": "inv_2026_9999"})).await {
///     Ok(reply) => println!("{:?}", reply.value),
///     Err(error) => match error.tool() {
///         Some(failure) => println!("{}: try {:?}", failure.code(), failure.available_actions()),
///         None => return Err(error),
///     },
/// }
/// # Ok(()) }
/// ```
pub struct FusionClient {
    service: RunningService<RoleClient, ()>,
    routes: Routes,
    retry: Option<RetryPolicy>,
}

impl std::fmt::Debug for FusionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FusionClient").field("tools", &self.routes.tool_names()).field("retry", &self.retry).finish()
    }
}

impl FusionClient {
    /// Spawns a stdio server (`command` with its arguments and environment) and connects.
    pub async fn spawn(command: tokio::process::Command) -> Result<FusionClient, FusionClientError> {
        let transport = TokioChildProcess::new(command)
            .map_err(|e| FusionClientError::Transport(format!("cannot start the server: {e}")))?;
        FusionClient::from_service(().serve(transport).await.map_err(|e| FusionClientError::Transport(e.to_string()))?)
            .await
    }

    /// Connects to a Streamable HTTP endpoint, with a bearer token if given.
    pub async fn connect_http(url: &str, token: Option<&str>) -> Result<FusionClient, FusionClientError> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(token) = token {
            config = config.auth_header(token.to_owned());
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        FusionClient::from_service(().serve(transport).await.map_err(|e| FusionClientError::Transport(e.to_string()))?)
            .await
    }

    /// Wraps a connected rmcp client (any transport) and reads its `tools/list`.
    pub async fn from_service(service: RunningService<RoleClient, ()>) -> Result<FusionClient, FusionClientError> {
        let tools = service.list_all_tools().await.map_err(service_error)?;
        Ok(FusionClient { service, routes: Routes::new(tools), retry: None })
    }

    /// Retries `RATE_LIMITED`, `SERVER_BUSY` and `HANDOFF_CONNECTING` failures per `policy`.
    pub fn with_retry(mut self, policy: RetryPolicy) -> FusionClient {
        self.retry = Some(policy);
        self
    }

    /// Reads `tools/list` again (after a `tools/list_changed`, say).
    pub async fn refresh(&mut self) -> Result<(), FusionClientError> {
        self.routes = Routes::new(self.service.list_all_tools().await.map_err(service_error)?);
        Ok(())
    }

    /// The tools the server listed.
    pub fn tools(&self) -> &[rmcp::model::Tool] {
        self.routes.tools()
    }

    /// How the server exposes its actions: grouped, with the discriminator its tools publish
    /// (or, for tools that publish none, the one their schema shows); flat, with the separator
    /// between group and action in the name of a tool that publishes its action; `None` when
    /// the server's tools say neither (plain tools, or flat tools that publish nothing).
    pub fn exposition(&self) -> Option<Exposition> {
        self.routes.exposition()
    }

    /// Calls `action` (`billing.get_invoice`, or a plain tool name) and returns its value and
    /// warnings, or the failure as a typed error.
    pub async fn call(&self, action: &str, arguments: Value) -> Result<Reply<Option<Value>>, FusionClientError> {
        self.call_raw(action, arguments).await?.into_result().map_err(FusionClientError::Tool)
    }

    /// Calls `action` with a typed input and decodes the value (`structuredContent`, or the
    /// JSON text) as `Out`.
    pub async fn call_typed<In, Out>(&self, action: &str, input: &In) -> Result<Reply<Out>, FusionClientError>
    where
        In: Serialize + ?Sized,
        Out: DeserializeOwned,
    {
        let arguments = serde_json::to_value(input).map_err(|e| FusionClientError::Output {
            action: action.to_owned(),
            expected: "JSON object of arguments",
            reason: e.to_string(),
            raw: Box::default(),
        })?;
        let reply = self.call(action, arguments).await?;
        let Reply { value, warnings, result } = reply;
        let Some(value) = value else {
            // A standalone warning: there is no value to decode, the warning says why.
            return match warnings.into_iter().next() {
                Some(warning) => Err(FusionClientError::Tool(Box::new(ToolFailure::new(warning, result)))),
                None => Err(output_error::<Out>(action, "the result has no value".into(), result)),
            };
        };
        match serde_json::from_value::<Out>(value) {
            Ok(value) => Ok(Reply { value, warnings, result }),
            Err(e) => Err(output_error::<Out>(action, e.to_string(), result)),
        }
    }

    /// Calls `action` and returns the outcome whatever it is: a failed call is an outcome
    /// with its parsed envelope, not an `Err` (which is kept for protocol and transport
    /// failures). Retries per the policy, if one is set.
    pub async fn call_raw(&self, action: &str, arguments: Value) -> Result<CallOutcome, FusionClientError> {
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            found => return Err(FusionClientError::Arguments { action: action.to_owned(), found }),
        };
        let route = self.routes.resolve(action).ok_or_else(|| FusionClientError::NoSuchAction {
            action: action.to_owned(),
            tools: self.routes.tool_names(),
        })?;
        let arguments = route.arguments(arguments);
        let mut attempts = 0;
        let mut waited = Duration::ZERO;
        loop {
            attempts += 1;
            let request = CallToolRequestParams::new(route.tool.clone()).with_arguments(arguments.clone());
            let result: CallToolResult = self.service.call_tool(request).await.map_err(service_error)?;
            let outcome = CallOutcome::from_result(result);
            let wait = match (&outcome.error, &self.retry) {
                (Some(error), Some(policy)) => policy.wait_before_retry(error, attempts, waited),
                _ => None,
            };
            let Some(wait) = wait else { return Ok(outcome) };
            tracing::debug!(action, attempts, ?wait, "retrying after the server's retry_after");
            tokio::time::sleep(wait).await;
            waited += wait;
        }
    }

    /// Closes the connection (and ends a spawned server).
    pub async fn close(self) -> Result<(), FusionClientError> {
        self.service.cancel().await.map(|_| ()).map_err(|e| FusionClientError::Transport(e.to_string()))
    }
}

fn output_error<Out>(action: &str, reason: String, result: CallToolResult) -> FusionClientError {
    FusionClientError::Output {
        action: action.to_owned(),
        expected: std::any::type_name::<Out>(),
        reason,
        raw: Box::new(result),
    }
}

fn service_error(error: ServiceError) -> FusionClientError {
    match error {
        ServiceError::McpError(data) => {
            FusionClientError::Protocol { code: data.code.0, message: data.message.to_string(), data: data.data }
        }
        other => FusionClientError::Transport(other.to_string()),
    }
}
