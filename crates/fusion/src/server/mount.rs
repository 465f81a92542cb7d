//! Compiling a mount: the upstream's tools listed under the namespace, each with the upstream's
//! schema as its checker, the server's and the mount's guards, and a forwarding endpoint.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use mcp_fusion_contract::{ACTION_META_KEY, PublishedRoute, published_route};
use mcp_fusion_wire::{ErrorCode, FieldPath, FieldProblem, ProblemKind, Sent, ToolError, ValidationError, echo};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::Value;

use super::compile::{CompiledAction, CompiledGroup, GroupScope, GuardSpec, MountStatus, Settings, check_name, guards};
use super::mount_output::{OutputCheck, conforming};
use crate::catalog::{Candidate, closest};
use crate::error::BuildError;
use crate::guard::ConcurrencyGuard;
use crate::handoff::{Forward, ForwardError, Mount, MountState};
use crate::input::DecodeError;
use crate::middleware::{Call, Chain, Endpoint, Layers, Outcome};
use crate::output::Output;
use crate::validation::Checker;

/// Compiles `mount` as it stands: no tools while it connects or is down, the upstream's tools
/// once it is ready.
pub(crate) fn compile_mount(
    settings: &Settings,
    mount: &Mount,
    state: MountState,
) -> Result<CompiledGroup, BuildError> {
    let namespace = mount.namespace.as_str();
    check_name("mount", namespace)?;
    let (status, tools, forward) = match state {
        MountState::Connecting => (MountStatus::Connecting, Vec::new(), None),
        MountState::Unavailable { retry_at, reason } => {
            (MountStatus::Unavailable { retry_at, reason }, Vec::new(), None)
        }
        MountState::Ready { tools, .. } if tools.len() > mount.max_tools => {
            return Err(BuildError::TooManyTools {
                mount: namespace.to_owned(),
                tools: tools.len(),
                max: mount.max_tools,
            });
        }
        MountState::Ready { tools, forward } => (MountStatus::Ready, servable(namespace, tools), Some(forward)),
    };
    let concurrency =
        mount.concurrency.map(|limits| Arc::new(ConcurrencyGuard::new(format!("Upstream \"{namespace}\""), limits)));
    let no_middleware = Layers::default();
    let scope = GroupScope {
        name: namespace,
        rate_limits: &mount.rate_limits,
        middleware: &no_middleware,
        concurrency: concurrency.as_ref(),
    };
    let mut actions = Vec::with_capacity(tools.len());
    let mut listed = Vec::with_capacity(tools.len());
    let mut by_action = HashMap::with_capacity(tools.len());
    for tool in tools {
        let Some(forward) = forward.clone() else { break };
        by_action.insert(tool.name.to_string(), actions.len());
        let (action, tool) = compile_tool(settings, mount, &scope, tool, forward)?;
        actions.push(action);
        listed.push(tool);
    }
    if let Some(awareness) = &settings.awareness
        && !listed.is_empty()
    {
        awareness.log_drift_of(&listed);
        for (action, block) in actions.iter_mut().zip(awareness.of_tools(&listed)) {
            action.awareness = block;
        }
    }
    let output_schemas = listed
        .iter()
        .filter(|tool| tool.output_schema.is_some())
        .filter_map(|tool| tool.name.strip_prefix(namespace)?.strip_prefix('.').map(str::to_owned))
        .collect();
    let actions = actions.into_iter().map(Arc::new).collect();
    Ok(CompiledGroup {
        name: namespace.to_owned(),
        tools: listed,
        actions,
        by_action,
        concurrency,
        mount: Some(status),
        output_schemas: Arc::new(output_schemas),
    })
}

/// The longest tool name MCP allows, namespace included.
const MAX_TOOL_NAME: usize = 128;

/// Names the log quotes of the tools it drops; the rest are counted.
const NAMES_LOGGED: usize = 5;

