//! Compiling a mount: the upstream's tools listed under the namespace, each with the upstream's
//! schema as its checker, the server's and the mount's guards, and a forwarding endpoint.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_fusion_contract::{ACTION_META_KEY, ACTIONS_META_KEY, PublishedRoute, published_route};
use mcp_fusion_wire::{
    ErrorCode, Expectation, FieldPath, FieldProblem, ProblemKind, Sent, ToolError, ValidationError, echo,
    values_left_out,
};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::Value;

use super::compile::{Settings, check_name, guards};
use super::mount_output::{OutputCheck, conforming};
use super::upstream_failure::{FailedCall, coded, enveloped, failure, finds};
use super::upstream_names::{published_actions, renamed};
use crate::catalog::{MAX_TOOL_NAME, in_seconds, is_tool_name, whole_seconds};
use crate::catalog::{MountStatus, Mounted, strict_tool};
use crate::compiled::{CompiledAction, CompiledGroup, UpstreamActions};
use crate::error::BuildError;
use crate::guard::ConcurrencyGuard;
use crate::guard::assemble;
use crate::guard::{GroupScope, GuardSpec};
use crate::handoff::{Forward, ForwardError, Mount, MountState};
use crate::input::DecodeError;
use crate::middleware::{Call, Endpoint, Outcome};
use crate::output::Output;
use crate::validation::{Checker, Formats, close_unknown_keys, described_fields};

/// Compiles `mount` as it stands: no tools while it connects or is down, the upstream's tools
/// once it is ready; with what the catalog keeps of the upstream beside the group.
pub(crate) fn compile_mount(
    settings: &Settings,
    mount: &Mount,
    state: MountState,
) -> Result<(CompiledGroup, Mounted), BuildError> {
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
    let scope = GroupScope { name: namespace, rate_limits: &mount.rate_limits, concurrency: concurrency.as_ref() };
    let published = Arc::new(published_actions(&tools));
    let finders: Arc<[String]> =
        tools.iter().filter(|tool| finds(tool)).map(|tool| format!("{namespace}.{}", tool.name)).collect();
    let mut actions = Vec::with_capacity(tools.len());
    let mut listed = Vec::with_capacity(tools.len());
    for tool in tools {
        let Some(forward) = forward.clone() else { break };
        let said = Said { finders: Arc::clone(&finders), published: Arc::clone(&published) };
        let (action, tool) = compile_tool(settings, mount, &scope, tool, forward, said)?;
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
    let mounted = Mounted { status, output_schemas: Arc::new(output_schemas) };
    Ok((CompiledGroup::new(namespace.to_owned(), listed, actions, concurrency), mounted))
}

/// Names the log quotes of the tools it drops; the rest are counted.
const NAMES_LOGGED: usize = 5;

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
    said: Said,
) -> Result<(CompiledAction, Tool), BuildError> {
    let name: Arc<str> = Arc::from(tool.name.as_ref());
    let qualified: Arc<str> = format!("{}.{name}", scope.name).into();
    let input: JsonObject = (*tool.input_schema).clone();
    let checked = if mount.allow_unknown_fields { input.clone() } else { close_unknown_keys(input.clone()) };
    let formats = if mount.assert_formats { Formats::Asserted } else { Formats::Annotated };
    let value_free = mount.value_free_errors.unwrap_or(settings.guards.value_free_errors);
    let compiled =
        mount.validate.then(|| Checker::new(&checked, Vec::new(), formats).map(|c| c.value_free(value_free)));
    let checker = match compiled {
        Some(Ok(checker)) => Some(checker),
        Some(Err(reason)) => {
            tracing::warn!(tool = %qualified, "the upstream's input schema does not compile, so calls go unchecked: {}", echo(&reason));
            None
        }
        None => None,
    };
    let idempotent = tool.annotations.as_ref().and_then(|a| a.idempotent_hint) == Some(true);
    let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
    let timeout = mount.timeout.or(settings.guards.timeout).unwrap_or(Mount::DEFAULT_TIMEOUT);
    let spec = GuardSpec::forwarded(timeout, idempotent, read_only);
    let guards = guards(settings, scope, &spec, &qualified, &input)?;
    let fields = described_fields(&input).into();
    let echo_arguments = !value_free && !Value::Object(input).to_string().contains("\"writeOnly\"");
    let output = tool.output_schema.as_ref().map(|schema| OutputCheck::new(JsonObject::clone(schema)));
    let target = Target {
        namespace: scope.name.into(),
        tool: name,
        qualified: Arc::clone(&qualified),
        echo_arguments,
        output,
        fields,
        said,
        value_free,
        budget: settings.envelope_budget,
    };
    let chain = assemble(guards, &[&settings.middleware], forwarding(forward, Arc::new(target)));
    let mut action = CompiledAction::new(
        Arc::clone(&qualified),
        scope.name.len() + 1,
        checker,
        decode_nothing,
        chain,
        settings.mask_internal_errors,
    );
    action.output_schema = tool.output_schema.is_some();
    action.names_local_actions = false;
    action.forgiving_scalars = mount.forgiving_scalars.unwrap_or(settings.forgiving_scalars);
    action.value_free = value_free;
    let strict = mount.strict_schemas.unwrap_or(settings.strict_schemas);
    action.nulls_left_out = strict;
    if let Some(PublishedRoute::Grouped { discriminator, actions }) = published_route(&tool) {
        let fields = action_fields(&tool);
        action.upstream_actions = Some(Arc::new(UpstreamActions { discriminator, actions, fields }));
    }
    tool.name = qualified.to_string().into();
    // An upstream of this framework publishing a flat action (`billing.get_invoice`) serves
    // it here as `crm.billing.get_invoice`: a client routes by the published name.
    if let Some(Value::String(published)) = tool.meta.as_mut().and_then(|meta| meta.get_mut(ACTION_META_KEY)) {
        *published = format!("{}.{published}", scope.name);
    }
    if strict {
        tool = strict_tool(tool);
    }
    Ok((action, tool))
}

