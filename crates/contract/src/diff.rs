//! ContractDiff: field-level comparison of two sets of contracts — what a caller calibrated
//! on the old contracts (the lockfile) meets in the new ones (the server now).
//!
//! Every delta names a dotted `field` (`tool`, `actions.get_invoice.required`,
//! `inputSchema.properties.currency.enum`, `annotations.readOnlyHint`, `arguments.required`),
//! a severity, a sentence the model can read, and the old and new values as compact JSON.

use std::collections::{BTreeMap, BTreeSet};

use mcp_fusion_wire::{ChangeSeverity, ContractChange};
use serde::Serialize;
use serde_json::{Map, Value, json};

mod schema;

use crate::contract::{ActionContract, Contracts, PromptContract, ResourceTemplateContract, ToolContract, declared};
use crate::lockfile::Lockfile;
use schema::{Owner, Side, compact, diff_schema};

use ChangeSeverity::{Breaking, Cosmetic, Risky, Safe};

/// The changes of one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolDiff {
    /// The tool.
    pub tool: String,
    /// Its changes, most severe first (then by field).
    pub deltas: Vec<ContractChange>,
}

/// The changes of one prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptDiff {
    /// The prompt.
    pub prompt: String,
    /// Its changes, most severe first (then by field).
    pub deltas: Vec<ContractChange>,
}

/// The changes of one resource template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResourceTemplateDiff {
    /// The URI template.
    pub uri_template: String,
    /// Its changes, most severe first (then by field).
    pub deltas: Vec<ContractChange>,
}

/// The changes between two sets of contracts, tool by tool (tools in name order), then prompt
/// by prompt and template by template.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ContractDiff {
    /// The tools that changed.
    pub tools: Vec<ToolDiff>,
    /// The prompts that changed.
    pub prompts: Vec<PromptDiff>,
    /// The resource templates that changed.
    pub resource_templates: Vec<ResourceTemplateDiff>,
}

impl ContractDiff {
    /// Every change, tools first.
    pub fn deltas(&self) -> impl Iterator<Item = &ContractChange> {
        let tools = self.tools.iter().flat_map(|t| &t.deltas);
        let prompts = self.prompts.iter().flat_map(|p| &p.deltas);
        tools.chain(prompts).chain(self.resource_templates.iter().flat_map(|t| &t.deltas))
    }

    /// The most severe change, if any.
    pub fn max_severity(&self) -> Option<ChangeSeverity> {
        self.deltas().map(|d| d.severity).max()
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.deltas().next().is_none()
    }

    /// The diff as `fusion diff --json` prints it:
    /// `{"max_severity": str|null, "tools": [{"tool", "deltas": [{"severity", "field",
    /// "description", "before", "after"}]}], "prompts": [{"prompt", "deltas"}],
    /// "resource_templates": [{"uri_template", "deltas"}]}`, `before` and `after` null when
    /// absent.
    ///
    /// Each delta is a [`ContractChange`] as its serde derive writes it, so this output and
    /// the `contract_changes` of `fusion parse --json` cannot drift apart.
    pub fn to_json(&self) -> Value {
        json!({
            "max_severity": self.max_severity(),
            "tools": self.tools,
            "prompts": self.prompts,
            "resource_templates": self.resource_templates,
        })
    }

    /// The changes of one action of a grouped tool (fields `actions.{action}` and
    /// `actions.{action}.…`), most severe first; for a flat tool (`action` = `None`), all of
    /// the tool's changes.
    pub fn action_changes(&self, tool: &str, action: Option<&str>) -> Vec<ContractChange> {
        let Some(diff) = self.tools.iter().find(|t| t.tool == tool) else { return Vec::new() };
        match action {
            None => diff.deltas.clone(),
            Some(action) => {
                let exact = format!("actions.{action}");
                let prefix = format!("{exact}.");
                diff.deltas.iter().filter(|d| d.field == exact || d.field.starts_with(&prefix)).cloned().collect()
            }
        }
    }
}

/// Compares the tools of `old` (the lockfile) with those of `new` (the server now).
pub fn diff_contracts(old: &Contracts, new: &Contracts) -> ContractDiff {
    let tools = diff_entries(old, new, ("Tool", "tool"), diff_tool);
    ContractDiff {
        tools: tools.into_iter().map(|(tool, deltas)| ToolDiff { tool, deltas }).collect(),
        ..ContractDiff::default()
    }
}

/// Compares everything `old` (the lockfile) locks with what `new` (the server now) states:
/// tools, prompts and resource templates.
pub fn diff_lockfiles(old: &Lockfile, new: &Lockfile) -> ContractDiff {
    let prompts = diff_entries(&old.prompts, &new.prompts, ("Prompt", "prompt"), diff_prompt);
    let templates = diff_entries(
        &old.resource_templates,
        &new.resource_templates,
        ("Resource template", "resourceTemplate"),
        diff_template,
    );
    ContractDiff {
        prompts: prompts.into_iter().map(|(prompt, deltas)| PromptDiff { prompt, deltas }).collect(),
        resource_templates: templates
            .into_iter()
            .map(|(uri_template, deltas)| ResourceTemplateDiff { uri_template, deltas })
            .collect(),
        ..diff_contracts(&old.contracts, &new.contracts)
    }
}