/// Whether `name` is a tool name MCP allows: 1 to 128 of `A-Z a-z 0-9 _ . -`.
pub(crate) fn is_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The upstream's tools a client can be given: each name MCP allows once the namespace is in
/// front of it, each listed once (the first kept). What is dropped is said in one warning per
/// reason, the names escaped.
fn servable(namespace: &str, tools: Vec<Tool>) -> Vec<Tool> {
    let mut seen = HashSet::with_capacity(tools.len());
    let (mut invalid, mut twice) = (Vec::new(), Vec::new());
    let mut kept = Vec::with_capacity(tools.len());
    for tool in tools {
        let name = tool.name.as_ref();
        if !is_tool_name(name) || namespace.len() + 1 + name.len() > MAX_TOOL_NAME {
            invalid.push(echo(name));
        } else if !seen.insert(name.to_owned()) {
            twice.push(echo(name));
        } else {
            kept.push(tool);
        }
    }
    if !invalid.is_empty() {
        tracing::warn!(
            mount = namespace,
            dropped = invalid.len(),
            "the upstream lists {} tools whose names are not 1 to 128 of A-Z a-z 0-9 _ . - (with \"{namespace}.\" in front), so they are not served: {}",
            invalid.len(),
            some_of(&invalid)
        );
    }
    if !twice.is_empty() {
        tracing::warn!(
            mount = namespace,
            dropped = twice.len(),
            "the upstream lists {} tools more than once; the first of each is kept: {}",
            twice.len(),
            some_of(&twice)
        );
    }
    kept
}

/// The first few of `names`, and how many more there are.
fn some_of(names: &[String]) -> String {
    let shown = names[..names.len().min(NAMES_LOGGED)].join(", ");
    match names.len().saturating_sub(NAMES_LOGGED) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

/// One upstream tool: listed as `{namespace}.{name}`, checked against its own input schema.
fn compile_tool(
    settings: &Settings,
    mount: &Mount,
    scope: &GroupScope<'_>,
    mut tool: Tool,
    forward: Arc<dyn Forward>,
) -> Result<(CompiledAction, Tool), BuildError> {
    let name: Arc<str> = Arc::from(tool.name.as_ref());
    let qualified: Arc<str> = format!("{}.{name}", scope.name).into();
    let input: JsonObject = (*tool.input_schema).clone();
    let checker = match mount.validate.then(|| Checker::new(&input, Vec::new())) {
        Some(Ok(checker)) => Some(checker),
        Some(Err(reason)) => {
            tracing::warn!(tool = %qualified, "the upstream's input schema does not compile, so calls go unchecked: {}", echo(&reason));
            None
        }
        None => None,
    };
    let idempotent = tool.annotations.as_ref().and_then(|a| a.idempotent_hint) == Some(true);
    let spec = GuardSpec {
        require_identity: false,
        scopes: &[],
        rate_limits: &[],
        deprecated: None,
        deprecated_fields: &[],
        timeout: Some(mount.timeout.or(settings.timeout).unwrap_or(Mount::DEFAULT_TIMEOUT)),
        idempotent,
        read_only: tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true),
        by_key: false,
        check_with: None,
    };
    let guards = guards(settings, scope, &spec, &qualified, &input)?;
    let echo_arguments = !Value::Object(input).to_string().contains("\"writeOnly\"");
    let output = tool.output_schema.as_ref().map(|schema| OutputCheck::new(JsonObject::clone(schema)));
    let target =
        Target { namespace: scope.name.into(), tool: name, qualified: Arc::clone(&qualified), echo_arguments, output };
    let levels = [&settings.middleware, scope.middleware];
    let chain = Chain::assemble(guards, &levels, forwarding(forward, Arc::new(target)));
    let action = CompiledAction {
        qualified: Arc::clone(&qualified),
        name_at: scope.name.len() + 1,
        checker,
        decode: decode_nothing,
        chain: Arc::new(chain),
        awareness: None,
        mask_internal_errors: settings.mask_internal_errors,
        output_schema: tool.output_schema.is_some(),
    };
    tool.name = qualified.to_string().into();
    // An upstream of this framework publishing a flat action (`billing.get_invoice`) serves
    // it here as `crm.billing.get_invoice`: a client routes by the published name.
    if let Some(Value::String(published)) = tool.meta.as_mut().and_then(|meta| meta.get_mut(ACTION_META_KEY)) {
        *published = format!("{}.{published}", scope.name);
    }
    Ok((action, tool))
}

/// A mounted tool's arguments go to the upstream as sent: there is nothing to decode.
fn decode_nothing(_: &Value) -> Result<crate::handler::Decoded, DecodeError> {
    Ok((Box::new(()), Vec::new()))
}