/// A mounted tool's arguments go to the upstream as sent: there is nothing to decode.
fn decode_nothing(_: &Value) -> Result<crate::handler::Decoded, DecodeError> {
    Ok((Box::new(()), Vec::new()))
}

/// The fields of each action of a grouped tool, as its upstream publishes them in the tool's
/// `_meta` (an action whose input schema names no properties is left out).
fn action_fields(tool: &Tool) -> HashMap<String, HashSet<String>> {
    let published = tool.meta.as_ref().and_then(|meta| meta.get(ACTIONS_META_KEY)).and_then(Value::as_object);
    let Some(published) = published else { return HashMap::new() };
    published
        .iter()
        .filter_map(|(name, action)| {
            let properties = action.get("inputSchema")?.get("properties")?.as_object()?;
            Some((name.clone(), properties.keys().cloned().collect()))
        })
        .collect()
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
    /// The input's fields with what each takes, for a refusal whose words name one.
    fields: Box<[(String, Expectation)]>,
    /// What the mount knows of its upstream's tools, for the envelopes it passes on.
    said: Said,
    /// Whether the call's values are taken out of what the upstream says of it.
    value_free: bool,
    /// The most characters an envelope the upstream wrote takes once written anew.
    budget: usize,
}

/// What a mount knows of all its upstream's tools, shared by each of them.
struct Said {
    /// The tools that only read (qualified): what finds the right value after a failure.
    finders: Arc<[String]>,
    /// The action names the upstream publishes (a framework upstream's), which its envelopes
    /// use and the mount serves under its namespace.
    published: Arc<HashSet<String>>,
}

