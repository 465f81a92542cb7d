//! Contracts: what a tool promises its callers, read from `tools/list` — so it works for any
//! MCP server, ours or not.

use std::collections::BTreeMap;

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::ACTIONS_META_KEY;

/// The contract of one tool: its words, its schemas, its behaviour hints, and — for a
/// grouped tool of this framework — the contract of each action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolContract {
    /// The tool name.
    pub name: String,
    /// The human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description the model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The input schema.
    pub input_schema: Value,
    /// The output schema, if declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The annotations (`readOnlyHint`, `destructiveHint`, …) as listed.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub annotations: Map<String, Value>,
    /// Per action, for a grouped tool (keyed by action name).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub actions: BTreeMap<String, ActionContract>,
}

/// The contract of one action of a grouped tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionContract {
    /// The description the model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The action's own input schema (without the discriminator).
    pub input_schema: Value,
    /// The output schema, if declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The annotations.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub annotations: Map<String, Value>,
}

/// The contracts of a server, keyed by tool name.
pub type Contracts = BTreeMap<String, ToolContract>;

impl ToolContract {
    /// The contract a `tools/list` entry states.
    pub fn from_tool(tool: &Tool) -> ToolContract {
        let annotations = match tool.annotations.as_ref().map(serde_json::to_value) {
            Some(Ok(Value::Object(map))) => map,
            _ => Map::new(),
        };
        let actions = tool
            .meta
            .as_ref()
            .and_then(|meta| meta.get(ACTIONS_META_KEY))
            .and_then(Value::as_object)
            .map(|actions| {
                actions
                    .iter()
                    .filter_map(|(name, contract)| {
                        let contract = serde_json::from_value::<ActionContract>(contract.clone()).ok()?;
                        Some((name.clone(), contract))
                    })
                    .collect()
            })
            .unwrap_or_default();
        ToolContract {
            name: tool.name.to_string(),
            title: tool.title.clone(),
            description: tool.description.as_ref().map(|d| d.to_string()),
            input_schema: Value::Object((*tool.input_schema).clone()),
            output_schema: tool.output_schema.as_ref().map(|s| Value::Object((**s).clone())),
            annotations,
            actions,
        }
    }
}

/// The contracts of every tool of a `tools/list`.
pub fn contracts_of(tools: &[Tool]) -> Contracts {
    tools.iter().map(|tool| (tool.name.to_string(), ToolContract::from_tool(tool))).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::{MetaObject, ToolAnnotations};
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("an object")
    }

    #[test]
    fn a_grouped_tool_states_each_action() {
        let mut tool = Tool::new("billing", "Invoices.", Arc::new(object(json!({"type": "object"}))));
        tool.title = Some("Billing".into());
        tool.annotations = Some(ToolAnnotations::new().read_only(true));
        let mut meta = MetaObject::new();
        meta.insert(
            ACTIONS_META_KEY.into(),
            json!({
                "get_invoice": {"description": "One.", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
                // Not a contract: left out rather than failing the whole tool.
                "broken": {"description": 3},
            }),
        );
        tool.meta = Some(meta);
        let contract = ToolContract::from_tool(&tool);
        assert_eq!(contract.name, "billing");
        assert_eq!(contract.title.as_deref(), Some("Billing"));
        assert_eq!(contract.description.as_deref(), Some("Invoices."));
        assert_eq!(contract.annotations.get("readOnlyHint"), Some(&json!(true)));
        assert_eq!(contract.actions.keys().collect::<Vec<_>>(), ["get_invoice"]);
        let action = &contract.actions["get_invoice"];
        assert_eq!(action.description.as_deref(), Some("One."));
        assert_eq!(action.input_schema, json!({"type": "object"}));
        assert_eq!(action.output_schema, None);
    }

    #[test]
    fn any_tool_states_a_contract() {
        let mut tool = Tool::new("search", "Search.", Arc::new(object(json!({"type": "object"}))));
        tool.output_schema = Some(Arc::new(object(json!({"type": "object", "properties": {}}))));
        let mut meta = MetaObject::new();
        meta.insert(ACTIONS_META_KEY.into(), json!("not an object"));
        tool.meta = Some(meta);
        let contracts = contracts_of(&[tool]);
        let contract = &contracts["search"];
        assert!(contract.actions.is_empty() && contract.annotations.is_empty());
        assert_eq!(contract.output_schema, Some(json!({"type": "object", "properties": {}})));
        // Absent parts stay out of the serialized contract, so the lockfile holds only what the tool says.
        let written = serde_json::to_value(contract).unwrap();
        let keys: std::collections::BTreeSet<&str> = written.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["description", "inputSchema", "name", "outputSchema"].into());
    }
}