/// Where a forwarded call goes, for the envelopes of its failures.
struct Target {
    namespace: Arc<str>,
    tool: Arc<str>,
    qualified: Arc<str>,
    /// Whether the arguments may be quoted back (no field of the schema is `writeOnly`).
    echo_arguments: bool,
    /// The output schema the tool was listed with, which its successes must keep.
    output: Option<OutputCheck>,
}

/// The endpoint of a mounted tool: the call handed to the upstream, its result passed back
/// as it came, its failures as envelopes.
fn forwarding(forward: Arc<dyn Forward>, target: Arc<Target>) -> Endpoint {
    Box::new(move |call: Call| -> BoxFuture<'static, Outcome> {
        let arguments = match call.arguments {
            Value::Object(arguments) => arguments,
            _ => JsonObject::new(),
        };
        let future = forward.call(&target.tool, arguments.clone(), Arc::clone(&call.info));
        let target = Arc::clone(&target);
        Box::pin(async move {
            match future.await {
                Ok(result) => conforming(target.output.as_ref(), &target.namespace, &target.qualified, result)
                    .map(Output::passed_through),
                Err(ForwardError::InvalidParams(message)) => Ok(refused(&target, &message, arguments)),
                Err(ForwardError::NoSuchTool(message)) => Err(ToolError::new(
                    ErrorCode::HandoffNamespaceMismatch,
                    format!(
                        "Upstream \"{}\" no longer has the tool {}: {}.",
                        target.namespace,
                        Sent::text(&target.tool),
                        Sent::text(&message)
                    ),
                )
                .suggest("Read tools/list again: the upstream's tools have changed.")),
                Err(ForwardError::TooLarge { limit_bytes }) => Err(too_large(&target, limit_bytes)),
                Err(ForwardError::Unavailable { message, retry_after }) => {
                    Err(call_failed(&target, &message, retry_after))
                }
            }
        })
    })
}

/// The upstream refused the arguments (`-32602`): a validation error whose field line is the
/// upstream's own words.
fn refused(target: &Target, message: &str, arguments: JsonObject) -> Output {
    let sent = if target.echo_arguments { Sent::value(&Value::Object(arguments)) } else { Sent::redacted() };
    let kind = ProblemKind::UpstreamRefused { upstream: target.namespace.to_string(), message: message.to_owned() };
    let error =
        ValidationError::new(target.qualified.to_string()).field(FieldProblem::new(&FieldPath::root(), &kind, &sent));
    Output::passed_through(CallToolResult::error(vec![ContentBlock::text(error.render())]))
}

/// A call the upstream failed: `HANDOFF_UPSTREAM_UNAVAILABLE`, naming the upstream and what it
/// said.
fn call_failed(target: &Target, message: &str, retry_after: Option<Duration>) -> ToolError {
    let seconds = retry_after.map_or(1, whole_seconds);
    ToolError::new(
        ErrorCode::HandoffUpstreamUnavailable,
        format!("Upstream \"{}\" failed the call to {}: {}.", target.namespace, target.qualified, Sent::text(message)),
    )
    .suggest(format!(
        "Call again in {}; if the tool changes anything, check first whether it already did.",
        in_seconds(seconds)
    ))
    .retry_after(seconds)
}

/// An answer the upstream sent larger than one message may be: dropped unread, so what it
/// said is unknown.
fn too_large(target: &Target, limit_bytes: usize) -> ToolError {
    ToolError::new(
        ErrorCode::HandoffUpstreamUnavailable,
        format!(
            "Upstream \"{}\" answered the call to {} with a message larger than {limit_bytes} bytes{}, the most one message may take; the answer was dropped unread.",
            target.namespace,
            target.qualified,
            in_mebibytes(limit_bytes)
        ),
    )
    .suggest("Ask for less (a smaller page, a narrower filter) and call again; if the tool changes anything, check first whether it already did.")
}

