//! From a tool name and its arguments to one action, or to the routing error that says how to
//! get there: `MISSING_DISCRIMINATOR` when a grouped tool is called without naming an action,
//! `UNKNOWN_ACTION` with a did-you-mean when the tool or the action does not exist, and every
//! tool that serves a name sent without its namespace or group when more than one does (so no
//! mount can take another's unqualified calls by listing its names first).

use std::sync::Arc;

use mcp_fusion_wire::{ErrorCode, Sent, ToolError};
use serde_json::{Map, Value};

use super::candidate::{Candidate, ambiguity, guesses};
use super::{Catalog, Route};
use super::{mounted_guess, not_served};
use crate::auth::Caller;
use crate::compiled::{CompiledAction, CompiledGroup};
use crate::similarity::{Named, did_you_mean, likely, likely_names};

impl Catalog {
    /// The action a call addresses, with its arguments (the discriminator removed).
    pub(crate) fn route(
        &self,
        tool: &str,
        mut arguments: Map<String, Value>,
    ) -> Result<(Arc<CompiledAction>, Map<String, Value>), ToolError> {
        match self.routes.get(tool) {
            Some(&Route::Action { group, action, .. }) => {
                Ok((Arc::clone(&self.groups[group].actions[action]), arguments))
            }
            Some(&Route::Group { group, .. }) => {
                let group = &self.groups[group];
                let discriminator = group.discriminator.as_deref().unwrap_or("action");
                let sent = arguments.shift_remove(discriminator);
                let action = route_in_group(group, discriminator, sent, &arguments, self.value_free)?;
                Ok((Arc::clone(action), arguments))
            }
            None => Err(self.unknown_tool(tool)),
        }
    }

    fn unknown_tool(&self, tool: &str) -> ToolError {
        let dotted = tool.split_once('.').filter(|_| !self.mounts.is_empty());
        if let Some((namespace, rest)) = dotted
            && let Some(mounted) = self.mounts.get(namespace)
            && let Some(group) = self.group(namespace)
        {
            return not_served(group, mounted, rest, self.value_free);
        }
        let candidates = self.candidates(tool);
        if candidates.len() > 1 {
            let code = if dotted.is_some() { ErrorCode::HandoffNamespaceMismatch } else { ErrorCode::UnknownAction };
            return ToolError::new(
                code,
                format!(
                    "The tool name{} is ambiguous: {} tools serve it.",
                    said(tool, self.value_free),
                    candidates.len()
                ),
            )
            .suggest(ambiguity(&candidates))
            .actions(candidates.iter().map(Candidate::listed));
        }
        let guess = candidates.first().map(Candidate::guess);
        if let Some((namespace, _)) = dotted {
            return self.no_such_namespace(tool, namespace, guess);
        }
        let recovery = match guess.or_else(|| guesses(&self.likely_calls(tool))) {
            Some(guess) => format!("{guess} Call one of the available tools."),
            None => "Call one of the available tools; tools/list describes them.".to_owned(),
        };
        ToolError::new(ErrorCode::UnknownAction, format!("Unknown tool{}.", said(tool, self.value_free)))
            .suggest(recovery)
            .actions(self.tool_names())
    }
}

impl Catalog {
    /// The answer to a call of `tool`, which the catalog does not have, in the names of the
    /// tools `caller` may see: a tool hidden from its list is neither guessed nor listed.
    /// `None` when the caller sees every tool (the catalog's own answer says no more).
    pub(crate) fn unknown_tool_seen_by(&self, tool: &str, caller: &Caller) -> Option<ToolError> {
        self.offers.as_ref()?;
        let seen = self.tools_for(caller);
        if seen.len() == self.tools.len() {
            return None;
        }
        let names: Vec<&str> = seen.iter().map(|tool| tool.name.as_ref()).collect();
        let likely: Vec<String> =
            likely_names(tool, names.iter().copied()).into_iter().map(|name| format!("\"{name}\"")).collect();
        let recovery = match did_you_mean(&likely) {
            Some(guess) => format!("{guess} Call one of the available tools."),
            None => "Call one of the available tools; tools/list describes them.".to_owned(),
        };
        Some(
            ToolError::new(ErrorCode::UnknownAction, format!("Unknown tool{}.", said(tool, self.value_free)))
                .suggest(recovery)
                .actions(names.iter().map(|name| (*name).to_owned())),
        )
    }
}

