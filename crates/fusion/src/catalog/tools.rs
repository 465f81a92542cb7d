//! How groups and actions appear in `tools/list`: one tool per group with a discriminator
//! (grouped exposition), or one tool per action (flat exposition).

use std::sync::Arc;

use rmcp::model::{MetaObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::action::Annotations;
use crate::validation::{is_object_schema, property_names, required_names};
use mcp_fusion_contract::{ACTION_META_KEY, ACTIONS_META_KEY, DISCRIMINATOR_META_KEY, Exposition};

/// What `tools/list` says of one action.
pub(crate) struct ActionSpec {
    pub name: String,
    pub qualified: Arc<str>,
    pub description: String,
    pub title: Option<String>,
    pub annotations: Annotations,
    /// The input schema as published (optional fields without `null`).
    pub input: Map<String, Value>,
    pub output: Option<Map<String, Value>>,
}

/// What `tools/list` says of one group.
pub(crate) struct GroupSpec<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub title: Option<&'a str>,
    pub actions: &'a [&'a ActionSpec],
}

/// The tools of one group: one grouped tool, or one flat tool per action (in action order).
pub(crate) fn group_tools(exposition: &Exposition, group: &GroupSpec<'_>) -> Vec<Tool> {
    match exposition {
        Exposition::Grouped { discriminator } => vec![grouped_tool(group, discriminator)],
        Exposition::Flat { .. } => group
            .actions
            .iter()
            .map(|action| flat_tool(exposition.tool_name(group.name, &action.name), action))
            .collect(),
    }
}

fn annotations(a: Annotations, title: Option<&str>) -> ToolAnnotations {
    let mut annotations = ToolAnnotations::new();
    annotations.title = title.map(str::to_owned);
    annotations.read_only_hint = a.read_only;
    annotations.destructive_hint = a.destructive;
    annotations.idempotent_hint = a.idempotent;
    annotations.open_world_hint = a.open_world;
    annotations
}

/// One tool for one action; its `_meta` names the action, so clients need not parse the name.
fn flat_tool(name: String, action: &ActionSpec) -> Tool {
    let mut tool = Tool::new(name, action.description.clone(), Arc::new(action.input.clone()));
    tool.title = action.title.clone();
    tool.output_schema = action.output.clone().map(Arc::new);
    if action.annotations != Annotations::default() {
        tool.annotations = Some(annotations(action.annotations, action.title.as_deref()));
    }
    let mut meta = MetaObject::new();
    meta.insert(ACTION_META_KEY.into(), Value::String(action.qualified.to_string()));
    tool.meta = Some(meta);
    tool
}

/// One tool for a group: the discriminator enum, every action's fields merged (each field
/// says which actions use it and where it is required), and in `_meta` the discriminator and
/// each action's own contract.
fn grouped_tool(group: &GroupSpec<'_>, discriminator: &str) -> Tool {
    let members = group.actions;
    let mut tool = Tool::new(
        group.name.to_owned(),
        grouped_description(group, discriminator),
        Arc::new(grouped_input(members, discriminator)),
    );
    tool.title = group.title.map(str::to_owned);
    tool.output_schema = grouped_output(members).map(Arc::new);
    let merged = merge_annotations(members);
    if merged != Annotations::default() {
        tool.annotations = Some(annotations(merged, group.title));
    }
    let mut meta = MetaObject::new();
    meta.insert(DISCRIMINATOR_META_KEY.into(), Value::String(discriminator.to_owned()));
    meta.insert(ACTIONS_META_KEY.into(), Value::Object(action_contracts(members)));
    tool.meta = Some(meta);
    tool
}

/// The group's description, then one line per action.
fn grouped_description(group: &GroupSpec<'_>, discriminator: &str) -> String {
    let mut description = group.description.trim_end().to_owned();
    description.push_str("\n\nActions (set \"");
    description.push_str(discriminator);
    description.push_str("\"):");
    for action in group.actions {
        description.push_str(&format!("\n- {}: {}", action.name, action.description.trim()));
    }
    description
}

/// The input schema of a grouped tool: the discriminator, then every action's fields merged.
fn grouped_input(members: &[&ActionSpec], discriminator: &str) -> Map<String, Value> {
    let names: Vec<&str> = members.iter().map(|a| a.name.as_str()).collect();
    let mut properties = Map::new();
    properties.insert(
        discriminator.to_owned(),
        json!({
            "type": "string",
            "enum": names,
            "description": format!("The action to run: {}.", names.join(", ")),
        }),
    );
    for field in merged_fields(members) {
        let (name, schema) = field.into_schema();
        properties.insert(name, schema);
    }
    let mut input = Map::new();
    input.insert("type".into(), json!("object"));
    input.insert("properties".into(), Value::Object(properties));
    input.insert("required".into(), json!([discriminator]));
    let all_closed = members.iter().all(|a| a.input.get("additionalProperties") == Some(&Value::Bool(false)));
    if all_closed {
        input.insert("additionalProperties".into(), Value::Bool(false));
    }
    input
}

