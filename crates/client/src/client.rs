//! The client: connect, learn the server's tools, call actions by their qualified names.

use std::process::Stdio;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use mcp_fusion_contract::{Exposition, MOUNTS_CAPABILITY};
use mcp_fusion_wire::ToolError;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::FusionClientError;
use crate::outcome::{CallOutcome, Reply};
use crate::reason;
use crate::retry::RetryPolicy;
use crate::routing::{Route, Routes};

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
    /// Read again when a name does not resolve: the server's tools change at run time.
    routes: RwLock<Arc<Routes>>,
    /// The namespaces the server mounts from upstreams (a mount still connecting lists no
    /// tools, yet a call to it is answered).
    mounts: Vec<String>,
    retry: Option<RetryPolicy>,
}

impl std::fmt::Debug for FusionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FusionClient").field("tools", &self.routes().tool_names()).field("retry", &self.retry).finish()
    }
}

impl FusionClient {
    /// Spawns a stdio server (`command` with its arguments and environment) and connects; the
    /// server's stderr (its log) goes where this process's goes.
    pub async fn spawn(command: tokio::process::Command) -> Result<FusionClient, FusionClientError> {
        FusionClient::spawn_with_stderr(command, Stdio::inherit()).await
    }

    /// Spawns a stdio server as [`FusionClient::spawn`] does, its stderr sent to `stderr`:
    /// `Stdio::null()` to silence its log, `Stdio::inherit()` to show it, or a file. (A pipe
    /// would be closed at once, no one reading it.)
    pub async fn spawn_with_stderr(
        command: tokio::process::Command,
        stderr: Stdio,
    ) -> Result<FusionClient, FusionClientError> {
        let program = command.as_std().get_program().to_string_lossy().into_owned();
        let (transport, _stderr) = TokioChildProcess::builder(command)
            .stderr(stderr)
            .spawn()
            .map_err(|e| FusionClientError::Transport(format!("cannot start the server {program:?}: {e}")))?;
        let service =
            ().serve(transport).await.map_err(|e| FusionClientError::Transport(reason::stdio_initialize(&e)))?;
        FusionClient::from_service(service).await
    }

    /// Connects to a Streamable HTTP endpoint, with a bearer token if given.
    pub async fn connect_http(url: &str, token: Option<&str>) -> Result<FusionClient, FusionClientError> {
        reason::check_url(url).map_err(FusionClientError::Transport)?;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(token) = token {
            config = config.auth_header(token.to_owned());
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        let service = match ().serve(transport).await {
            Ok(service) => service,
            Err(e) => {
                return Err(FusionClientError::Transport(reason::http_initialize(url, token.is_some(), &e).await));
            }
        };
        FusionClient::from_service(service).await
    }

    /// Wraps a connected rmcp client (any transport) and reads its `tools/list`.
    pub async fn from_service(service: RunningService<RoleClient, ()>) -> Result<FusionClient, FusionClientError> {
        let tools = service.list_all_tools().await.map_err(service_error)?;
        let mounts = service
            .peer_info()
            .and_then(|info| info.capabilities.experimental.as_ref()?.get(MOUNTS_CAPABILITY).cloned())
            .and_then(|mounts| mounts.get("namespaces")?.as_array().cloned())
            .into_iter()
            .flatten()
            .filter_map(|name| name.as_str().map(str::to_owned))
            .collect();
        Ok(FusionClient { service, routes: RwLock::new(Arc::new(Routes::new(tools))), mounts, retry: None })
    }

    /// Retries per `policy` the calls answered with `RATE_LIMITED`, `SERVER_BUSY` or
    /// `HANDOFF_CONNECTING`, whether as a failure or as a standalone warning.
    pub fn with_retry(mut self, policy: RetryPolicy) -> FusionClient {
        self.retry = Some(policy);
        self
    }

    /// Reads `tools/list` again (after a `tools/list_changed`, say). A call to a name that
    /// does not resolve does this by itself.
    pub async fn refresh(&self) -> Result<(), FusionClientError> {
        let routes = Routes::new(self.service.list_all_tools().await.map_err(service_error)?);
        *self.routes.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(routes);
        Ok(())
    }

    /// The tools the server listed when last read.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.routes().tools().to_vec()
    }

