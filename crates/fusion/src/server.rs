//! The server: groups and actions frozen into routing tables, compiled validators and composed
//! middleware, answering `tools/list` and `tools/call` through rmcp.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use mcp_fusion_wire::{ChangeSeverity, ContractAwareness, FieldProblem, ToolError, ValidationError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult, ErrorCode, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use crate::auth::Caller;
use crate::concurrency::{Concurrency, ConcurrencyGuard};
use crate::context::{CallInfo, RequestInfo};
use crate::error::{BuildError, Failure};
use crate::exposition::{ActionSpec, Catalog, Exposition, GroupSpec};
use crate::governance::{Lockfile, contracts_of, diff_contracts};
use crate::group::Group;
use crate::guards::{ActionGuards, ServerGuards, action_deprecation, cancelled, field_deprecation};
use crate::handler::Decoder;
use crate::in_flight::InFlight;
use crate::middleware::{Call, Endpoint, Middleware, Next};
use crate::rate_limit::{FailurePolicy, MemoryStore, RateLimit, RateLimitStore};
use crate::response::{Output, envelope_result, error_result, success_result};
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
    concurrency: Option<Concurrency>,
    rate_limits: Vec<RateLimit>,
    rate_limit_store: Arc<dyn RateLimitStore>,
    failure_policy: FailurePolicy,
    store_timeout: Duration,
    timeout: Option<Duration>,
    max_result_bytes: Option<usize>,
    require_identity: bool,
    lockfile: Option<Lockfile>,
    awareness_min: ChangeSeverity,
    awareness_cap: usize,
}