/// The envelope of a call to a mount that is not ready, or to a tool its upstream does not
/// list (`tool` is the part after the namespace).
pub(crate) fn not_served(group: &CompiledGroup, status: &MountStatus, tool: &str) -> ToolError {
    let namespace = &group.name;
    match status {
        MountStatus::Connecting => ToolError::new(
            ErrorCode::HandoffConnecting,
            format!("Upstream \"{namespace}\" is still connecting; its tools are not available yet."),
        )
        .warning()
        .suggest("Call again in 2 seconds; nothing was run.")
        .retry_after(2),
        MountStatus::Unavailable { retry_at, reason } => {
            let seconds = whole_seconds(retry_at.saturating_duration_since(Instant::now()));
            ToolError::new(
                ErrorCode::HandoffUpstreamUnavailable,
                format!("Upstream \"{namespace}\" is unavailable: {}.", bounded(reason)),
            )
            .suggest(format!(
                "Call again in {}, when the next attempt to reach it is made; nothing was run. Tools of other namespaces still work.",
                in_seconds(seconds)
            ))
            .retry_after(seconds)
        }
        MountStatus::Ready => {
            let recovery = mounted_guess(group, tool)
                .map(|candidate| candidate.guess())
                .or_else(|| {
                    closest(tool, group.action_names()).map(|close| format!("Did you mean \"{namespace}.{close}\"?"))
                })
                .map_or_else(
                    || "Call one of the tools listed; tools/list describes them.".to_owned(),
                    |guess| format!("{guess} Call one of the tools listed."),
                );
            ToolError::new(
                ErrorCode::HandoffNamespaceMismatch,
                format!("Upstream \"{namespace}\" has no tool {}.", Sent::text(tool)),
            )
            .suggest(recovery)
            .actions(group.qualified_names())
        }
    }
}

/// What a name that is not a tool of the mount `group` most likely meant: the tool it names
/// once its namespace is right (`echo` → `everything.echo`), or an action of a grouped
/// upstream tool named as if it were a tool (`billing.list_invoices`, or `list_invoices`
/// alone → `demo.billing` with `"action": "list_invoices"`). Exact names only: a misspelling
/// is the did-you-mean's work. The upstream's discriminator and action names are suggested
/// only when they are names MCP allows: they are the upstream's words.
pub(crate) fn mounted_guess(group: &CompiledGroup, name: &str) -> Option<Candidate> {
    if !matches!(group.mount, Some(MountStatus::Ready)) {
        return None;
    }
    let namespace = &group.name;
    if group.action(name).is_some() {
        return Some(Candidate::Tool { tool: format!("{namespace}.{name}") });
    }
    let (tool, action) = match name.split_once('.') {
        Some((tool, action)) => (Some(tool), action),
        None => (None, name),
    };
    group.tools.iter().find_map(|listed| {
        let upstream = listed.name.strip_prefix(namespace.as_str())?.strip_prefix('.')?;
        if tool.is_some_and(|tool| tool != upstream) {
            return None;
        }
        match published_route(listed)? {
            PublishedRoute::Grouped { discriminator, actions }
                if is_tool_name(&discriminator) && is_tool_name(action) && actions.iter().any(|a| a == action) =>
            {
                Some(Candidate::Action {
                    tool: listed.name.to_string(),
                    discriminator,
                    action: action.to_owned(),
                    listed: listed.name.to_string(),
                })
            }
            _ => None,
        }
    })
}

/// ` (16 MiB)` for a whole number of mebibytes, else nothing.
fn in_mebibytes(bytes: usize) -> String {
    const MIB: usize = 1 << 20;
    if bytes >= MIB && bytes.is_multiple_of(MIB) { format!(" ({} MiB)", bytes / MIB) } else { String::new() }
}

/// `1 second`, `4 seconds`.
fn in_seconds(seconds: u64) -> String {
    if seconds == 1 { "1 second".to_owned() } else { format!("{seconds} seconds") }
}

/// Whole seconds, rounded up, from 1 to 30: how long a model is asked to wait.
fn whole_seconds(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).clamp(1, 30)
}

/// A mount's reason, written by the gateway in words (whatever an upstream said in it is
/// already quoted and cut there), kept to a length a model reads whole and to one line: a
/// control character, which only a careless writer of the reason lets in, becomes a space.
fn bounded(reason: &str) -> String {
    const MAX: usize = 240;
    let reason = reason.trim_end_matches('.');
    let mut end = reason.len().min(MAX);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    reason[..end].chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}