/// The endpoint of a mounted tool: the call handed to the upstream, its result passed back
/// as it came (an error that is no envelope made one), its failures as envelopes.
fn forwarding(forward: Arc<dyn Forward>, target: Arc<Target>) -> Endpoint {
    Box::new(move |call: Call| -> BoxFuture<'static, Outcome> {
        let arguments = match call.arguments {
            Value::Object(arguments) => arguments,
            _ => JsonObject::new(),
        };
        let future = forward.call(&target.tool, arguments.clone(), Arc::clone(&call.info));
        let target = Arc::clone(&target);
        Box::pin(async move {
            let failed = FailedCall {
                namespace: &target.namespace,
                qualified: &target.qualified,
                finders: &target.said.finders,
                fields: &target.fields,
                arguments: &arguments,
            };
            let outcome = match future.await {
                Ok(result) => conforming(target.output.as_ref(), &target.namespace, &target.qualified, result)
                    .and_then(|result| enveloped(&failed, result, target.budget))
                    .map(|result| renamed(&target.namespace, &target.said.published, result))
                    .map(Output::passed_through),
                Err(ForwardError::Failed { message, .. }) => Err(failure(&failed, &message)),
                Err(ForwardError::InvalidParams(message)) => Ok(refused(&target, &failed, &message)),
                Err(ForwardError::NoSuchTool(message)) => Err(ToolError::new(
                    ErrorCode::HandoffNamespaceMismatch,
                    format!(
                        "Upstream \"{}\" no longer has the tool {}: {}.",
                        target.namespace,
                        Sent::text(&target.tool),
                        // Its words may name the tools it has now: the caller acts on them.
                        Sent::words(&message)
                    ),
                )
                .suggest("Read tools/list again: the upstream's tools have changed.")),
                Err(ForwardError::TooLarge { limit_bytes }) => Err(too_large(&target, limit_bytes)),
                Err(ForwardError::Coded { code, message, retry_after }) => {
                    Err(coded(&failed, code, &message, retry_after))
                }
                Err(ForwardError::Unavailable { message, retry_after }) => {
                    Err(call_failed(&target, &message, retry_after))
                }
                Err(ForwardError::CancelledInFlight) => Err(cancelled_in_flight(&target)),
            };
            match target.value_free {
                true => without_values(outcome, &Value::Object(arguments)),
                false => outcome,
            }
        })
    })
}

/// A call the client cancelled once upstream had it, and that upstream did not answer.
fn cancelled_in_flight(target: &Target) -> ToolError {
    ToolError::new(
        ErrorCode::cancelled_in_flight(),
        format!(
            "{} was cancelled by the client after it reached upstream \"{}\", which did not answer: it may have taken effect.",
            target.qualified, target.namespace
        ),
    )
    .suggest("Check its effect with a read action before calling it again.")
}

/// A failed call's answer with the call's values taken out of every word: the upstream's
/// words may quote them, and a value-free server repeats none.
fn without_values(outcome: Outcome, arguments: &Value) -> Outcome {
    match outcome {
        Err(error) => Err(error.without_values(arguments)),
        Ok(mut output) if output.is_passed_error() => {
            for block in &mut output.content {
                if let ContentBlock::Text(text) = block {
                    text.text = values_left_out(&text.text, arguments);
                }
            }
            Ok(output)
        }
        passed => passed,
    }
}

/// The upstream refused the arguments (`-32602`): a validation error whose field line is the
/// upstream's own words.
fn refused(target: &Target, call: &FailedCall<'_>, message: &str) -> Output {
    let sent = |value: Option<&Value>| match value {
        _ if !target.echo_arguments => Sent::redacted(),
        Some(value) => Sent::value(value),
        None => Sent::missing(),
    };
    let refusal = |expected: Option<&Expectation>| ProblemKind::UpstreamRefused {
        upstream: target.namespace.to_string(),
        message: message.to_owned(),
        expected: expected.cloned(),
    };
    let named = call.fields_named(message);
    let mut error = ValidationError::new(target.qualified.to_string());
    for (name, expected) in &named {
        let path = FieldPath::root().key(name.as_str());
        error = error.field(FieldProblem::new(&path, &refusal(Some(expected)), &sent(call.arguments.get(name))));
    }
    if named.is_empty() {
        let all = Value::Object(call.arguments.clone());
        error = error.field(FieldProblem::new(&FieldPath::root(), &refusal(None), &sent(Some(&all))));
    }
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

/// ` (16 MiB)` for a whole number of mebibytes, else nothing.
fn in_mebibytes(bytes: usize) -> String {
    const MIB: usize = 1 << 20;
    if bytes >= MIB && bytes.is_multiple_of(MIB) { format!(" ({} MiB)", bytes / MIB) } else { String::new() }
}