/// Every field of the group's actions, in order of first use, with which actions need it.
fn merged_fields<'a>(members: &[&'a ActionSpec]) -> Vec<MergedField<'a>> {
    let mut fields: Vec<MergedField<'a>> = Vec::new();
    for action in members {
        let required = required_names(&action.input);
        let props = action.input.get("properties").and_then(Value::as_object);
        for name in property_names(&action.input) {
            let schema = props.and_then(|p| p.get(&name)).cloned().unwrap_or(Value::Bool(true));
            let index = match fields.iter().position(|f| f.name == name) {
                Some(index) => index,
                None => {
                    fields.push(MergedField { name: name.clone(), ..MergedField::default() });
                    fields.len() - 1
                }
            };
            let entry = &mut fields[index];
            // Schemas that differ only in their words are one schema for the caller.
            if !entry.schemas.iter().any(|known| without_words(known) == without_words(&schema)) {
                entry.schemas.push(schema);
            }
            if required.contains(&name) {
                entry.required_by.push(&action.name);
            } else {
                entry.optional_for.push(&action.name);
            }
        }
    }
    fields
}

/// Each action's own contract, for `_meta`: clients and `fusion lock` read it there.
fn action_contracts(members: &[&ActionSpec]) -> Map<String, Value> {
    members
        .iter()
        .map(|a| {
            let mut contract = Map::new();
            contract.insert("description".into(), json!(a.description));
            contract.insert("inputSchema".into(), Value::Object(a.input.clone()));
            if let Some(output) = &a.output {
                contract.insert("outputSchema".into(), Value::Object(output.clone()));
            }
            let hints = annotations(a.annotations, a.title.as_deref());
            contract.insert("annotations".into(), serde_json::to_value(hints).unwrap_or(Value::Null));
            (a.name.clone(), Value::Object(contract))
        })
        .collect()
}

/// A schema without its `description` and `title`.
fn without_words(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(object) = &mut schema {
        object.remove("description");
        object.remove("title");
    }
    schema
}

/// One field of a grouped tool: its distinct schemas across actions, and which actions
/// require or accept it.
#[derive(Default)]
struct MergedField<'a> {
    name: String,
    schemas: Vec<Value>,
    required_by: Vec<&'a str>,
    optional_for: Vec<&'a str>,
}

impl MergedField<'_> {
    /// The field's name and schema: its one schema, or `anyOf` its distinct ones, described
    /// with which actions require it and which accept it.
    fn into_schema(self) -> (String, Value) {
        let MergedField { name, schemas, required_by, optional_for } = self;
        let mut usage = Vec::new();
        if !required_by.is_empty() {
            usage.push(format!("required by {}", required_by.join(", ")));
        }
        if !optional_for.is_empty() {
            usage.push(format!("optional for {}", optional_for.join(", ")));
        }
        let usage = format!("({})", usage.join("; "));
        let mut merged = if let [one] = schemas.as_slice() { one.clone() } else { json!({ "anyOf": schemas }) };
        if let Value::Object(object) = &mut merged {
            let text = match object.get("description").and_then(Value::as_str) {
                Some(own) => format!("{} {usage}", own.trim_end()),
                None => usage,
            };
            object.insert("description".into(), Value::String(text));
        }
        (name, merged)
    }
}

/// A grouped tool declares an output schema only when every action declares an object one
/// (clients then expect structured content from every call).
fn grouped_output(members: &[&ActionSpec]) -> Option<Map<String, Value>> {
    let outputs: Vec<&Map<String, Value>> = members.iter().map(|a| a.output.as_ref()).collect::<Option<_>>()?;
    if !outputs.iter().all(|o| is_object_schema(o)) {
        return None;
    }
    let mut distinct: Vec<&Map<String, Value>> = Vec::new();
    for output in outputs {
        if !distinct.contains(&output) {
            distinct.push(output);
        }
    }
    match distinct.as_slice() {
        [one] => Some((*one).clone()),
        many => {
            let branches: Vec<Value> = many.iter().map(|o| Value::Object((*o).clone())).collect();
            let mut schema = Map::new();
            schema.insert("type".into(), json!("object"));
            schema.insert("anyOf".into(), Value::Array(branches));
            Some(schema)
        }
    }
}

/// The tool is read-only / idempotent only if every action is; destructive or open-world if
/// any is.
fn merge_annotations(members: &[&ActionSpec]) -> Annotations {
    let all = |f: fn(&Annotations) -> Option<bool>| {
        let values: Vec<Option<bool>> = members.iter().map(|a| f(&a.annotations)).collect();
        if values.iter().all(|v| *v == Some(true)) {
            Some(true)
        } else if values.contains(&Some(false)) {
            Some(false)
        } else {
            None
        }
    };
    let any = |f: fn(&Annotations) -> Option<bool>| {
        let values: Vec<Option<bool>> = members.iter().map(|a| f(&a.annotations)).collect();
        if values.contains(&Some(true)) {
            Some(true)
        } else if values.iter().all(|v| *v == Some(false)) {
            Some(false)
        } else {
            None
        }
    };
    Annotations {
        read_only: all(|a| a.read_only),
        destructive: any(|a| a.destructive),
        idempotent: all(|a| a.idempotent),
        open_world: any(|a| a.open_world),
    }
}
