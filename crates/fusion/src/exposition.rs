//! How groups and actions appear in `tools/list`: one tool per group with a discriminator
//! (grouped), or one tool per action (flat).

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{MetaObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::action::Annotations;
use crate::error::BuildError;
use crate::schema::{is_object_schema, property_names, required_names};

/// The `_meta` key under which a grouped tool describes each of its actions.
pub const ACTIONS_META_KEY: &str = "fusion/actions";

/// How actions become MCP tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exposition {
    /// One tool per group; the `discriminator` field (a string enum of the action names)
    /// picks the action.
    Grouped {
        /// The field that names the action (`action`).
        discriminator: String,
    },
    /// One tool per action, named `{group}{separator}{action}`.
    Flat {
        /// Between group and action names (`_`).
        separator: String,
    },
}

impl Default for Exposition {
    fn default() -> Self {
        Exposition::grouped()
    }
}

impl Exposition {
    /// Grouped, with the discriminator `action`.
    pub fn grouped() -> Exposition {
        Exposition::Grouped { discriminator: "action".into() }
    }

    /// Flat, with the separator `_` (`billing_get_invoice`).
    pub fn flat() -> Exposition {
        Exposition::Flat { separator: "_".into() }
    }
}

/// What the catalog needs to know of an action.
pub(crate) struct ActionSpec {
    pub group: usize,
    pub name: String,
    pub qualified: Arc<str>,
    pub description: String,
    pub title: Option<String>,
    pub annotations: Annotations,
    pub input: Map<String, Value>,
    pub output: Option<Map<String, Value>>,
}

/// What the catalog needs to know of a group.
pub(crate) struct GroupSpec {
    pub name: String,
    pub description: String,
    pub title: Option<String>,
    pub actions: Vec<usize>,
}

/// Where a tool name leads.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Route {
    /// A grouped tool: the discriminator picks among the group's actions.
    Group(usize),
    /// A flat tool: one action.
    Action(usize),
}

/// The tools of a server and how their names route, computed once at build time.
pub(crate) struct Catalog {
    pub tools: Vec<Tool>,
    pub routes: HashMap<String, Route>,
    pub tool_names: Vec<String>,
    pub groups: Vec<GroupRoutes>,
    pub discriminator: Option<String>,
}

impl Catalog {
    /// The flat tool that exposes action `index`, when the exposition is flat.
    pub(crate) fn tool_of_action(&self, index: usize) -> Option<&str> {
        self.routes
            .iter()
            .find(|(_, route)| matches!(route, Route::Action(i) if *i == index))
            .map(|(name, _)| name.as_str())
    }
}

/// A group's action names, for routing and for the errors that list them.
pub(crate) struct GroupRoutes {
    pub name: String,
    pub by_action: HashMap<String, usize>,
    pub action_names: Vec<String>,
    pub qualified: Vec<String>,
}

impl Catalog {
    pub(crate) fn new(
        exposition: &Exposition,
        groups: &[GroupSpec],
        actions: &[ActionSpec],
    ) -> Result<Catalog, BuildError> {
        let group_routes = groups
            .iter()
            .map(|group| GroupRoutes {
                name: group.name.clone(),
                by_action: group.actions.iter().map(|&a| (actions[a].name.clone(), a)).collect(),
                action_names: group.actions.iter().map(|&a| actions[a].name.clone()).collect(),
                qualified: group.actions.iter().map(|&a| actions[a].qualified.to_string()).collect(),
            })
            .collect();
        let (tools, routes, discriminator) = match exposition {
            Exposition::Grouped { discriminator } => {
                let tools: Vec<Tool> = groups.iter().map(|g| grouped_tool(g, actions, discriminator)).collect();
                let routes = groups.iter().enumerate().map(|(i, g)| (g.name.clone(), Route::Group(i))).collect();
                (tools, routes, Some(discriminator.clone()))
            }
            Exposition::Flat { separator } => {
                let mut tools = Vec::with_capacity(actions.len());
                let mut routes = HashMap::with_capacity(actions.len());
                for (i, action) in actions.iter().enumerate() {
                    let name = format!("{}{separator}{}", groups[action.group].name, action.name);
                    if routes.insert(name.clone(), Route::Action(i)).is_some() {
                        return Err(BuildError::Duplicate { what: "tool", name });
                    }
                    tools.push(flat_tool(name, action));
                }
                (tools, routes, None)
            }
        };
        let tool_names = tools.iter().map(|t| t.name.to_string()).collect();
        Ok(Catalog { tools, routes, tool_names, groups: group_routes, discriminator })
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

fn flat_tool(name: String, action: &ActionSpec) -> Tool {
    let mut tool = Tool::new(name, action.description.clone(), Arc::new(action.input.clone()));
    tool.title = action.title.clone();
    tool.output_schema = action.output.clone().map(Arc::new);
    if action.annotations != Annotations::default() {
        tool.annotations = Some(annotations(action.annotations, action.title.as_deref()));
    }
    tool
}

/// One tool for a group: the discriminator enum, every action's fields merged (each field
/// says which actions use it and where it is required), and per-action contracts in `_meta`.
fn grouped_tool(group: &GroupSpec, actions: &[ActionSpec], discriminator: &str) -> Tool {
    let members: Vec<&ActionSpec> = group.actions.iter().map(|&a| &actions[a]).collect();
    let names: Vec<&str> = members.iter().map(|a| a.name.as_str()).collect();

    let mut description = group.description.trim_end().to_owned();
    description.push_str("\n\nActions (set \"");
    description.push_str(discriminator);
    description.push_str("\"):");
    for action in &members {
        description.push_str(&format!("\n- {}: {}", action.name, action.description.trim()));
    }

    let mut properties = Map::new();
    properties.insert(
        discriminator.to_owned(),
        json!({
            "type": "string",
            "enum": names,
            "description": format!("The action to run: {}.", names.join(", ")),
        }),
    );
    let mut fields: Vec<MergedField<'_>> = Vec::new();
    for action in &members {
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
    for MergedField { name, schemas, required_by, optional_for } in fields {
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
        properties.insert(name, merged);
    }

    let mut input = Map::new();
    input.insert("type".into(), json!("object"));
    input.insert("properties".into(), Value::Object(properties));
    input.insert("required".into(), json!([discriminator]));
    let all_closed = members.iter().all(|a| a.input.get("additionalProperties") == Some(&Value::Bool(false)));
    if all_closed {
        input.insert("additionalProperties".into(), Value::Bool(false));
    }

    let mut tool = Tool::new(group.name.clone(), description, Arc::new(input));
    tool.title = group.title.clone();
    tool.output_schema = grouped_output(&members).map(Arc::new);
    let merged = merge_annotations(&members);
    if merged != Annotations::default() {
        tool.annotations = Some(annotations(merged, group.title.as_deref()));
    }
    let contracts: Map<String, Value> = members
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
        .collect();
    let mut meta = MetaObject::new();
    meta.insert(ACTIONS_META_KEY.into(), Value::Object(contracts));
    tool.meta = Some(meta);
    tool
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