/// The changed entries of two maps, in key order, each with its sorted deltas: an entry gone
/// is BREAKING, a new one SAFE (field `what.1`), one on both sides is told by `compare`.
fn diff_entries<T>(
    old: &BTreeMap<String, T>,
    new: &BTreeMap<String, T>,
    (kind, field): (&str, &str),
    compare: fn(&str, &T, &T, &mut Vec<ContractChange>),
) -> Vec<(String, Vec<ContractChange>)> {
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let mut changed = Vec::new();
    for key in keys {
        let mut deltas = Vec::new();
        let quoted = Some(compact(&Value::String(key.clone())));
        match (old.get(key), new.get(key)) {
            (Some(_), None) => {
                deltas.push(change(Breaking, field.into(), format!("{kind} \"{key}\" was removed"), quoted, None))
            }
            (None, Some(_)) => {
                deltas.push(change(Safe, field.into(), format!("{kind} \"{key}\" was added"), None, quoted))
            }
            (Some(old), Some(new)) => compare(key, old, new, &mut deltas),
            (None, None) => {}
        }
        if !deltas.is_empty() {
            sort(&mut deltas);
            changed.push((key.clone(), deltas));
        }
    }
    changed
}

fn change(
    severity: ChangeSeverity,
    field: String,
    description: String,
    before: Option<String>,
    after: Option<String>,
) -> ContractChange {
    ContractChange { severity, field, description, before, after }
}

/// Most severe first, then by field; the rest only makes the order total.
fn sort(deltas: &mut Vec<ContractChange>) {
    deltas.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.field.cmp(&b.field))
            .then_with(|| a.description.cmp(&b.description))
            .then_with(|| a.before.cmp(&b.before))
            .then_with(|| a.after.cmp(&b.after))
    });
    deltas.dedup();
}

fn text_json(text: &Option<String>) -> Option<String> {
    text.as_ref().map(|t| compact(&Value::String(t.clone())))
}

/// A cosmetic change of a text (`description`, `title`).
fn words(
    what: &str,
    owner: &str,
    field: String,
    old: &Option<String>,
    new: &Option<String>,
    out: &mut Vec<ContractChange>,
) {
    if old != new {
        out.push(change(Cosmetic, field, format!("{owner} {what} changed"), text_json(old), text_json(new)));
    }
}

fn diff_tool(name: &str, old: &ToolContract, new: &ToolContract, out: &mut Vec<ContractChange>) {
    let owner = Owner::with_fields("Tool", name);
    let who = owner.title();
    words("title", &who, "title".into(), &old.title, &new.title, out);
    words("description", &who, "description".into(), &old.description, &new.description, out);
    let grouped = !old.actions.is_empty() && !new.actions.is_empty();
    if !grouped {
        // A flat or foreign tool — or one that became / stopped being grouped, whose
        // published schema is then all that both sides share.
        diff_schema(&old.input_schema, &new.input_schema, Side::Input, owner, "inputSchema", out);
        diff_output(declared(&old.output_schema), declared(&new.output_schema), owner, "outputSchema", out);
        diff_annotations(&old.annotations, &new.annotations, owner, "annotations", out);
    }
    // The tool-level schema, output and hints of a grouped tool are derived from its
    // actions: the actions are compared instead.
    let actions: BTreeSet<&String> = old.actions.keys().chain(new.actions.keys()).collect();
    for action in actions {
        let field = format!("actions.{action}");
        let quoted = Some(compact(&Value::String(action.clone())));
        match (old.actions.get(action), new.actions.get(action)) {
            (Some(_), None) => {
                out.push(change(Breaking, field, format!("Action \"{action}\" was removed"), quoted, None))
            }
            (None, Some(_)) => out.push(change(Safe, field, format!("Action \"{action}\" was added"), None, quoted)),
            (Some(old), Some(new)) => diff_action(action, &field, old, new, out),
            (None, None) => {}
        }
    }
}

fn diff_action(name: &str, prefix: &str, old: &ActionContract, new: &ActionContract, out: &mut Vec<ContractChange>) {
    let owner = Owner::with_fields("Action", name);
    words("description", &owner.title(), format!("{prefix}.description"), &old.description, &new.description, out);
    diff_schema(&old.input_schema, &new.input_schema, Side::Input, owner, prefix, out);
    let output = format!("{prefix}.outputSchema");
    diff_output(declared(&old.output_schema), declared(&new.output_schema), owner, &output, out);
    diff_annotations(&old.annotations, &new.annotations, owner, &format!("{prefix}.annotations"), out);
}

/// A prompt's words, then its arguments: by the schemas the server publishes when both sides
/// have one, else by the arguments as listed — on the same basis either way.
fn diff_prompt(name: &str, old: &PromptContract, new: &PromptContract, out: &mut Vec<ContractChange>) {
    let owner = Owner { kind: "Prompt", name, part: "argument" };
    let who = owner.title();
    words("title", &who, "title".into(), &old.title, &new.title, out);
    words("description", &who, "description".into(), &old.description, &new.description, out);
    match (declared(&old.input_schema), declared(&new.input_schema)) {
        (Some(old), Some(new)) => diff_schema(old, new, Side::Input, owner, "arguments", out),
        _ => diff_schema(&old.listed_schema(), &new.listed_schema(), Side::Input, owner, "arguments", out),
    }
}