impl<S: Send + Sync + 'static> ServerBuilder<S> {
    /// Self-healing: compares the server's contracts with this known-good lockfile when it is
    /// built, logs the changes, and embeds the changes of an action (BREAKING and RISKY, at
    /// most five, by default) in the validation errors of that action, so a model calibrated
    /// on the old contract learns what changed in the same turn.
    pub fn contract_lockfile(mut self, lockfile: Lockfile) -> ServerBuilder<S> {
        self.lockfile = Some(lockfile);
        self
    }

    /// Which changes the validation errors tell (`min` and more severe), and how many at most.
    pub fn contract_awareness(mut self, min: ChangeSeverity, cap: usize) -> ServerBuilder<S> {
        self.awareness_min = min;
        self.awareness_cap = cap;
        self
    }
    /// Limits the calls running at once across the whole server (each tool's own limit
    /// applies first).
    pub fn concurrency(mut self, limits: Concurrency) -> ServerBuilder<S> {
        self.concurrency = Some(limits);
        self
    }

    /// Limits the calls of every action, counted together.
    pub fn rate_limit(mut self, limit: RateLimit) -> ServerBuilder<S> {
        self.rate_limits.push(limit);
        self
    }

    /// Where rate limits count (default: this process's memory). A Redis store shares the
    /// counts between replicas.
    pub fn rate_limit_store(mut self, store: impl RateLimitStore) -> ServerBuilder<S> {
        self.rate_limit_store = Arc::new(store);
        self
    }

    /// What to do when the store cannot answer (default: admit the call), and how long to
    /// wait for it (default: 250 ms) — a call never hangs on the store.
    pub fn rate_limit_failure(mut self, policy: FailurePolicy, timeout: Duration) -> ServerBuilder<S> {
        self.failure_policy = policy;
        self.store_timeout = timeout;
        self
    }

    /// Fails calls that run longer than `timeout` with `TIMEOUT`, unless the action sets its own.
    pub fn timeout(mut self, timeout: Duration) -> ServerBuilder<S> {
        self.timeout = Some(timeout);
        self
    }

    /// Cuts the text of results longer than `bytes` and adds a `RESULT_TRUNCATED` warning.
    pub fn max_result_bytes(mut self, bytes: usize) -> ServerBuilder<S> {
        self.max_result_bytes = Some(bytes);
        self
    }

    /// Refuses anonymous calls to every action with `AUTH_REQUIRED`.
    pub fn require_identity(mut self, require: bool) -> ServerBuilder<S> {
        self.require_identity = require;
        self
    }

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
        let server_guard = self.concurrency.map(|limits| Arc::new(ConcurrencyGuard::new("The server", limits)));
        let mut tool_guards = Vec::new();
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
            let tool_guard = group
                .concurrency
                .map(|limits| Arc::new(ConcurrencyGuard::new(format!("Tool \"{}\"", group.name), limits)));
            if let Some(guard) = &tool_guard {
                tool_guards.push((group.name.clone(), Arc::clone(guard)));
            }
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
                let deprecated_fields = deprecated_fields(&input, &action.deprecated_fields)
                    .into_iter()
                    .map(|(field, replacement)| {
                        let warning = field_deprecation(&qualified, &field, replacement.as_deref());
                        (field, warning)
                    })
                    .collect();
                let rate_limits = action
                    .rate_limits
                    .iter()
                    .enumerate()
                    .map(|(i, limit)| (format!("{qualified}#{i}"), limit.clone()))
                    .chain(
                        group.rate_limits.iter().enumerate().map(|(i, l)| (format!("{}#{i}", group.name), l.clone())),
                    )
                    .chain(self.rate_limits.iter().enumerate().map(|(i, l)| (format!("*#{i}"), l.clone())))
                    .collect();
                let guards = ActionGuards {
                    qualified: Arc::clone(&qualified),
                    require_identity: self.require_identity || action.require_identity,
                    scopes: action.scopes,
                    rate_limits,
                    concurrency: tool_guard.iter().chain(&server_guard).cloned().collect(),
                    timeout: action.timeout.or(self.timeout),
                    idempotent: action.annotations.idempotent == Some(true),
                    deprecation: action.deprecated.as_ref().map(|r| action_deprecation(&qualified, r.as_deref())),
                    deprecated_fields,
                };
                members.push(actions.len());
                actions.push(CompiledAction {
                    qualified: Arc::clone(&qualified),
                    guards,
                    awareness: None,
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
        if let Some(lockfile) = &self.lockfile {
            let diff = diff_contracts(&lockfile.contracts, &contracts_of(&catalog.tools));
            for tool in &diff.tools {
                for delta in &tool.deltas {
                    tracing::warn!(tool = %tool.tool, severity = %delta.severity, field = %delta.field, "contract changed: {}", delta.description);
                }
            }
            for (index, action) in actions.iter_mut().enumerate() {
                let spec = &specs[index];
                let group = &groups[spec.group].name;
                let (tool, name) = match catalog.tool_of_action(index) {
                    Some(flat) => (flat.to_owned(), None),
                    None => (group.clone(), Some(spec.name.as_str())),
                };
                let mut changes: Vec<_> =
                    diff.action_changes(&tool, name).into_iter().filter(|c| c.severity >= self.awareness_min).collect();
                changes.sort_by_key(|change| std::cmp::Reverse(change.severity));
                changes.truncate(self.awareness_cap);
                if !changes.is_empty() {
                    action.awareness = Some(ContractAwareness { tool, action: spec.qualified.to_string(), changes });
                }
            }
        }
        Ok(FusionServer {
            inner: Arc::new(Inner {
                in_flight: InFlight::default(),
                info: self.info,
                instructions: self.instructions,
                catalog,
                actions,
                mask_internal_errors: self.mask_internal_errors,
                tool_guards,
                server_guard,
                guards: ServerGuards {
                    store: self.rate_limit_store,
                    failure_policy: self.failure_policy,
                    store_timeout: self.store_timeout,
                    max_result_bytes: self.max_result_bytes,
                },
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

/// The fields to warn about: those the schema marks `deprecated` and those declared with a
/// replacement (which wins).
fn deprecated_fields(
    input: &serde_json::Map<String, Value>,
    declared: &[(String, Option<String>)],
) -> Vec<(String, Option<String>)> {
    let mut fields: Vec<(String, Option<String>)> = input
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, schema)| schema.get("deprecated") == Some(&Value::Bool(true)))
        .map(|(name, _)| (name.clone(), None))
        .collect();
    for (field, replacement) in declared {
        fields.retain(|(name, _)| name != field);
        fields.push((field.clone(), replacement.clone()));
    }
    fields
}

struct CompiledAction {
    qualified: Arc<str>,
    guards: ActionGuards,
    awareness: Option<ContractAwareness>,
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
    tool_guards: Vec<(String, Arc<ConcurrencyGuard>)>,
    server_guard: Option<Arc<ConcurrencyGuard>>,
    guards: ServerGuards,
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
            concurrency: None,
            rate_limits: Vec::new(),
            rate_limit_store: Arc::new(MemoryStore::new()),
            failure_policy: FailurePolicy::Open,
            store_timeout: Duration::from_millis(250),
            timeout: None,
            max_result_bytes: None,
            require_identity: false,
            lockfile: None,
            awareness_min: ChangeSeverity::Risky,
            awareness_cap: 5,
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

    /// The concurrency guard of a group (`Some("billing")`) or of the whole server (`None`),
    /// if one is configured: how many calls run and wait right now.
    pub fn concurrency_guard(&self, group: Option<&str>) -> Option<&ConcurrencyGuard> {
        match group {
            Some(group) => self.inner.tool_guards.iter().find(|(name, _)| name == group).map(|(_, guard)| &**guard),
            None => self.inner.server_guard.as_deref(),
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
            return validation_result(action, problems);
        }
        let input = match (action.decode)(&arguments) {
            Ok((input, issues)) if issues.is_empty() => input,
            Ok((_, issues)) => return validation_result(action, action.checker.rule_problems(issues, &arguments)),
            Err(error) => return validation_result(action, action.checker.decode_problem(&error, &arguments)),
        };
        let info = Arc::new(CallInfo::new(Arc::clone(&action.qualified), request));
        let outcome = self.run_guarded(action, &info, arguments, input).await;
        let warnings = info.take_warnings();
        match outcome {
            Ok(output) => success_result(output, &warnings),
            Err(error) => error_result(&error, &warnings),
        }
    }

    /// The guards, then middleware and handler, raced against the timeout and the client's
    /// cancellation; the concurrency slot is held until the end, however it comes.
    async fn run_guarded(
        &self,
        action: &CompiledAction,
        info: &Arc<CallInfo>,
        arguments: Value,
        input: Box<dyn std::any::Any + Send + Sync>,
    ) -> Result<Output, ToolError> {
        let inner = &*self.inner;
        let cancellation = info.cancellation.clone();
        let _admission = tokio::select! {
            admitted = action.guards.admit(info, &inner.guards) => admitted?,
            () = cancellation.cancelled() => return Err(cancelled(&action.qualified)),
        };
        action.guards.warn_deprecations(info, &arguments);
        let call = Call { info: Arc::clone(info), arguments, input: Some(input) };
        let next = Next {
            chain: Arc::clone(&action.chain),
            index: 0,
            endpoint: Arc::clone(&action.endpoint),
            mask_internal_errors: inner.mask_internal_errors,
        };
        let run = next.run(call);
        let timeout = async {
            match action.guards.timeout {
                Some(after) => {
                    tokio::time::sleep(after).await;
                    after
                }
                None => std::future::pending().await,
            }
        };
        let output = tokio::select! {
            outcome = run => outcome?,
            after = timeout => return Err(action.guards.timed_out(after)),
            () = cancellation.cancelled() => return Err(cancelled(&action.qualified)),
        };
        Ok(inner.guards.cap(output, info))
    }
}

fn validation_result(action: &CompiledAction, problems: Vec<FieldProblem>) -> CallToolResult {
    let error = ValidationError {
        action: action.qualified.to_string(),
        fields: problems,
        contract_awareness: action.awareness.clone(),
    };
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

/// What rmcp's request context says about the caller.
fn request_info(context: RequestContext<RoleServer>) -> RequestInfo {
    let session_id = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(Arc::from);
    // The HTTP transport's authenticator leaves its verdict in the request's extensions.
    let caller = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .cloned()
        .unwrap_or(Caller::Anonymous);
    RequestInfo {
        session_id: session_id.clone(),
        client: context.client_info(),
        cancellation: context.ct.clone(),
        progress_token: context.meta.get_progress_token(),
        // Over HTTP without a session (stateless), nothing carries a request to the client.
        peer_accepts_requests: context.extensions.get::<http::request::Parts>().is_none() || session_id.is_some(),
        peer: Some(context.peer.clone()),
        caller,
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
