//! The `_meta` keys a server built with this framework publishes on each tool of its
//! `tools/list`, and the reader of the route they state.
//!
//! A client could guess a tool's routing from its schema (a required string enum looks like a
//! discriminator; `billing_get_invoice` looks like `billing.get_invoice`), but a guess can be
//! wrong. These keys say it outright, so a client that finds them routes exactly as the
//! server does and guesses only for tools that publish nothing.

use rmcp::model::Tool;
use serde_json::Value;

use crate::exposition::split_qualified;

/// On a grouped tool: an object mapping each action name to that action's own contract,
/// `{"description", "inputSchema", "outputSchema"?, "annotations"}` (the input schema without
/// the discriminator). Contracts are read from it, so each action is diffed on its own.
pub const ACTIONS_META_KEY: &str = "fusion/actions";

/// On a grouped tool: the name of the argument that picks the action (a string, `action`
/// unless the server chose another).
pub const DISCRIMINATOR_META_KEY: &str = "fusion/discriminator";

/// On a flat tool: the qualified name of the one action it serves (a string,
/// `billing.get_invoice`), whatever separator the tool name uses.
pub const ACTION_META_KEY: &str = "fusion/action";

/// On a prompt or a resource template: the JSON Schema of its arguments or of its URI's
/// parameters, typed as the server checks them (an enum, a pattern, a number). MCP lists a
/// prompt's arguments by name only, and a template's parameters not at all: this is what a
/// contract compares instead, so a value dropped from an enum is told as BREAKING.
pub const INPUT_SCHEMA_META_KEY: &str = "fusion/inputSchema";

/// In the server's `capabilities.experimental` at `initialize`: `{"namespaces": [...]}`, the
/// namespaces mounted from upstream servers. A mount that is still connecting lists no tools,
/// so this is how a client knows that `crm.search` is worth sending (the server answers
/// `HANDOFF_CONNECTING`) rather than a name nothing serves.
pub const MOUNTS_CAPABILITY: &str = "fusion/mounts";

/// The route a tool publishes in its `_meta`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PublishedRoute {
    /// One tool for a group: the tool name is the group, `discriminator` names the action.
    Grouped {
        /// The argument that picks the action.
        discriminator: String,
        /// The action names the tool lists, sorted (a JSON object keeps no order; the
        /// discriminator's `enum` in the input schema has the server's).
        actions: Vec<String>,
    },
    /// One tool for one action.
    Flat {
        /// The qualified action it serves (`billing.get_invoice`).
        action: String,
    },
}

/// The route `tool` publishes: `Grouped` when its `_meta` holds both
/// [`DISCRIMINATOR_META_KEY`] (a non-empty string) and [`ACTIONS_META_KEY`] (an object), and
/// no [`ACTION_META_KEY`]; `Flat` when it holds [`ACTION_META_KEY`] as a qualified name and no
/// discriminator. Anything else, contradictory or malformed, is `None`: the tool publishes no
/// route a client can trust.
///
/// ```
/// use std::sync::Arc;
/// use mcp_fusion_contract::{ACTION_META_KEY, PublishedRoute, published_route};
/// use rmcp::model::{MetaObject, Tool};
/// use serde_json::json;
///
/// let mut tool = Tool::new("billing-get_invoice", "One invoice.", Arc::new(Default::default()));
/// assert_eq!(published_route(&tool), None);
/// let mut meta = MetaObject::new();
/// meta.insert(ACTION_META_KEY.into(), json!("billing.get_invoice"));
/// tool.meta = Some(meta);
/// assert_eq!(published_route(&tool), Some(PublishedRoute::Flat { action: "billing.get_invoice".into() }));
/// ```
pub fn published_route(tool: &Tool) -> Option<PublishedRoute> {
    let meta = tool.meta.as_ref()?;
    match (meta.get(DISCRIMINATOR_META_KEY), meta.get(ACTIONS_META_KEY), meta.get(ACTION_META_KEY)) {
        (Some(Value::String(discriminator)), Some(Value::Object(actions)), None) if !discriminator.is_empty() => {
            Some(PublishedRoute::Grouped {
                discriminator: discriminator.clone(),
                actions: actions.keys().cloned().collect(),
            })
        }
        (None, _, Some(Value::String(action))) if split_qualified(action).is_some() => {
            Some(PublishedRoute::Flat { action: action.clone() })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::MetaObject;
    use serde_json::json;

    use super::*;

    fn tool(meta: Option<Value>) -> Tool {
        let mut tool = Tool::new("t", "d", Arc::new(Default::default()));
        tool.meta = meta.map(|meta| match meta {
            Value::Object(map) => MetaObject(map),
            other => panic!("a test meta must be an object, not {other}"),
        });
        tool
    }

    #[test]
    fn grouped_needs_the_discriminator_and_the_actions() {
        let grouped = tool(Some(json!({
            "fusion/discriminator": "op",
            "fusion/actions": {"get": {"inputSchema": {}}, "list": {}},
            "vendor/other": 1,
        })));
        assert_eq!(
            published_route(&grouped),
            Some(PublishedRoute::Grouped { discriminator: "op".into(), actions: vec!["get".into(), "list".into()] })
        );
        // What servers of this framework published before the discriminator key: no route.
        let actions_only = tool(Some(json!({"fusion/actions": {"get": {}}})));
        assert_eq!(published_route(&actions_only), None);
        assert_eq!(published_route(&tool(Some(json!({"fusion/discriminator": "action"})))), None);
    }

    #[test]
    fn flat_needs_a_qualified_name() {
        let flat = tool(Some(json!({"fusion/action": "billing.get_invoice"})));
        assert_eq!(published_route(&flat), Some(PublishedRoute::Flat { action: "billing.get_invoice".into() }));
        for name in ["billing", "", ".x", "billing."] {
            assert_eq!(published_route(&tool(Some(json!({"fusion/action": name})))), None, "{name:?}");
        }
    }

    #[test]
    fn no_meta_or_garbage_meta_is_no_route() {
        assert_eq!(published_route(&tool(None)), None);
        let garbage = [
            json!({}),
            json!({"fusion/discriminator": 7, "fusion/actions": {"a": {}}}),
            json!({"fusion/discriminator": "", "fusion/actions": {"a": {}}}),
            json!({"fusion/discriminator": "action", "fusion/actions": ["a"]}),
            json!({"fusion/discriminator": "action", "fusion/actions": null}),
            json!({"fusion/discriminator": ["action"], "fusion/actions": "a"}),
            json!({"fusion/action": 3}),
            json!({"fusion/action": null}),
            json!({"fusion/action": {"name": "a.b"}}),
            // Grouped and flat at once: contradictory, so neither is trusted.
            json!({"fusion/discriminator": "action", "fusion/actions": {"a": {}}, "fusion/action": "g.a"}),
            json!({"fusion/discriminator": 1, "fusion/action": "g.a"}),
        ];
        for meta in garbage {
            assert_eq!(published_route(&tool(Some(meta.clone()))), None, "{meta}");
        }
    }
}