/// A template's words, the type of what a read returns, its annotations, and its parameters'
/// schemas when both sides publish one. Its parameters' names are in its URI template, the key
/// it is compared under.
fn diff_template(
    uri: &str,
    old: &ResourceTemplateContract,
    new: &ResourceTemplateContract,
    out: &mut Vec<ContractChange>,
) {
    let owner = Owner { kind: "Resource template", name: uri, part: "parameter" };
    let who = owner.title();
    words("name", &who, "name".into(), &Some(old.name.clone()), &Some(new.name.clone()), out);
    words("title", &who, "title".into(), &old.title, &new.title, out);
    words("description", &who, "description".into(), &old.description, &new.description, out);
    let returns = match (&old.mime_type, &new.mime_type) {
        (Some(was), Some(now)) if was != now => Some(format!("{who} now returns {now} (was {was})")),
        (None, Some(now)) => Some(format!("{who} now states its MIME type: {now}")),
        (Some(was), None) => Some(format!("{who} no longer states its MIME type (was {was})")),
        _ => None,
    };
    if let Some(text) = returns {
        out.push(change(Risky, "mimeType".into(), text, text_json(&old.mime_type), text_json(&new.mime_type)));
    }
    for key in old.annotations.keys().chain(new.annotations.keys()).collect::<BTreeSet<_>>() {
        let (ov, nv) = (old.annotations.get(key), new.annotations.get(key));
        if ov != nv {
            let text = format!("{who} annotation \"{key}\" changed");
            out.push(change(Cosmetic, format!("annotations.{key}"), text, ov.map(compact), nv.map(compact)));
        }
    }
    if let (Some(old), Some(new)) = (declared(&old.input_schema), declared(&new.input_schema)) {
        diff_schema(old, new, Side::Input, owner, "parameters", out);
    }
}

fn diff_output(old: Option<&Value>, new: Option<&Value>, owner: Owner<'_>, field: &str, out: &mut Vec<ContractChange>) {
    let who = owner.title();
    match (old, new) {
        (None, None) => {}
        (None, Some(new)) => out.push(change(
            Risky,
            field.to_owned(),
            format!("{who} now declares an output schema"),
            None,
            Some(compact(new)),
        )),
        (Some(old), None) => out.push(change(
            Risky,
            field.to_owned(),
            format!("{who} no longer declares an output schema"),
            Some(compact(old)),
            None,
        )),
        (Some(old), Some(new)) => diff_schema(old, new, Side::Output, owner, field, out),
    }
}