    /// The prompts the server lists (`prompts/list`, every page); none when it declares no
    /// prompts capability.
    pub async fn prompts(&self) -> Result<Vec<rmcp::model::Prompt>, FusionClientError> {
        if !self.declares(|capabilities| capabilities.prompts.is_some()) {
            return Ok(Vec::new());
        }
        self.service.list_all_prompts().await.map_err(service_error)
    }

    /// The resource templates the server lists (`resources/templates/list`, every page); none
    /// when it declares no resources capability.
    pub async fn resource_templates(&self) -> Result<Vec<rmcp::model::ResourceTemplate>, FusionClientError> {
        if !self.declares(|capabilities| capabilities.resources.is_some()) {
            return Ok(Vec::new());
        }
        self.service.list_all_resource_templates().await.map_err(service_error)
    }

    /// Whether the capabilities the server declared at `initialize` pass `test`.
    fn declares(&self, test: impl FnOnce(&rmcp::model::ServerCapabilities) -> bool) -> bool {
        self.service.peer_info().is_some_and(|info| test(&info.capabilities))
    }

    fn routes(&self) -> Arc<Routes> {
        Arc::clone(&self.routes.read().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// Where `action` goes: as the tools last read say; else as they say when read again;
    /// else, for a name under a mounted namespace, to the server as it is, for it to say
    /// where that mount stands. `None` when nothing serves it.
    async fn route(&self, action: &str) -> Result<Option<(Route, bool)>, FusionClientError> {
        if let Some(route) = self.routes().resolve(action) {
            return Ok(Some((route, false)));
        }
        self.refresh().await?;
        if let Some(route) = self.routes().resolve(action) {
            return Ok(Some((route, false)));
        }
        let mounted = action.split_once('.').is_some_and(|(namespace, _)| self.mounts.iter().any(|m| m == namespace));
        Ok(mounted.then(|| (Route { tool: action.to_owned(), discriminator: None }, true)))
    }

    /// How the server exposes its actions: grouped, with the discriminator its tools publish
    /// (or, for tools that publish none, the one their schema shows); flat, with the separator
    /// between group and action in the name of a tool that publishes its action; `None` when
    /// the server's tools say neither (plain tools, or flat tools that publish nothing).
    pub fn exposition(&self) -> Option<Exposition> {
        self.routes().exposition()
    }

    /// Calls `action` (`billing.get_invoice`, or a plain tool name) and returns its value and
    /// warnings, or the failure as a typed error.
    pub async fn call(&self, action: &str, arguments: Value) -> Result<Reply<Option<Value>>, FusionClientError> {
        self.call_raw(action, arguments).await?.into_result().map_err(FusionClientError::Tool)
    }

    /// Calls `action` with a typed input and decodes the value (`structuredContent`, or the
    /// JSON text) as `Out`.
    ///
    /// A result with no value (a standalone warning, such as `HANDOFF_CONNECTING`) decodes as
    /// `Out` from `null` when `Out` allows it (`()`, `Option<T>`), with its warnings in the
    /// reply; for any other `Out` it is [`FusionClientError::Warned`], not a failure.
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
        let Reply { value, warnings, result } = self.call(action, arguments).await?;
        let Some(value) = value else {
            // No value is a value for `()` and `Option<T>`: the warnings ride on it as on any
            // reply. Any other type cannot be made, and the warnings say why.
            return match serde_json::from_value::<Out>(Value::Null) {
                Ok(value) => Ok(Reply { value, warnings, result }),
                Err(_) if !warnings.is_empty() => {
                    Err(FusionClientError::Warned { action: action.to_owned(), warnings, result: Box::new(result) })
                }
                Err(_) => Err(output_error::<Out>(action, "the result has no value".into(), result)),
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
        let Some((mut route, mut unlisted)) = self.route(action).await? else {
            return Err(FusionClientError::NoSuchAction {
                action: action.to_owned(),
                tools: self.routes().tool_names(),
            });
        };
        let mut attempts = 0;
        let mut waited = Duration::ZERO;
        loop {
            attempts += 1;
            if unlisted && attempts > 1 {
                // The mount may have connected while we waited: its tools say the route now.
                if let Some((listed, still_unlisted)) = self.route(action).await? {
                    (route, unlisted) = (listed, still_unlisted);
                }
            }
            let request =
                CallToolRequestParams::new(route.tool.clone()).with_arguments(route.arguments(arguments.clone()));
            let result = answered(self.service.call_tool(request).await)?;
            let outcome = CallOutcome::from_result(result);
            let wait = self.retry.as_ref().and_then(|policy| policy.wait_before_retry(&outcome, attempts, waited));
            let Some(wait) = wait else { return Ok(outcome) };
            tracing::debug!(action, attempts, ?wait, "retrying after the server's retry_after");
            tokio::time::sleep(wait).await;
            waited += wait;
        }
    }

    /// Closes the connection (and ends a spawned server).
    pub async fn close(self) -> Result<(), FusionClientError> {
        self.service
            .cancel()
            .await
            .map(|_| ())
            .map_err(|e| FusionClientError::Transport(format!("closing the connection failed: {e}")))
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

/// The result of a call, or why there is none. An unknown tool's `-32602` (MCP 2026-07-28) is
/// read as the envelope of a failed result, so that it is the same typed error on every version.
fn answered(answer: Result<CallToolResult, ServiceError>) -> Result<CallToolResult, FusionClientError> {
    match answer {
        Ok(result) => Ok(result),
        Err(ServiceError::McpError(data))
            if let Some(error) = ToolError::from_protocol_error(data.code.0, &data.message, data.data.as_ref()) =>
        {
            Ok(CallToolResult::error(vec![ContentBlock::text(error.render())]))
        }
        Err(error) => Err(service_error(error)),
    }
}

fn service_error(error: ServiceError) -> FusionClientError {
    match error {
        ServiceError::McpError(data) => {
            FusionClientError::Protocol { code: data.code.0, message: data.message.to_string(), data: data.data }
        }
        other => FusionClientError::Transport(reason::service(&other)),
    }
}

#[cfg(test)]
mod tests {
    use mcp_fusion_wire::{ErrorCode, ToolError};
    use rmcp::ErrorData;
    use rmcp::model::{CallToolResult, ContentBlock};
    use serde_json::json;

    use super::*;

    fn unknown() -> ToolError {
        ToolError::new(ErrorCode::UnknownAction, "Unknown tool 'pyng'.")
            .suggest("Did you mean \"ping\"? Call one of the available tools.")
            .actions(["ping"])
    }

    fn failure(answer: Result<CallToolResult, ServiceError>) -> crate::ToolFailure {
        let outcome = CallOutcome::from_result(answered(answer).unwrap());
        match outcome.into_result() {
            Err(failure) => *failure,
            Ok(_) => panic!("a failed call read as a success"),
        }
    }

    #[test]
    fn an_unknown_tool_is_the_same_typed_error_as_a_result_or_as_invalid_params() {
        let enveloped = failure(Ok(CallToolResult::error(vec![ContentBlock::text(unknown().render())])));
        let rpc = unknown().to_invalid_params(8_000);
        let error = ErrorData::invalid_params(rpc.message, Some(rpc.data));
        let refused = failure(Err(ServiceError::McpError(error)));
        assert_eq!(refused.envelope(), enveloped.envelope());
        assert_eq!(refused.code(), &ErrorCode::UnknownAction);
        assert_eq!(refused.available_actions(), ["ping"]);
    }

    #[test]
    fn another_servers_unknown_tool_with_only_a_message_is_unknown_action() {
        let error = ErrorData::invalid_params("Unknown tool: pyng", None);
        let refused = failure(Err(ServiceError::McpError(error)));
        assert_eq!(refused.code(), &ErrorCode::UnknownAction);
        assert_eq!(refused.message(), "Unknown tool: pyng");
    }

    #[test]
    fn any_other_invalid_params_stays_a_protocol_error() {
        let error = ErrorData::invalid_params("Invalid cursor", Some(json!({"cursor": "x"})));
        let answer = answered(Err(ServiceError::McpError(error)));
        assert!(matches!(answer, Err(FusionClientError::Protocol { code: -32602, .. })), "{answer:?}");
    }
}
