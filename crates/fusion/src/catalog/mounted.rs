//! A mounted namespace's upstream as the catalog keeps it beside the namespace's group, and
//! what a call to the namespace is told when no tool of it answers: the upstream is still
//! connecting or down, or the name is not one of its tools (with what it most likely meant).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_fusion_contract::{PublishedRoute, published_route};
use mcp_fusion_wire::{ErrorCode, ToolError};

use super::Candidate;
use crate::compiled::CompiledGroup;
use crate::similarity::{did_you_mean, likely_names};

/// What a mounted namespace knows of its upstream. Its group's tools are always one per
/// action, whatever the server's exposition.
#[derive(Debug, Clone)]
pub(crate) struct Mounted {
    /// Where the upstream stands.
    pub status: MountStatus,
    /// Its tools (named without the namespace) that declared an output schema when the
    /// upstream last listed them: kept while it reconnects, so a client that still lists them
    /// gets a `HANDOFF_CONNECTING` it accepts.
    pub output_schemas: Arc<HashSet<String>>,
}

/// Where the upstream of a mounted namespace stands, for calls that find no tool.
#[derive(Debug, Clone)]
pub(crate) enum MountStatus {
    Connecting,
    Unavailable { retry_at: Instant, reason: String },
    Ready,
}

impl Mounted {
    /// Whether the upstream is ready.
    fn is_ready(&self) -> bool {
        matches!(self.status, MountStatus::Ready)
    }
}

/// The longest tool name MCP allows, namespace included.
pub(crate) const MAX_TOOL_NAME: usize = 128;

/// Whether `name` is a tool name MCP allows: 1 to 128 of `A-Z a-z 0-9 _ . -`.
pub(crate) fn is_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The envelope of a call to the mount `group`, whose upstream is `mounted`, that is not
/// ready, or to a tool its upstream does not list (`tool` is the part after the namespace).
pub(crate) fn not_served(group: &CompiledGroup, mounted: &Mounted, tool: &str, value_free: bool) -> ToolError {
    let namespace = &group.name;
    match &mounted.status {
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
            let recovery = mounted_guess(group, mounted, tool)
                .map(|candidate| candidate.guess())
                .or_else(|| {
                    let likely = likely_names(tool, group.action_names());
                    did_you_mean(&likely.iter().map(|name| format!("\"{namespace}.{name}\"")).collect::<Vec<_>>())
                })
                .map_or_else(
                    || "Call one of the tools listed; tools/list describes them.".to_owned(),
                    |guess| format!("{guess} Call one of the tools listed."),
                );
            ToolError::new(
                ErrorCode::HandoffNamespaceMismatch,
                format!("Upstream \"{namespace}\" has no tool{}.", super::routing::said(tool, value_free)),
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
pub(crate) fn mounted_guess(group: &CompiledGroup, mounted: &Mounted, name: &str) -> Option<Candidate> {
    if !mounted.is_ready() {
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

/// `1 second`, `4 seconds`.
pub(crate) fn in_seconds(seconds: u64) -> String {
    if seconds == 1 { "1 second".to_owned() } else { format!("{seconds} seconds") }
}

/// Whole seconds, rounded up, from 1 to 30: how long a model is asked to wait.
pub(crate) fn whole_seconds(wait: Duration) -> u64 {
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
