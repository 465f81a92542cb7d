//! What the model reads before it calls: a grouped tool's description and merged fields say
//! each action's meaning and hints.

use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, Exposition, FusionServer, Group};
use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Arguments of `list_invoices`.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct ListInvoices {
    /// How many invoices per page, 1 to 100.
    limit: Option<u32>,
}

/// Arguments of `create_invoice`.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct CreateInvoice {
    /// The invoice total in cents of its currency (1250 = 12.50).
    amount_cents: i64,
    /// The currency of the amount.
    currency: String,
}

/// Arguments of `pay_invoice`.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct PayInvoice {
    /// The invoice id, like `inv_2026_0001`.
    id: String,
    /// The payment in cents of the invoice's currency: at most the open balance; partial payments add up.
    amount_cents: i64,
    /// The bank's reference of the payment
    reference: Option<String>,
}

/// Arguments of `get_invoice`.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct GetInvoice {
    /// The invoice id, like `inv_2026_0001`.
    id: String,
}

/// Arguments of `void_invoice`.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct VoidInvoice {
    /// The invoice id, like `inv_2026_0001`.
    id: String,
    /// The support ticket that asked for the void.
    reference: u32,
}

async fn done<I>(_ctx: Ctx<()>, _input: I) -> Result<String, ToolError> {
    Ok("done".to_owned())
}

/// Invoices: two read-only actions, two that write, one destructive; `amount_cents` means a
/// different amount to two of them, `id` the same invoice to three, and `reference` has a
/// different type for each of its two.
fn invoices() -> Group<()> {
    Group::new("invoices", "Invoices of the demo company.")
        .title("Invoices")
        .action(Action::new("list_invoices", "List invoices.").read_only().handler(done::<ListInvoices>))
        .action(Action::new("get_invoice", "Read one invoice.").read_only().handler(done::<GetInvoice>))
        .action(Action::new("create_invoice", "Create an open invoice.").handler(done::<CreateInvoice>))
        .action(Action::new("pay_invoice", "Record a payment.").handler(done::<PayInvoice>))
        .action(
            Action::new("void_invoice", "Void an open invoice for good.").destructive().handler(done::<VoidInvoice>),
        )
}

fn tools(exposition: Exposition) -> Vec<Tool> {
    FusionServer::builder("invoices", "1").exposition(exposition).group(invoices()).build(()).unwrap().tools()
}

fn grouped() -> Tool {
    let mut tools = tools(Exposition::default());
    assert_eq!(tools.len(), 1);
    tools.remove(0)
}

fn description(schema: &Value) -> &str {
    schema["description"].as_str().expect("a description")
}

#[test]
fn a_field_two_actions_describe_differently_says_each_meaning() {
    let tool = grouped();
    assert_eq!(
        description(&tool.input_schema["properties"]["amount_cents"]),
        "create_invoice: The invoice total in cents of its currency (1250 = 12.50). \
         pay_invoice: The payment in cents of the invoice's currency: at most the open balance; partial payments add up. \
         (required by create_invoice, pay_invoice)"
    );
}

#[test]
fn a_field_its_actions_describe_alike_keeps_its_one_description() {
    let tool = grouped();
    assert_eq!(
        description(&tool.input_schema["properties"]["id"]),
        "The invoice id, like `inv_2026_0001`. (required by get_invoice, pay_invoice, void_invoice)"
    );
    assert_eq!(
        description(&tool.input_schema["properties"]["limit"]),
        "How many invoices per page, 1 to 100. (optional for list_invoices)"
    );
}

#[test]
fn distinct_schemas_under_any_of_say_each_meaning_once() {
    let tool = grouped();
    assert_eq!(
        tool.input_schema["properties"]["reference"],
        json!({
            "anyOf": [{"type": "string"}, {"type": "integer", "format": "uint32", "minimum": 0}],
            "description": "pay_invoice: The bank's reference of the payment. \
                            void_invoice: The support ticket that asked for the void. \
                            (required by void_invoice; optional for pay_invoice)",
        })
    );
}

#[test]
fn the_grouped_description_says_which_actions_are_read_only_and_which_destructive() {
    assert_eq!(
        grouped().description.as_deref(),
        Some(
            "Invoices of the demo company.\n\n\
             Actions (set \"action\"):\n\
             - list_invoices: List invoices.\n\
             - get_invoice: Read one invoice.\n\
             - create_invoice: Create an open invoice.\n\
             - pay_invoice: Record a payment.\n\
             - void_invoice: Void an open invoice for good.\n\n\
             Read-only: list_invoices, get_invoice.\n\
             Destructive: void_invoice."
        )
    );
}

#[test]
fn a_group_without_hints_says_none() {
    let plain = Group::new("notes", "Notes.").action(Action::new("add", "Add a note.").handler(done::<GetInvoice>));
    let tools = FusionServer::builder("notes", "1").group(plain).build(()).unwrap().tools();
    assert_eq!(tools[0].description.as_deref(), Some("Notes.\n\nActions (set \"action\"):\n- add: Add a note."));
    assert_eq!(tools[0].annotations, None);
}

#[test]
fn merged_annotations_are_conservative() {
    // Read-only only if every action is; destructive if any is; idempotent and open-world
    // unknown, since no action says.
    assert_eq!(
        serde_json::to_value(grouped().annotations).unwrap(),
        json!({"title": "Invoices", "readOnlyHint": false, "destructiveHint": true})
    );
}

#[test]
fn flat_exposition_gives_each_action_its_own_hints() {
    let flat = tools(Exposition::flat());
    let hints: Vec<(String, Option<String>, Value)> = flat
        .iter()
        .map(|t| (t.name.to_string(), t.description.as_deref().map(str::to_owned), json!(t.annotations)))
        .collect();
    let read_only = json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true});
    assert_eq!(
        hints,
        [
            ("invoices_list_invoices".into(), Some("List invoices.".into()), read_only.clone()),
            ("invoices_get_invoice".into(), Some("Read one invoice.".into()), read_only),
            ("invoices_create_invoice".into(), Some("Create an open invoice.".into()), Value::Null),
            ("invoices_pay_invoice".into(), Some("Record a payment.".into()), Value::Null),
            (
                "invoices_void_invoice".into(),
                Some("Void an open invoice for good.".into()),
                json!({"readOnlyHint": false, "destructiveHint": true}),
            ),
        ]
    );
}