impl Catalog {
    /// Every tool that serves `name` sent without its namespace or group (`pay_invoice`,
    /// `billing.pay_invoice`, `billing`), in the order of the groups: more than one, and the
    /// name is ambiguous. A namespace named alone means its only tool.
    fn candidates(&self, name: &str) -> Vec<Candidate> {
        let mut found: Vec<Candidate> = self
            .groups
            .iter()
            .filter_map(|group| match self.mounts.get(&group.name) {
                Some(mounted) => mounted_guess(group, mounted, name),
                None => self.local_guess(group, name),
            })
            .collect();
        if let Some(group) = self.group(name)
            && self.mounts.contains_key(name)
            && let [only] = group.actions.as_slice()
        {
            found.push(Candidate::Tool { tool: only.qualified.to_string() });
        }
        found
    }

    /// The action of the local group `group` that `name` names, bare or qualified.
    fn local_guess(&self, group: &CompiledGroup, name: &str) -> Option<Candidate> {
        let action = name.strip_prefix(group.name.as_str()).and_then(|rest| rest.strip_prefix('.')).unwrap_or(name);
        let index = group.actions.iter().position(|known| known.name() == action)?;
        match &group.discriminator {
            Some(discriminator) => Some(Candidate::Action {
                tool: group.tools.first()?.name.to_string(),
                discriminator: discriminator.clone(),
                action: action.to_owned(),
                listed: group.actions[index].qualified.to_string(),
            }),
            None => Some(Candidate::Tool { tool: group.tools.get(index)?.name.to_string() }),
        }
    }

    /// The tools, and the actions of grouped tools, that a name none of them has most likely
    /// meant, by spelling and by meaning (`invoices` → `billing` with `"action":
    /// "list_invoices"`, `searchNodes` → `memory.search_nodes`). A mounted tool is compared
    /// by its own name, as its upstream calls it.
    fn likely_calls(&self, name: &str) -> Vec<Candidate> {
        let mut calls: Vec<Candidate> = Vec::new();
        let mut named: Vec<(String, Option<&str>)> = Vec::new();
        for tool in &self.tools {
            let own = match tool.name.split_once('.') {
                Some((namespace, own)) if self.mounts.contains_key(namespace) => own,
                _ => &tool.name,
            };
            named.push((own.to_owned(), tool.description.as_deref()));
            calls.push(Candidate::Tool { tool: tool.name.to_string() });
        }
        for group in self.groups.iter().filter(|group| !self.mounts.contains_key(&group.name)) {
            let (Some(discriminator), Some(tool)) = (&group.discriminator, group.tools.first()) else { continue };
            for action in &group.actions {
                named.push((action.name().to_owned(), None));
                calls.push(Candidate::Action {
                    tool: tool.name.to_string(),
                    discriminator: discriminator.clone(),
                    action: action.name().to_owned(),
                    listed: action.qualified.to_string(),
                });
            }
        }
        let likely = likely(name, named.iter().map(|(name, description)| Named { name, description: *description }));
        let picked: Vec<Candidate> = likely.into_iter().map(|index| calls[index].clone()).collect();
        // A grouped tool guessed beside one of its actions is said once, with the action.
        let with_action = |tool: &str| {
            picked.iter().any(|candidate| matches!(candidate, Candidate::Action { tool: of, .. } if of == tool))
        };
        picked
            .iter()
            .filter(|candidate| !matches!(candidate, Candidate::Tool { tool } if with_action(tool)))
            .cloned()
            .collect()
    }

    /// A dotted name whose namespace no mount has: the closest tool across every mount.
    fn no_such_namespace(&self, tool: &str, namespace: &str, guess: Option<String>) -> ToolError {
        let mounted: Vec<&str> = self.mounted_groups().flat_map(|group| group.qualified_names()).collect();
        let rest = &tool[namespace.len() + 1..];
        let guess = guess.or_else(|| guesses(&self.likely_calls(rest)));
        let recovery = match guess {
            Some(guess) => format!("{guess} Call one of the tools listed."),
            None => "Call one of the tools listed; tools/list describes them.".to_owned(),
        };
        ToolError::new(
            ErrorCode::HandoffNamespaceMismatch,
            match self.value_free {
                false => {
                    format!("No mounted namespace {} (the tool {} names it).", Sent::text(namespace), Sent::text(tool))
                }
                true => "No mounted namespace of the name the tool's name begins with.".to_owned(),
            },
        )
        .suggest(recovery)
        .actions(mounted)
    }
}

