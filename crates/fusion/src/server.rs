//! The server: groups and actions frozen into routing tables, compiled validators and composed
//! middleware, answering `tools/list` and `tools/call` through rmcp.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;
use mcp_fusion_wire::{FieldProblem, ValidationError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult, ErrorCode, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use crate::context::{CallInfo, RequestInfo};
use crate::error::{BuildError, Failure};
use crate::exposition::{ActionSpec, Catalog, Exposition, GroupSpec};
use crate::group::Group;
use crate::handler::Decoder;
use crate::in_flight::InFlight;
use crate::middleware::{Call, Endpoint, Middleware, Next};
use crate::response::{envelope_result, error_result, success_result};
use crate::schema::{input_generator, into_object, is_object_schema, output_generator, portable_input, property_names};
use crate::validation::Checker;

/// Builds a [`FusionServer`]: name it, add groups and middleware, choose the exposition, then
/// [`build`](ServerBuilder::build) it with the application state.
///
/// ```
/// use mcp_fusion::{Action, Ctx, FusionServer, Group};
/// use mcp_fusion_wire::ToolError;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo { text: String }
///
/// async fn echo(_ctx: Ctx<()>, input: Echo) -> Result<String, ToolError> {
///     Ok(input.text)
/// }
///
/// let server = FusionServer::builder("echo-server", "1.0.0")
///     .group(Group::new("echo", "Repeats what it is given.").action(Action::new("say", "Echo the text.").handler(echo)))
///     .build(())
///     .unwrap();
/// assert_eq!(server.tools()[0].name, "echo");
/// ```
pub struct ServerBuilder<S> {
    info: Implementation,
    instructions: Option<String>,
    groups: Vec<Group<S>>,
    middleware: Vec<Arc<dyn Middleware>>,
    exposition: Exposition,
    mask_internal_errors: bool,
}

impl<S: Send + Sync + 'static> ServerBuilder<S> {
    /// Adds a group of actions.
    pub fn group(mut self, group: Group<S>) -> ServerBuilder<S> {
        self.groups.push(group);
        self
    }

    /// Adds a middleware around every action (outermost).
    pub fn middleware(mut self, middleware: impl Middleware) -> ServerBuilder<S> {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Chooses how actions appear as tools (default: grouped, discriminator `action`).
    pub fn exposition(mut self, exposition: Exposition) -> ServerBuilder<S> {
        self.exposition = exposition;
        self
    }

    /// Instructions sent to the client at `initialize`.
    pub fn instructions(mut self, instructions: impl Into<String>) -> ServerBuilder<S> {
        self.instructions = Some(instructions.into());
        self
    }

    /// Replaces the message of wrapped internal errors by an incident id; the full error
    /// chain goes to the log under that id only.
    pub fn mask_internal_errors(mut self, mask: bool) -> ServerBuilder<S> {
        self.mask_internal_errors = mask;
        self
    }

    /// Freezes the server: schemas generated and compiled, middleware composed, tools and
    /// routes computed, once.
    pub fn build(self, state: S) -> Result<FusionServer, BuildError> {
        let state = Arc::new(state);
        let discriminator = match &self.exposition {
            Exposition::Grouped { discriminator } => Some(discriminator.as_str()),
            Exposition::Flat { .. } => None,
        };
        let mut group_names = HashSet::new();
        let mut groups = Vec::with_capacity(self.groups.len());
        let mut specs = Vec::new();
        let mut actions = Vec::new();
        for (g, group) in self.groups.into_iter().enumerate() {
            check_name("group", &group.name)?;
            if !group_names.insert(group.name.clone()) {
                return Err(BuildError::Duplicate { what: "group", name: group.name });
            }
            if group.actions.is_empty() {
                return Err(BuildError::EmptyGroup { group: group.name });
            }
            let mut action_names = HashSet::new();
            let mut members = Vec::with_capacity(group.actions.len());
            for action in group.actions {
                check_name("action", &action.name)?;
                let qualified: Arc<str> = format!("{}.{}", group.name, action.name).into();
                if !action_names.insert(action.name.clone()) {
                    return Err(BuildError::Duplicate { what: "action", name: qualified.to_string() });
                }
                let handler =
                    action.handler.ok_or_else(|| BuildError::MissingHandler { action: qualified.to_string() })?;
                let input = into_object(handler.input_schema(&mut input_generator(action.strict)));
                if !is_object_schema(&input) {
                    return Err(BuildError::InputNotObject {
                        action: qualified.to_string(),
                        schema: Value::Object(input).to_string(),
                    });
                }
                if let Some(field) = discriminator.filter(|d| property_names(&input).iter().any(|p| p == d)) {
                    return Err(BuildError::FieldIsDiscriminator {
                        action: qualified.to_string(),
                        field: field.to_owned(),
                    });
                }
                let output = handler.output_schema(&mut output_generator()).map(into_object);
                let checker = Checker::new(&input, action.sensitive)
                    .map_err(|reason| BuildError::Schema { action: qualified.to_string(), reason })?;
                let chain: Arc<[Arc<dyn Middleware>]> =
                    self.middleware.iter().chain(&group.middleware).chain(&action.middleware).cloned().collect();
                members.push(actions.len());
                actions.push(CompiledAction {
                    qualified: Arc::clone(&qualified),
                    checker,
                    endpoint: handler.endpoint(Arc::clone(&state)),
                    decode: handler.decoder(),
                    chain,
                });
                specs.push(ActionSpec {
                    group: g,
                    name: action.name,
                    qualified,
                    description: action.description,
                    title: action.title,
                    annotations: action.annotations,
                    input: portable_input(&input),
                    output,
                });
            }
            groups.push(GroupSpec {
                name: group.name,
                description: group.description,
                title: group.title,
                actions: members,
            });
        }
        let catalog = Catalog::new(&self.exposition, &groups, &specs)?;
        Ok(FusionServer {
            inner: Arc::new(Inner {
                in_flight: InFlight::default(),
                info: self.info,
                instructions: self.instructions,
                catalog,
                actions,
                mask_internal_errors: self.mask_internal_errors,
            }),
        })
    }
}

/// MCP clients accept tool names of `A-Z a-z 0-9 _ -`; keeping group and action names to
/// that set keeps every exposition valid.
fn check_name(what: &'static str, name: &str) -> Result<(), BuildError> {
    let valid =
        (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid { Ok(()) } else { Err(BuildError::InvalidName { what, name: name.to_owned() }) }
}

struct CompiledAction {
    qualified: Arc<str>,
    checker: Checker,
    decode: Decoder,
    endpoint: Endpoint,
    chain: Arc<[Arc<dyn Middleware>]>,
}

struct Inner {
    in_flight: InFlight,
    info: Implementation,
    instructions: Option<String>,
    catalog: Catalog,
    actions: Vec<CompiledAction>,
    mask_internal_errors: bool,
}

/// A built MCP server: cheap to clone, shareable across sessions and transports.
#[derive(Clone)]
pub struct FusionServer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for FusionServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FusionServer")
            .field("name", &self.inner.info.name)
            .field("tools", &self.inner.catalog.tool_names)
            .finish()
    }
}

