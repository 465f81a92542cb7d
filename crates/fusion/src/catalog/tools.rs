//! How groups and actions appear in `tools/list`: one tool per group with a discriminator
//! (grouped exposition), or one tool per action (flat exposition).

use std::sync::Arc;

use rmcp::model::{Icon, MetaObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::action::Annotations;
use crate::apps::{AppLink, ui_meta};
use crate::validation::{is_object_schema, property_names, required_names};
use mcp_fusion_contract::{ACTION_META_KEY, ACTIONS_META_KEY, DISCRIMINATOR_META_KEY, Exposition};

/// What `tools/list` says of one action.
pub(crate) struct ActionSpec {
    pub name: String,
    pub qualified: Arc<str>,
    pub description: String,
    pub title: Option<String>,
    pub icons: Vec<Icon>,
    pub annotations: Annotations,
    /// The input schema as published (optional fields without `null`).
    pub input: Map<String, Value>,
    pub output: Option<Map<String, Value>>,
    /// The app its tool shows results in, when it names one.
    pub app: Option<AppLink>,
}

/// What `tools/list` says of one group.
pub(crate) struct GroupSpec<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub title: Option<&'a str>,
    pub icons: &'a [Icon],
    pub actions: &'a [&'a ActionSpec],
    pub app: Option<&'a AppLink>,
}

/// How one group's actions become tools: as an exposition says, or as the one action that
/// stands alone, named as it is.
#[derive(Debug, Clone)]
pub(crate) enum Layout {
    /// Grouped or flat.
    Exposed(Exposition),
    /// The group is one action, its tool named as the action.
    Standalone,
}

impl Layout {
    /// The argument that names the action, when grouped.
    pub(crate) fn discriminator(&self) -> Option<&str> {
        match self {
            Layout::Exposed(exposition) => exposition.discriminator(),
            Layout::Standalone => None,
        }
    }

    /// The name of the tool that serves `action` of `group`.
    pub(crate) fn tool_name(&self, group: &str, action: &str) -> String {
        match self {
            Layout::Exposed(exposition) => exposition.tool_name(group, action),
            Layout::Standalone => action.to_owned(),
        }
    }
}

/// The tools of one group: one grouped tool, or one flat tool per action (in action order).
pub(crate) fn group_tools(layout: &Layout, group: &GroupSpec<'_>) -> Vec<Tool> {
    match layout.discriminator() {
        Some(discriminator) => vec![grouped_tool(group, discriminator)],
        None => group
            .actions
            .iter()
            .map(|action| {
                let mut tool = flat_tool(layout.tool_name(group.name, &action.name), action);
                link_app(&mut tool, action.app.as_ref().or(group.app));
                let icons = if action.icons.is_empty() { group.icons } else { &action.icons };
                tool.icons = listed_icons(icons);
                tool
            })
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
    tool.icons = listed_icons(group.icons);
    tool.output_schema = grouped_output(members).map(Arc::new);
    let merged = merge_annotations(members);
    if merged != Annotations::default() {
        tool.annotations = Some(annotations(merged, group.title));
    }
    let mut meta = MetaObject::new();
    meta.insert(DISCRIMINATOR_META_KEY.into(), Value::String(discriminator.to_owned()));
    meta.insert(ACTIONS_META_KEY.into(), Value::Object(action_contracts(members)));
    tool.meta = Some(meta);
    link_app(&mut tool, group.app.or_else(|| only_app(members)));
    tool
}

/// The one app a group's actions name, when they name one and no other.
fn only_app<'a>(members: &[&'a ActionSpec]) -> Option<&'a AppLink> {
    let mut named = members.iter().filter_map(|action| action.app.as_ref());
    let first = named.next()?;
    named.all(|other| other.uri == first.uri).then_some(first)
}

/// Puts the tool's link to its app in `_meta.ui`.
fn link_app(tool: &mut Tool, app: Option<&AppLink>) {
    if let Some(app) = app {
        tool.meta.get_or_insert_with(MetaObject::new).insert("ui".into(), ui_meta(app));
    }
}