/// How a hint turning true (or false) is judged, and what the model is told.
type Turn = (ChangeSeverity, &'static str);

/// The behaviour hints. Each is read as true only when it says `true`: a caller calibrated on
/// a read-only, non-destructive, idempotent, closed-world tool relied on each promise.
fn diff_annotations(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    owner: Owner<'_>,
    prefix: &str,
    out: &mut Vec<ContractChange>,
) {
    let who = owner.title();
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for key in keys {
        let (ov, nv) = (old.get(key), new.get(key));
        if ov == nv {
            continue;
        }
        let (was, is) = (ov == Some(&Value::Bool(true)), nv == Some(&Value::Bool(true)));
        // (severity and sentence when the hint turns true, when it turns false)
        let turns: Option<(Turn, Turn)> = match key.as_str() {
            "readOnlyHint" => Some(((Safe, "is now read-only"), (Breaking, "is no longer read-only"))),
            "destructiveHint" => Some(((Breaking, "is now destructive"), (Safe, "is no longer destructive"))),
            "idempotentHint" => Some(((Safe, "is now idempotent"), (Risky, "is no longer idempotent"))),
            "openWorldHint" => Some((
                (Risky, "now interacts with an open world of external entities"),
                (Safe, "no longer interacts with an open world of external entities"),
            )),
            _ => None,
        };
        let (severity, text) = match (turns, was, is) {
            (Some((on, _)), false, true) => (on.0, format!("{who} {}", on.1)),
            (Some((_, off)), true, false) => (off.0, format!("{who} {}", off.1)),
            (Some(_), _, _) => (Cosmetic, format!("{who} {key} changed without changing its meaning")),
            (None, _, _) if key == "title" => (Cosmetic, format!("{who} title annotation changed")),
            (None, _, _) => (Cosmetic, format!("{who} annotation \"{key}\" changed")),
        };
        out.push(change(severity, format!("{prefix}.{key}"), text, ov.map(compact), nv.map(compact)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{PromptContract, ResourceTemplateContract};
    use crate::testing::check;
    use mcp_fusion_wire::ContractAwareness;

    fn tool(contract: Value) -> ToolContract {
        serde_json::from_value(contract).expect("a contract")
    }

    fn contracts(tools: impl IntoIterator<Item = ToolContract>) -> Contracts {
        tools.into_iter().map(|t| (t.name.clone(), t)).collect()
    }

    /// A flat tool `t` with this input schema and annotations.
    fn flat(input: Value, annotations: Value) -> Contracts {
        contracts([tool(json!({"name": "t", "inputSchema": input, "annotations": annotations}))])
    }

    /// The only delta of the only tool.
    #[track_caller]
    fn only(diff: &ContractDiff) -> &ContractChange {
        assert_eq!(diff.tools.len(), 1, "{diff:#?}");
        assert_eq!(diff.tools[0].deltas.len(), 1, "{diff:#?}");
        &diff.tools[0].deltas[0]
    }

    fn invoice_input(required: Value) -> Value {
        json!({
            "type": "object",
            "properties": {"id": {"type": "string"}, "customer_id": {"type": "string"}},
            "required": required,
            "additionalProperties": false,
        })
    }

    /// The demo's `billing` tool, grouped, with `get_invoice` taking these fields.
    fn billing(get_invoice_input: Value, tool_input: Value) -> Contracts {
        contracts([
            tool(json!({
                "name": "billing",
                "description": "Billing.",
                "inputSchema": tool_input,
                "annotations": {"readOnlyHint": true},
                "actions": {
                    "get_invoice": {
                        "description": "One invoice.",
                        "inputSchema": get_invoice_input,
                        "annotations": {"readOnlyHint": true},
                    },
                    "list_invoices": {
                        "description": "All invoices.",
                        "inputSchema": {"type": "object", "properties": {}},
                        "annotations": {"readOnlyHint": true},
                    },
                },
            })),
            tool(json!({"name": "crm", "inputSchema": {"type": "object"}})),
        ])
    }

    #[test]
    fn identical_contracts_have_an_empty_diff() {
        let a = billing(invoice_input(json!(["id"])), json!({"type": "object"}));
        let diff = diff_contracts(&a, &a.clone());
        assert!(diff.is_empty());
        assert_eq!(diff.max_severity(), None);
        assert_eq!(diff.to_json(), json!({"max_severity": null, "tools": [], "prompts": [], "resource_templates": []}));
        assert!(diff_contracts(&Contracts::new(), &Contracts::new()).is_empty());
    }

    #[test]
    fn tool_removed_is_breaking_added_safe() {
        let a = billing(invoice_input(json!(["id"])), json!({"type": "object"}));
        let mut b = a.clone();
        b.remove("crm");
        let diff = diff_contracts(&a, &b);
        let c = only(&diff);
        assert_eq!(diff.tools[0].tool, "crm");
        check(c, Breaking, "tool", Some(r#""crm""#), None);
        assert_eq!(c.description, r#"Tool "crm" was removed"#);
        let diff = diff_contracts(&b, &a);
        let c = only(&diff);
        check(c, Safe, "tool", None, Some(r#""crm""#));
        assert_eq!(c.description, r#"Tool "crm" was added"#);
    }

    #[test]
    fn grouped_tool_tells_the_changed_action_only() {
        let old = billing(invoice_input(json!(["id"])), json!({"type": "object", "required": ["action"]}));
        // The derived tool-level schema changes too; only the action's own delta is told.
        let new = billing(
            invoice_input(json!(["id", "customer_id"])),
            json!({"type": "object", "required": ["action"], "description": "derived"}),
        );
        let diff = diff_contracts(&old, &new);
        let c = only(&diff);
        assert_eq!(diff.tools[0].tool, "billing");
        check(c, Breaking, "actions.get_invoice.required", Some(r#"["id"]"#), Some(r#"["customer_id","id"]"#));
        assert_eq!(c.description, r#"Action "get_invoice" now requires new fields: [customer_id]"#);
        assert_eq!(diff.max_severity(), Some(Breaking));

        // A field new to the action, and required at once: still one delta.
        let mut brand_new = invoice_input(json!(["id"]));
        brand_new["properties"].as_object_mut().unwrap().shift_remove("customer_id");
        let old = billing(brand_new, json!({"type": "object"}));
        let diff = diff_contracts(&old, &new);
        assert_eq!(only(&diff), c);

        // The block a server puts in the validation error of that action.
        let changes = diff.action_changes("billing", Some("get_invoice"));
        let block = ContractAwareness { tool: "billing".into(), action: "billing.get_invoice".into(), changes };
        assert!(
            block.render().contains(
                r#"    <change severity="BREAKING" field="actions.get_invoice.required">
      <description>Action "get_invoice" now requires new fields: [customer_id]</description>
      <before>["id"]</before>
      <after>["customer_id","id"]</after>
    </change>"#
            ),
            "{}",
            block.render()
        );
    }

    #[test]
    fn action_removed_is_breaking_added_safe() {
        let a = billing(invoice_input(json!(["id"])), json!({"type": "object"}));
        let mut b = a.clone();
        b.get_mut("billing").unwrap().actions.remove("list_invoices");
        let diff = diff_contracts(&a, &b);
        let c = only(&diff);
        check(c, Breaking, "actions.list_invoices", Some(r#""list_invoices""#), None);
        assert_eq!(c.description, r#"Action "list_invoices" was removed"#);
        let diff = diff_contracts(&b, &a);
        check(only(&diff), Safe, "actions.list_invoices", None, Some(r#""list_invoices""#));
        assert_eq!(diff.action_changes("billing", Some("list_invoices")).len(), 1);
    }

    #[test]
    fn action_fields_are_relative_to_the_action() {
        let a = billing(invoice_input(json!(["id"])), json!({"type": "object"}));
        let mut b = a.clone();
        {
            let action = b.get_mut("billing").unwrap().actions.get_mut("get_invoice").unwrap();
            action.description = Some("One invoice, by ID.".into());
            action.input_schema["properties"]["id"]["pattern"] = json!("^inv_");
            action.output_schema = Some(json!({"type": "object"}));
            action.annotations.insert("readOnlyHint".into(), json!(false));
        }
        let diff = diff_contracts(&a, &b);
        let deltas = &diff.tools[0].deltas;
        let fields: Vec<(&str, ChangeSeverity)> = deltas.iter().map(|d| (d.field.as_str(), d.severity)).collect();
        assert_eq!(
            fields,
            [
                ("actions.get_invoice.annotations.readOnlyHint", Breaking),
                ("actions.get_invoice.properties.id.pattern", Breaking),
                ("actions.get_invoice.outputSchema", Risky),
                ("actions.get_invoice.description", Cosmetic),
            ]
        );
        check(&deltas[0], Breaking, "actions.get_invoice.annotations.readOnlyHint", Some("true"), Some("false"));
        assert_eq!(deltas[0].description, r#"Action "get_invoice" is no longer read-only"#);
        check(
            &deltas[3],
            Cosmetic,
            "actions.get_invoice.description",
            Some(r#""One invoice.""#),
            Some(r#""One invoice, by ID.""#),
        );
        // And the output schema, once declared, is compared field by field.
        let mut c = b.clone();
        c.get_mut("billing").unwrap().actions.get_mut("get_invoice").unwrap().output_schema =
            Some(json!({"type": "object", "properties": {"total": {"type": "number"}}}));
        let diff = diff_contracts(&b, &c);
        let d = only(&diff);
        check(d, Risky, "actions.get_invoice.outputSchema.properties.total", None, Some(r#"{"type":"number"}"#));
    }

    #[test]
    fn action_changes_take_one_action_or_the_whole_flat_tool() {
        let mut old = billing(invoice_input(json!(["id"])), json!({"type": "object"}));
        // An action whose name is a prefix of another's.
        let get = old["billing"].actions["list_invoices"].clone();
        old.get_mut("billing").unwrap().actions.insert("get".into(), get);
        let mut new = old.clone();
        {
            let billing = new.get_mut("billing").unwrap();
            billing.actions.get_mut("get_invoice").unwrap().input_schema["required"] = json!(["id", "customer_id"]);
            billing.actions.get_mut("get").unwrap().description = Some("changed".into());
            billing.description = Some("Billing, revised.".into());
        }
        new.get_mut("crm").unwrap().input_schema =
            json!({"type": "object", "properties": {"q": {}}, "required": ["q"]});
        new.get_mut("crm").unwrap().description = Some("CRM.".into());
        let diff = diff_contracts(&old, &new);
        let fields = |changes: Vec<ContractChange>| changes.into_iter().map(|c| c.field).collect::<Vec<_>>();
        assert_eq!(fields(diff.action_changes("billing", Some("get_invoice"))), ["actions.get_invoice.required"]);
        assert_eq!(fields(diff.action_changes("billing", Some("get"))), ["actions.get.description"]);
        assert!(diff.action_changes("billing", Some("list_invoices")).is_empty());
        assert_eq!(fields(diff.action_changes("crm", None)), ["inputSchema.required", "description"]);
        assert!(diff.action_changes("nope", None).is_empty());
    }

    #[test]
    fn flat_tools_compare_schema_words_and_output() {
        let old = contracts([tool(json!({
            "name": "t",
            "title": "T",
            "description": "old",
            "inputSchema": {"type": "object", "properties": {"currency": {"enum": ["USD", "BRL"]}}},
        }))]);
        let mut new = old.clone();
        {
            let t = new.get_mut("t").unwrap();
            t.title = Some("T2".into());
            t.description = None;
            t.input_schema["properties"]["currency"]["enum"] = json!(["USD"]);
            t.output_schema = Some(json!({"type": "object"}));
        }
        let diff = diff_contracts(&old, &new);
        let deltas = &diff.tools[0].deltas;
        assert_eq!(deltas.len(), 4, "{deltas:#?}");
        check(
            &deltas[0],
            Breaking,
            "inputSchema.properties.currency.enum",
            Some(r#"["BRL","USD"]"#),
            Some(r#"["USD"]"#),
        );
        assert_eq!(deltas[0].description, r#"Field "currency" no longer accepts: ["BRL"]"#);
        check(&deltas[1], Risky, "outputSchema", None, Some(r#"{"type":"object"}"#));
        check(&deltas[2], Cosmetic, "description", Some(r#""old""#), None);
        check(&deltas[3], Cosmetic, "title", Some(r#""T""#), Some(r#""T2""#));
        // Output removed: risky too.
        let diff = diff_contracts(&new, &old);
        let removed = diff.tools[0].deltas.iter().find(|d| d.field == "outputSchema").unwrap();
        check(removed, Risky, "outputSchema", Some(r#"{"type":"object"}"#), None);
    }

    #[test]
    fn annotation_rules() {
        let cases = [
            (json!({"readOnlyHint": true}), json!({"readOnlyHint": false}), "readOnlyHint", Breaking),
            (json!({"readOnlyHint": true}), json!({}), "readOnlyHint", Breaking),
            (json!({"readOnlyHint": false}), json!({"readOnlyHint": true}), "readOnlyHint", Safe),
            (json!({}), json!({"destructiveHint": true}), "destructiveHint", Breaking),
            (json!({"destructiveHint": false}), json!({"destructiveHint": true}), "destructiveHint", Breaking),
            (json!({"destructiveHint": true}), json!({"destructiveHint": false}), "destructiveHint", Safe),
            (json!({"idempotentHint": true}), json!({"idempotentHint": false}), "idempotentHint", Risky),
            (json!({"idempotentHint": true}), json!({}), "idempotentHint", Risky),
            (json!({}), json!({"idempotentHint": true}), "idempotentHint", Safe),
            (json!({"openWorldHint": false}), json!({"openWorldHint": true}), "openWorldHint", Risky),
            (json!({}), json!({"openWorldHint": true}), "openWorldHint", Risky),
            (json!({"openWorldHint": true}), json!({"openWorldHint": false}), "openWorldHint", Safe),
            (json!({"title": "A"}), json!({"title": "B"}), "title", Cosmetic),
            (json!({}), json!({"readOnlyHint": false}), "readOnlyHint", Cosmetic),
            (json!({"vendorHint": 1}), json!({}), "vendorHint", Cosmetic),
        ];
        let schema = json!({"type": "object"});
        for (old, new, key, severity) in cases {
            let (before, after) = (old.get(key).map(compact), new.get(key).map(compact));
            let diff = diff_contracts(&flat(schema.clone(), old.clone()), &flat(schema.clone(), new.clone()));
            let c = only(&diff);
            check(c, severity, &format!("annotations.{key}"), before.as_deref(), after.as_deref());
        }
        let diff = diff_contracts(&flat(schema.clone(), json!({})), &flat(schema, json!({"destructiveHint": true})));
        assert_eq!(only(&diff).description, r#"Tool "t" is now destructive"#);
    }

    #[test]
    fn grouped_to_flat_removes_the_actions() {
        let old = billing(invoice_input(json!(["id"])), json!({"type": "object"}));
        let mut new = old.clone();
        new.get_mut("billing").unwrap().actions.clear();
        let diff = diff_contracts(&old, &new);
        let fields: Vec<&str> = diff.tools[0].deltas.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(fields, ["actions.get_invoice", "actions.list_invoices"]);
        assert!(diff.tools[0].deltas.iter().all(|d| d.severity == Breaking));
    }

    #[test]
    fn deltas_sort_by_severity_then_field_and_tools_by_name() {
        let old = contracts([
            tool(json!({"name": "b", "description": "x", "inputSchema": {"properties": {"z": {}, "a": {}}}})),
            tool(json!({"name": "a", "inputSchema": {}})),
        ]);
        let new = contracts([
            tool(json!({
                "name": "b",
                "description": "y",
                "inputSchema": {"properties": {"a": {}, "n": {}}},
                "annotations": {"idempotentHint": false},
            })),
            tool(json!({"name": "c", "inputSchema": {}})),
        ]);
        let diff = diff_contracts(&old, &new);
        let tools: Vec<&str> = diff.tools.iter().map(|t| t.tool.as_str()).collect();
        assert_eq!(tools, ["a", "b", "c"]);
        let b: Vec<(ChangeSeverity, &str)> =
            diff.tools[1].deltas.iter().map(|d| (d.severity, d.field.as_str())).collect();
        assert_eq!(
            b,
            [
                (Breaking, "inputSchema.properties.z"),
                (Safe, "inputSchema.properties.n"),
                (Cosmetic, "annotations.idempotentHint"),
                (Cosmetic, "description"),
            ]
        );
    }

    #[test]
    fn to_json_has_the_documented_shape() {
        let old = flat(json!({"properties": {"currency": {"enum": ["USD", "BRL"]}}}), json!({}));
        let new = flat(json!({"properties": {"currency": {"enum": ["USD"]}}}), json!({}));
        let diff = diff_contracts(&old, &new);
        assert!(!diff.is_empty());
        assert_eq!(
            diff.to_json(),
            json!({
                "max_severity": "BREAKING",
                "tools": [{
                    "tool": "t",
                    "deltas": [{
                        "severity": "BREAKING",
                        "field": "inputSchema.properties.currency.enum",
                        "description": "Field \"currency\" no longer accepts: [\"BRL\"]",
                        "before": "[\"BRL\",\"USD\"]",
                        "after": "[\"USD\"]",
                    }],
                }],
                "prompts": [],
                "resource_templates": [],
            })
        );
        let added = diff_contracts(&Contracts::new(), &old).to_json();
        assert_eq!(added["tools"][0]["deltas"][0]["before"], Value::Null);
        assert_eq!(added["max_severity"], "SAFE");
    }

    /// `to_json` as it was written by hand before it went through the serde derive of
    /// `ContractChange`: the two must print the same bytes.
    fn to_json_by_hand(diff: &ContractDiff) -> Value {
        let tools: Vec<Value> = diff
            .tools
            .iter()
            .map(|tool| {
                let deltas: Vec<Value> = tool
                    .deltas
                    .iter()
                    .map(|d| {
                        json!({
                            "severity": d.severity.as_str(),
                            "field": d.field,
                            "description": d.description,
                            "before": d.before,
                            "after": d.after,
                        })
                    })
                    .collect();
                json!({ "tool": tool.tool, "deltas": deltas })
            })
            .collect();
        let max_severity = diff.max_severity().map(ChangeSeverity::as_str);
        json!({ "max_severity": max_severity, "tools": tools, "prompts": [], "resource_templates": [] })
    }

    #[test]
    fn to_json_prints_the_same_bytes_as_by_hand() {
        let old = billing(invoice_input(json!(["id"])), json!({"type": "object"}));
        let mut new = billing(invoice_input(json!(["id", "customer_id"])), json!({"type": "object"}));
        new.get_mut("crm").unwrap().annotations.insert("openWorldHint".into(), json!(true));
        new.get_mut("crm").unwrap().description = Some("CRM.".into());
        let mut cosmetic = old.clone();
        cosmetic.get_mut("crm").unwrap().title = Some("C".into());
        for (a, b) in [(&old, &new), (&new, &old), (&old, &old), (&Contracts::new(), &new), (&old, &cosmetic)] {
            let diff = diff_contracts(a, b);
            let (derived, by_hand) = (diff.to_json(), to_json_by_hand(&diff));
            assert_eq!(derived, by_hand);
            assert_eq!(serde_json::to_string(&derived).unwrap(), serde_json::to_string(&by_hand).unwrap());
            assert_eq!(
                serde_json::to_string_pretty(&derived).unwrap(),
                serde_json::to_string_pretty(&by_hand).unwrap()
            );
        }
    }

    #[test]
    fn the_same_inputs_give_the_same_diff() {
        let old = billing(invoice_input(json!(["id"])), json!({"type": "object"}));
        let mut new = billing(
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "anyOf": [{"minimum": 1}, {"const": 0}]},
                    "x": {"enum": [3, "a", null, 1.5, {"k": 1}]},
                },
                "required": ["x", "id"],
            }),
            json!({}),
        );
        new.get_mut("crm").unwrap().annotations.insert("openWorldHint".into(), json!(true));
        let first = diff_contracts(&old, &new);
        assert!(!first.is_empty());
        for _ in 0..5 {
            let again = diff_contracts(&old.clone(), &new.clone());
            assert_eq!(again, first);
            assert_eq!(
                serde_json::to_string(&again.to_json()).unwrap(),
                serde_json::to_string(&first.to_json()).unwrap()
            );
        }
    }

    #[test]
    fn garbage_contracts_do_not_panic() {
        let shapes = [
            json!(null),
            json!(7),
            json!("object"),
            json!({"type": 3, "properties": "x"}),
            json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}}),
        ];
        for old in &shapes {
            for new in &shapes {
                let a = flat(old.clone(), json!({"readOnlyHint": "yes"}));
                let b = flat(new.clone(), json!({"readOnlyHint": 1}));
                let diff = diff_contracts(&a, &b);
                let _ = diff.to_json();
                assert_eq!(diff, diff_contracts(&a, &b));
            }
        }
    }

    fn prompts(contracts: impl IntoIterator<Item = Value>) -> Lockfile {
        let prompts = contracts.into_iter().map(|c| serde_json::from_value::<PromptContract>(c).expect("a prompt"));
        Lockfile::default().with_prompts(prompts.map(|p| (p.name.clone(), p)).collect())
    }

    fn templates(contracts: impl IntoIterator<Item = Value>) -> Lockfile {
        let templates = contracts
            .into_iter()
            .map(|c| serde_json::from_value::<ResourceTemplateContract>(c).expect("a resource template"));
        Lockfile::default().with_resource_templates(templates.map(|t| (t.uri_template.clone(), t)).collect())
    }

    /// Every delta of a diff as (severity, field, description).
    fn told(diff: &ContractDiff) -> Vec<(ChangeSeverity, &str, &str)> {
        diff.deltas().map(|d| (d.severity, d.field.as_str(), d.description.as_str())).collect()
    }

    #[test]
    fn prompts_follow_the_rules_of_tools() {
        let letter =
            |arguments: Value| json!({"name": "dunning_letter", "description": "A letter.", "arguments": arguments});
        let old = prompts([
            letter(json!([{"name": "id", "required": true}, {"name": "tone"}, {"name": "cc"}])),
            json!({"name": "old_prompt"}),
        ]);
        let new = prompts([
            letter(
                json!([{"name": "id", "required": true, "description": "The invoice."}, {"name": "tone", "required": true}, {"name": "note"}]),
            ),
            json!({"name": "new_prompt"}),
        ]);
        let diff = diff_lockfiles(&old, &new);
        assert!(diff.tools.is_empty() && diff.resource_templates.is_empty());
        assert_eq!(
            diff.prompts.iter().map(|p| p.prompt.as_str()).collect::<Vec<_>>(),
            ["dunning_letter", "new_prompt", "old_prompt"]
        );
        assert_eq!(
            told(&diff),
            [
                (Breaking, "arguments.properties.cc", r#"Argument "cc" was removed"#),
                (Breaking, "arguments.required", r#"Prompt "dunning_letter" now requires new arguments: [tone]"#),
                (Safe, "arguments.properties.note", r#"Optional argument "note" was added"#),
                (Cosmetic, "arguments.properties.id.description", r#"Argument "id" description changed"#),
                (Safe, "prompt", r#"Prompt "new_prompt" was added"#),
                (Breaking, "prompt", r#"Prompt "old_prompt" was removed"#),
            ]
        );
        check(&diff.prompts[0].deltas[1], Breaking, "arguments.required", Some(r#"["id"]"#), Some(r#"["id","tone"]"#));
        assert_eq!(diff.max_severity(), Some(Breaking));
        let printed = diff.to_json();
        assert_eq!(
            printed["prompts"][2],
            json!({"prompt": "old_prompt", "deltas": [{
                "severity": "BREAKING", "field": "prompt", "description": "Prompt \"old_prompt\" was removed",
                "before": "\"old_prompt\"", "after": null,
            }]})
        );
        assert!(diff_lockfiles(&new, &new.clone()).is_empty());
    }

    #[test]
    fn published_argument_schemas_are_compared_typed() {
        let schema = |tones: Value| {
            json!({"type": "object", "additionalProperties": false, "required": ["id"], "properties": {
                "id": {"type": "string"}, "tone": {"type": "string", "enum": tones},
            }})
        };
        let arguments = json!([{"name": "id", "required": true}, {"name": "tone"}]);
        let letter = |schema: Option<Value>| {
            let mut prompt = json!({"name": "dunning_letter", "arguments": arguments});
            if let Some(schema) = schema {
                prompt["inputSchema"] = schema;
            }
            prompt
        };
        let old = prompts([letter(Some(schema(json!(["friendly", "firm"]))))]);
        let new = prompts([letter(Some(schema(json!(["friendly"]))))]);
        let diff = diff_lockfiles(&old, &new);
        assert_eq!(
            told(&diff),
            [(Breaking, "arguments.properties.tone.enum", r#"Argument "tone" no longer accepts: ["firm"]"#)]
        );
        // One side without a published schema: both are read from the listed arguments, so a
        // server that starts publishing one shows no change.
        assert!(diff_lockfiles(&prompts([letter(None)]), &new).is_empty());
        assert!(diff_lockfiles(&old, &prompts([letter(None)])).is_empty());
    }

    #[test]
    fn resource_templates_are_compared_by_uri_template() {
        let invoice = |mime: &str, id: Value, priority: f64| {
            json!({
                "uriTemplate": "billing://invoices/{id}", "name": "invoice", "description": "One invoice.",
                "mimeType": mime, "annotations": {"priority": priority},
                "inputSchema": {"type": "object", "required": ["id"], "properties": {"id": id}},
            })
        };
        let old = templates([
            invoice("application/json", json!({"type": "string"}), 0.5),
            json!({"uriTemplate": "billing://customers/{id}", "name": "customer"}),
        ]);
        let new = templates([
            invoice("text/csv", json!({"type": "string", "pattern": "^inv_"}), 1.0),
            json!({"uriTemplate": "billing://customers/{id}", "name": "client"}),
            json!({"uriTemplate": "billing://payments/{id}", "name": "payment"}),
        ]);
        let diff = diff_lockfiles(&old, &new);
        assert_eq!(
            told(&diff),
            [
                (Cosmetic, "name", r#"Resource template "billing://customers/{id}" name changed"#),
                (Breaking, "parameters.properties.id.pattern", r#"Parameter "id" must now match the pattern "^inv_""#),
                (
                    Risky,
                    "mimeType",
                    r#"Resource template "billing://invoices/{id}" now returns text/csv (was application/json)"#
                ),
                (
                    Cosmetic,
                    "annotations.priority",
                    r#"Resource template "billing://invoices/{id}" annotation "priority" changed"#
                ),
                (Safe, "resourceTemplate", r#"Resource template "billing://payments/{id}" was added"#),
            ]
        );
        assert_eq!(diff.resource_templates[1].uri_template, "billing://invoices/{id}");
        assert_eq!(diff.to_json()["resource_templates"][2]["uri_template"], "billing://payments/{id}");
        let gone = diff_lockfiles(&new, &old);
        let removed = gone.resource_templates.iter().find(|t| t.uri_template == "billing://payments/{id}").unwrap();
        check(&removed.deltas[0], Breaking, "resourceTemplate", Some(r#""billing://payments/{id}""#), None);
    }
}
