//! An upstream built with this framework speaks of its actions by its own names
//! (`billing.list_invoices`); mounted under a namespace they are called by the mount's
//! (`demo.billing.list_invoices`). Its envelopes pass through with its names said the mount's
//! way, so that a model calls what the envelope names.

use std::collections::HashSet;

use mcp_fusion_contract::{ACTION_META_KEY, ACTIONS_META_KEY};
use mcp_fusion_wire::{EnvelopeKind, parse};
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::Value;

use crate::context::map_whole_names;

/// The qualified action names an upstream's tools publish in their `_meta`: a flat tool's
/// action, each action of a grouped tool (`{tool}.{action}`).
pub(super) fn published_actions(tools: &[Tool]) -> HashSet<String> {
    let mut names = HashSet::new();
    for tool in tools {
        let Some(meta) = tool.meta.as_ref() else { continue };
        if let Some(Value::String(action)) = meta.get(ACTION_META_KEY) {
            names.insert(action.clone());
        }
        if let Some(Value::Object(actions)) = meta.get(ACTIONS_META_KEY) {
            names.extend(actions.keys().map(|action| format!("{}.{action}", tool.name)));
        }
    }
    names
}

/// `result` with every envelope among its text blocks naming the upstream's actions as the
/// mount `namespace` serves them. Other text (the data of a success) is left as it came.
pub(super) fn renamed(namespace: &str, published: &HashSet<String>, mut result: CallToolResult) -> CallToolResult {
    if published.is_empty() {
        return result;
    }
    for block in &mut result.content {
        let Some(text) = block.as_text() else { continue };
        if parse(&text.text).kind == EnvelopeKind::Text {
            continue;
        }
        let said = in_namespace(namespace, published, &text.text);
        *block = ContentBlock::text(said);
    }
    result
}

/// `text` with each whole name of `published` prefixed by `namespace.`.
fn in_namespace(namespace: &str, published: &HashSet<String>, text: &str) -> String {
    map_whole_names(text, |name| published.contains(name).then(|| format!("{namespace}.{name}")))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use mcp_fusion_wire::ToolError;
    use serde_json::json;

    use super::*;

    fn published() -> HashSet<String> {
        let mut grouped = Tool::new("billing", "", Arc::new(serde_json::Map::new()));
        let actions = json!({"list_invoices": {}, "get_invoice": {}});
        let mut meta = rmcp::model::MetaObject::new();
        meta.insert(ACTIONS_META_KEY.into(), actions);
        grouped.meta = Some(meta);
        let mut flat = Tool::new("notes_list", "", Arc::new(serde_json::Map::new()));
        let mut meta = rmcp::model::MetaObject::new();
        meta.insert(ACTION_META_KEY.into(), json!("notes.list"));
        flat.meta = Some(meta);
        published_actions(&[grouped, flat])
    }

    #[test]
    fn an_upstreams_envelope_names_its_actions_as_the_mount_serves_them() {
        let error = ToolError::not_found("No invoice inv_9; billing.get_invoice found none.")
            .suggest("Call billing.list_invoices. Or notes.list.")
            .actions(["billing.list_invoices", "notes.list"]);
        let result = renamed("demo", &published(), CallToolResult::error(vec![ContentBlock::text(error.render())]));
        let text = result.content[0].as_text().unwrap().text.clone();
        let again = parse(&text).error;
        assert_eq!(again.available_actions, ["demo.billing.list_invoices", "demo.notes.list"]);
        assert_eq!(again.message, "No invoice inv_9; demo.billing.get_invoice found none.");
        assert_eq!(again.recovery.as_deref(), Some("Call demo.billing.list_invoices. Or demo.notes.list."));
        // The data of a success, and names it does not publish, are left alone.
        let data = CallToolResult::success(vec![ContentBlock::text("billing.list_invoices billing.pay")]);
        assert_eq!(renamed("demo", &published(), data.clone()), data);
        assert_eq!(
            in_namespace("demo", &published(), "billing.pay and xbilling.list_invoices"),
            "billing.pay and xbilling.list_invoices"
        );
    }
}