/// The group's description, one line per action, then which actions are read-only and which
/// destructive: the tool's merged hints cannot say it per action (one destructive action makes
/// the whole tool look destructive), and models read descriptions, not annotations.
fn grouped_description(group: &GroupSpec<'_>, discriminator: &str) -> String {
    let mut description = group.description.trim_end().to_owned();
    description.push_str("\n\nActions (set \"");
    description.push_str(discriminator);
    description.push_str("\"):");
    for action in group.actions {
        description.push_str(&format!("\n- {}: {}", action.name, action.description.trim()));
    }
    let marked = |hint: fn(&Annotations) -> Option<bool>| -> Vec<&str> {
        group.actions.iter().filter(|a| hint(&a.annotations) == Some(true)).map(|a| a.name.as_str()).collect()
    };
    let hints = [("Read-only", marked(|a| a.read_only)), ("Destructive", marked(|a| a.destructive))];
    let lines: Vec<String> = hints
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(label, names)| format!("{label}: {}.", names.join(", ")))
        .collect();
    if !lines.is_empty() {
        description.push_str("\n\n");
        description.push_str(&lines.join("\n"));
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
            if let Some(words) = schema.get("description").and_then(Value::as_str).map(str::trim)
                && !words.is_empty()
            {
                entry.described.push((&action.name, words.to_owned()));
            }
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
        object.shift_remove("description");
        object.shift_remove("title");
    }
    schema
}

/// One field of a grouped tool: its distinct schemas across actions, what each action says of
/// it, and which actions require or accept it.
#[derive(Default)]
struct MergedField<'a> {
    name: String,
    schemas: Vec<Value>,
    /// The actions that describe the field, with their words, in action order.
    described: Vec<(&'a str, String)>,
    required_by: Vec<&'a str>,
    optional_for: Vec<&'a str>,
}

impl MergedField<'_> {
    /// The field's name and schema: its one schema, or `anyOf` its distinct ones, described
    /// by what its actions say of it and which actions require it and which accept it.
    fn into_schema(self) -> (String, Value) {
        let mut usage = Vec::new();
        if !self.required_by.is_empty() {
            usage.push(format!("required by {}", self.required_by.join(", ")));
        }
        if !self.optional_for.is_empty() {
            usage.push(format!("optional for {}", self.optional_for.join(", ")));
        }
        let usage = format!("({})", usage.join("; "));
        let text = match merged_words(&self.described) {
            Some(words) => format!("{words} {usage}"),
            None => usage,
        };
        let mut merged = match self.schemas.as_slice() {
            [one] => one.clone(),
            // The branches' own words are one action's each; the field's words say them all.
            many => json!({ "anyOf": many.iter().map(without_description).collect::<Vec<_>>() }),
        };
        if let Value::Object(object) = &mut merged {
            object.insert("description".into(), Value::String(text));
        }
        (self.name, merged)
    }
}

/// What a field's actions say of it: their one text when they agree; otherwise each text
/// after the actions that say it (`create_invoice: The total. pay_invoice: The payment.`), so
/// the model reads every action's meaning, not the first action's.
fn merged_words(described: &[(&str, String)]) -> Option<String> {
    let mut texts: Vec<(Vec<&str>, &str)> = Vec::new();
    for (action, words) in described {
        match texts.iter_mut().find(|(_, text)| *text == words.as_str()) {
            Some((actions, _)) => actions.push(action),
            None => texts.push((vec![action], words)),
        }
    }
    match texts.as_slice() {
        [] => None,
        [(_, one)] => Some((*one).to_owned()),
        many => {
            let parts: Vec<String> =
                many.iter().map(|(actions, text)| format!("{}: {}", actions.join(", "), sentence(text))).collect();
            Some(parts.join(" "))
        }
    }
}

/// `text` ending as a sentence, so the next action's words do not run into it.
fn sentence(text: &str) -> String {
    if text.ends_with(['.', '!', '?']) { text.to_owned() } else { format!("{text}.") }
}

/// A schema without its `description`.
fn without_description(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(object) = &mut schema {
        object.shift_remove("description");
    }
    schema
}

/// Icons as a listing carries them: none is no `icons` key.
pub(crate) fn listed_icons(icons: &[Icon]) -> Option<Vec<Icon>> {
    (!icons.is_empty()).then(|| icons.to_vec())
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
