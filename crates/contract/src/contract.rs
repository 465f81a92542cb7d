//! Contracts: what a tool, a prompt or a resource template promises its callers, read from
//! `tools/list`, `prompts/list` and `resources/templates/list` — so it works for any MCP
//! server, ours or not.

use std::collections::BTreeMap;

use rmcp::model::{Prompt, ResourceTemplate, Tool};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::{ACTIONS_META_KEY, INPUT_SCHEMA_META_KEY};

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
    #[serde(default, skip_serializing_if = "no_schema")]
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
    #[serde(default, skip_serializing_if = "no_schema")]
    pub output_schema: Option<Value>,
    /// The annotations.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub annotations: Map<String, Value>,
}

/// Whether an optional schema is absent. A `null` one is absent too: it is read back as
/// absent, so it is written as absent, and a lockfile reads as the contracts it was written
/// from, digests and all.
fn no_schema(schema: &Option<Value>) -> bool {
    declared(schema).is_none()
}

/// An optional schema when declared: a `null` one is none, as a lockfile reads it back.
pub(crate) fn declared(schema: &Option<Value>) -> Option<&Value> {
    schema.as_ref().filter(|schema| !schema.is_null())
}

/// The contracts of a server, keyed by tool name.
pub type Contracts = BTreeMap<String, ToolContract>;

/// The contract of one prompt: its words, its arguments as listed, and — for a prompt of this
/// framework — their typed schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptContract {
    /// The prompt name.
    pub name: String,
    /// The human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description the model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments, in the order listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<ArgumentContract>,
    /// The arguments' JSON Schema, when the server publishes it in `_meta`.
    #[serde(default, skip_serializing_if = "no_schema")]
    pub input_schema: Option<Value>,
}

/// One argument of a prompt, as `prompts/list` states it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArgumentContract {
    /// The argument name.
    pub name: String,
    /// The human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description the model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether a `prompts/get` must send it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// The contract of one resource template: the URI it expands to, its words, the type of what
/// a read returns, and — for a template of this framework — its parameters' typed schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateContract {
    /// The RFC 6570 URI template (`billing://invoices/{id}`).
    pub uri_template: String,
    /// The programmatic name.
    pub name: String,
    /// The human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description the model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of every resource it expands to, if uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The annotations (`audience`, `priority`, …) as listed.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub annotations: Map<String, Value>,
    /// The parameters' JSON Schema, when the server publishes it in `_meta`.
    #[serde(default, skip_serializing_if = "no_schema")]
    pub input_schema: Option<Value>,
}

/// The prompt contracts of a server, keyed by prompt name.
pub type PromptContracts = BTreeMap<String, PromptContract>;

/// The resource template contracts of a server, keyed by URI template: what a caller expands.
pub type ResourceTemplateContracts = BTreeMap<String, ResourceTemplateContract>;

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

/// The schema a server publishes in an item's `_meta`, when it is an object.
fn published_schema(meta: Option<&rmcp::model::MetaObject>) -> Option<Value> {
    meta?.get(INPUT_SCHEMA_META_KEY).filter(|schema| schema.is_object()).cloned()
}

impl PromptContract {
    /// The contract a `prompts/list` entry states.
    pub fn from_prompt(prompt: &Prompt) -> PromptContract {
        let arguments = prompt.arguments.iter().flatten().map(|argument| ArgumentContract {
            name: argument.name.clone(),
            title: argument.title.clone(),
            description: argument.description.clone(),
            required: argument.required == Some(true),
        });
        PromptContract {
            name: prompt.name.clone(),
            title: prompt.title.clone(),
            description: prompt.description.clone(),
            arguments: arguments.collect(),
            input_schema: published_schema(prompt.meta.as_ref()),
        }
    }

    /// The schema its arguments are compared by: the published one, or else one built from
    /// the listed arguments (MCP's arguments are strings).
    pub(crate) fn listed_schema(&self) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for argument in &self.arguments {
            let mut property = Map::from_iter([("type".to_owned(), Value::from("string"))]);
            for (key, text) in [("title", &argument.title), ("description", &argument.description)] {
                if let Some(text) = text {
                    property.insert(key.to_owned(), Value::from(text.as_str()));
                }
            }
            properties.insert(argument.name.clone(), Value::Object(property));
            if argument.required {
                required.push(Value::from(argument.name.as_str()));
            }
        }
        serde_json::json!({"type": "object", "properties": properties, "required": required})
    }
}

impl ResourceTemplateContract {
    /// The contract a `resources/templates/list` entry states.
    pub fn from_template(template: &ResourceTemplate) -> ResourceTemplateContract {
        let annotations = match template.annotations.as_ref().map(serde_json::to_value) {
            Some(Ok(Value::Object(map))) => map,
            _ => Map::new(),
        };
        ResourceTemplateContract {
            uri_template: template.uri_template.clone(),
            name: template.name.clone(),
            title: template.title.clone(),
            description: template.description.clone(),
            mime_type: template.mime_type.clone(),
            annotations,
            input_schema: published_schema(template.meta.as_ref()),
        }
    }
}

/// The contracts of every prompt of a `prompts/list`.
pub fn prompt_contracts_of(prompts: &[Prompt]) -> PromptContracts {
    prompts.iter().map(|prompt| (prompt.name.clone(), PromptContract::from_prompt(prompt))).collect()
}

/// The contracts of every template of a `resources/templates/list`.
pub fn resource_template_contracts_of(templates: &[ResourceTemplate]) -> ResourceTemplateContracts {
    templates
        .iter()
        .map(|template| (template.uri_template.clone(), ResourceTemplateContract::from_template(template)))
        .collect()
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