impl FusionServer {
    /// Starts a server named `name` at `version` (what `initialize` reports).
    pub fn builder<S: Send + Sync + 'static>(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder<S> {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            groups: Vec::new(),
            middleware: Vec::new(),
            exposition: Exposition::default(),
            mask_internal_errors: false,
        }
    }

    /// The tools `tools/list` returns.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.catalog.tools
    }

    /// Runs one `tools/call`: route, validate, then middleware and handler. Every failure is an
    /// envelope in the result; this never fails and never panics.
    pub async fn call(&self, tool: &str, arguments: Option<JsonObject>, request: RequestInfo) -> CallToolResult {
        let _counted = self.inner.in_flight.enter();
        let run = AssertUnwindSafe(self.call_inner(tool, arguments.unwrap_or_default(), request));
        match run.catch_unwind().await {
            Ok(result) => result,
            Err(panic) => {
                let error = Failure::from_panic(panic).into_tool_error(tool, self.inner.mask_internal_errors);
                error_result(&error, &[])
            }
        }
    }

    /// How many calls are running right now.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight.count()
    }

    /// Completes when no call is running (at once if none is).
    pub async fn idle(&self) {
        self.inner.in_flight.idle().await;
    }

    async fn call_inner(&self, tool: &str, arguments: JsonObject, request: RequestInfo) -> CallToolResult {
        let inner = &*self.inner;
        let (index, arguments) = match inner.catalog.route(tool, arguments) {
            Ok(routed) => routed,
            Err(error) => return error_result(&error, &[]),
        };
        let action = &inner.actions[index];
        let arguments = Value::Object(arguments);
        let problems = action.checker.check(&arguments);
        if !problems.is_empty() {
            return validation_result(&action.qualified, problems);
        }
        let input = match (action.decode)(&arguments) {
            Ok((input, issues)) if issues.is_empty() => input,
            Ok((_, issues)) => {
                return validation_result(&action.qualified, action.checker.rule_problems(issues, &arguments));
            }
            Err(error) => {
                return validation_result(&action.qualified, action.checker.decode_problem(&error, &arguments));
            }
        };
        let info = Arc::new(CallInfo::new(Arc::clone(&action.qualified), request));
        let call = Call { info: Arc::clone(&info), arguments, input: Some(input) };
        let next = Next {
            chain: Arc::clone(&action.chain),
            index: 0,
            endpoint: Arc::clone(&action.endpoint),
            mask_internal_errors: inner.mask_internal_errors,
        };
        let outcome = next.run(call).await;
        let warnings = info.take_warnings();
        match outcome {
            Ok(output) => success_result(output, &warnings),
            Err(error) => error_result(&error, &warnings),
        }
    }
}

fn validation_result(action: &str, problems: Vec<FieldProblem>) -> CallToolResult {
    let error = ValidationError { action: action.to_owned(), fields: problems, contract_awareness: None };
    envelope_result(error.render(), true, &[])
}

impl ServerHandler for FusionServer {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.inner.info.clone());
        if let Some(instructions) = &self.inner.instructions {
            config = config.with_instructions(instructions.clone());
        }
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.catalog.tools.clone()))
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
        self.inner.catalog.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let info = request_info(context);
        Ok(self.call(&request.name, request.arguments, info).await.into())
    }
}

/// What is wrong with the params of a `tools/call` that did not decode.
fn call_params_problem(params: Option<&Value>) -> String {
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
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

/// What rmcp's request context says about the caller.
fn request_info(context: RequestContext<RoleServer>) -> RequestInfo {
    let session_id = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(Arc::from);
    RequestInfo {
        session_id,
        client: context.client_info(),
        cancellation: context.ct.clone(),
        progress_token: context.meta.get_progress_token(),
        peer: Some(context.peer.clone()),
        extensions: context.extensions,
    }
}

/// Serves `server` over stdio until the client closes the connection. Only MCP messages go
/// to stdout; log to stderr.
pub async fn serve_stdio(server: FusionServer) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt as _;
    use rmcp::service::ServerInitializeError;
    let running = match server.serve(crate::transport::stdio()).await {
        Ok(running) => running,
        // The client went away before initializing: nothing to serve, nothing wrong.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(std::io::Error::other(error)),
    };
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