fn route_in_group<'g>(
    group: &'g CompiledGroup,
    discriminator: &str,
    sent: Option<Value>,
    arguments: &Map<String, Value>,
    value_free: bool,
) -> Result<&'g Arc<CompiledAction>, ToolError> {
    let tool = &group.name;
    let missing = |message: String| {
        ToolError::new(ErrorCode::MissingDiscriminator, message)
            .suggest(format!(
                "Add \"{discriminator}\" set to one of the available actions without the \"{tool}.\" prefix (like \"{}\") and call again.",
                group.action_names().next().unwrap_or_default()
            ))
            .actions(group.qualified_names())
    };
    let name = match sent {
        None | Some(Value::Null) => {
            let message = format!("Missing the \"{discriminator}\" field: tool \"{tool}\" needs it to pick an action.");
            // The action named under another key (`operation`, `method`): say where it went.
            if let Some((key, action)) = action_under_another_key(group, arguments) {
                return Err(ToolError::new(
                    ErrorCode::MissingDiscriminator,
                    format!(
                        "{message} The unknown field {} holds the action name {}.",
                        Sent::text(key),
                        Sent::text(action)
                    ),
                )
                .suggest(format!(
                    "Rename {} to \"{discriminator}\" (keep its value {}) and call again.",
                    Sent::text(key),
                    Sent::text(action)
                ))
                .actions(group.qualified_names()));
            }
            return Err(missing(message));
        }
        Some(Value::String(name)) if name.trim().is_empty() => {
            return Err(missing(format!(
                "The \"{discriminator}\" field is empty: tool \"{tool}\" needs it to pick an action."
            )));
        }
        Some(Value::String(name)) => name,
        Some(other) => {
            return Err(missing(format!(
                "The \"{discriminator}\" field must be a string naming an action, but you sent {}.",
                if value_free { Sent::kind(&other) } else { Sent::value(&other) }
            )));
        }
    };
    // A model that sends the qualified name (`billing.get_invoice`) meant the action.
    let bare = name.strip_prefix(tool.as_str()).and_then(|rest| rest.strip_prefix('.')).unwrap_or(&name);
    if let Some(action) = group.action(bare) {
        return Ok(action);
    }
    let likely = likely_names(bare, group.action_names());
    let recovery = match likely.as_slice() {
        [close] => {
            format!("Did you mean \"{tool}.{close}\"? Call tool \"{tool}\" with \"{discriminator}\": \"{close}\".")
        }
        [] => format!("Call tool \"{tool}\" with \"{discriminator}\" set to one of the available actions."),
        several => {
            let qualified: Vec<String> = several.iter().map(|close| format!("\"{tool}.{close}\"")).collect();
            format!(
                "{} Call tool \"{tool}\" with \"{discriminator}\" set to the one you mean.",
                did_you_mean(&qualified).unwrap_or_default()
            )
        }
    };
    Err(ToolError::new(
        ErrorCode::UnknownAction,
        format!("Unknown action{} for tool \"{tool}\".", said(&name, value_free)),
    )
    .suggest(recovery)
    .actions(group.qualified_names()))
}

/// ` 'name'` as a sentence repeats a name the call sent, or nothing when no value is repeated.
pub(super) fn said(name: &str, value_free: bool) -> String {
    match value_free {
        true => String::new(),
        false => format!(" {}", Sent::text(name)),
    }
}

/// A key other than the discriminator whose value names one of the group's actions (bare or
/// qualified): the discriminator sent under the wrong name.
fn action_under_another_key<'a>(
    group: &CompiledGroup,
    arguments: &'a Map<String, Value>,
) -> Option<(&'a str, &'a str)> {
    arguments.iter().find_map(|(key, value)| {
        let name = value.as_str()?;
        let bare = name.strip_prefix(group.name.as_str()).and_then(|rest| rest.strip_prefix('.')).unwrap_or(name);
        group.action(bare).map(|_| (key.as_str(), name))
    })
}
