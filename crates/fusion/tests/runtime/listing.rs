//! What the model reads before it calls, and what a rate limit tells it when it refuses: a
//! grouped tool's description and merged fields say each action's meaning and hints, and
//! `RATE_LIMITED` names the scope of the limit that refused the call.

use crate::support;

use std::num::NonZeroU32;
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_fusion::auth::{Caller, Identity};
use mcp_fusion::guard::{Decision, FailurePolicy, RateLimit, RateLimitStore, StoreError};
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, Exposition, FusionServer, Group};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::error_text;

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
            "anyOf": [{"type": ["string", "null"]}, {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 4_294_967_295u64}],
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

#[derive(Deserialize, JsonSchema)]
struct Hit {}

async fn hit(_ctx: Ctx<()>, _input: Hit) -> Result<String, ToolError> {
    Ok("hit".to_owned())
}

/// Where a test declares its limit.
#[derive(Clone, Copy)]
enum Scope {
    Action,
    Group,
    Server,
}

/// Tool `rl` with actions `hit` and `other`, tool `elsewhere` with action `hit`, and `limit`
/// declared on `rl.hit`, on the group `rl`, or on the server.
fn limited_server(scope: Scope, limit: RateLimit) -> FusionServer {
    let hit_action = || Action::new("hit", "Hit.");
    let (on_action, on_group) = match scope {
        Scope::Action => (hit_action().rate_limit(limit.clone()), Group::new("rl", "Rate limited.")),
        Scope::Group => (hit_action(), Group::new("rl", "Rate limited.").rate_limit(limit.clone())),
        Scope::Server => (hit_action(), Group::new("rl", "Rate limited.")),
    };
    let builder = match scope {
        Scope::Server => FusionServer::builder("rl", "1").rate_limit(limit),
        _ => FusionServer::builder("rl", "1"),
    };
    builder
        .group(on_group.action(on_action.handler(hit)).action(Action::new("other", "Other.").handler(hit)))
        .group(Group::new("elsewhere", "Not limited by rl's limits.").action(hit_action().handler(hit)))
        .build(())
        .unwrap()
}

async fn call(server: &FusionServer, tool: &str, action: &str, info: &RequestInfo) -> CallToolResult {
    let arguments = json!({"action": action}).as_object().cloned();
    server.call(tool, arguments, info.clone()).await
}

/// The envelope of the call of `rl.hit` that comes after the one the limit admits.
async fn refusal(server: &FusionServer, info: &RequestInfo) -> String {
    assert_eq!(call(server, "rl", "hit", info).await.is_error, Some(false));
    error_text(&call(server, "rl", "hit", info).await)
}

/// A `RATE_LIMITED` envelope of a limit of one call per 60 s.
fn rate_limited(message: &str, recovery: &str, scope: &str, counted_per: &str, retry_after: u64) -> String {
    format!(
        "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n<message>{message}</message>\n\
         <recovery>{recovery}</recovery>\n\
         <details>\n  <detail key=\"limit\">1</detail>\n  <detail key=\"window_seconds\">60</detail>\n  \
         <detail key=\"scope\">{scope}</detail>\n  <detail key=\"counted_per\">{counted_per}</detail>\n</details>\n\
         <retry_after>{retry_after} seconds</retry_after>\n</tool_error>"
    )
}

fn signed_in(subject: &str) -> RequestInfo {
    RequestInfo { caller: Caller::Authenticated(Identity::new(subject)), ..RequestInfo::default() }
}

#[tokio::test]
async fn an_action_limit_per_session_says_other_actions_are_free() {
    let server = limited_server(Scope::Action, RateLimit::new(1, Duration::from_secs(60)));
    let info = RequestInfo::default();
    assert_eq!(
        refusal(&server, &info).await,
        "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n\
         <message>Rate limit reached: 1 call per 60s for this caller on rl.hit.</message>\n\
         <recovery>Wait 60 seconds before calling rl.hit again; do not retry sooner. \
         Other actions are not limited by it.</recovery>\n\
         <details>\n  <detail key=\"limit\">1</detail>\n  <detail key=\"window_seconds\">60</detail>\n  \
         <detail key=\"scope\">action</detail>\n  <detail key=\"counted_per\">caller</detail>\n</details>\n\
         <retry_after>60 seconds</retry_after>\n</tool_error>"
    );
    assert_eq!(call(&server, "rl", "other", &info).await.is_error, Some(false), "another action gets through");
}

#[tokio::test]
async fn an_action_limit_per_identity_names_the_caller() {
    let server = limited_server(Scope::Action, RateLimit::new(1, Duration::from_secs(60)).per_identity());
    assert_eq!(
        refusal(&server, &signed_in("ana")).await,
        rate_limited(
            "Rate limit reached: 1 call per 60s for this caller on rl.hit.",
            "Wait 60 seconds before calling rl.hit again; do not retry sooner. Other actions are not limited by it.",
            "action",
            "identity",
            60,
        )
    );
}

#[tokio::test]
async fn a_group_limit_for_everyone_says_its_other_actions_will_not_help() {
    let server = limited_server(Scope::Group, RateLimit::new(1, Duration::from_secs(60)).global());
    let info = RequestInfo::default();
    assert_eq!(
        refusal(&server, &info).await,
        rate_limited(
            "Rate limit reached: 1 call per 60s for all callers together across every action of rl.",
            "Wait 60 seconds before calling any action of rl again; do not retry sooner. \
             Calling another action of rl will not help; actions outside rl are not limited by it.",
            "group",
            "global",
            60,
        )
    );
    assert_eq!(call(&server, "rl", "other", &info).await.is_error, Some(true), "the group's other action counts");
    assert_eq!(call(&server, "elsewhere", "hit", &info).await.is_error, Some(false), "another tool gets through");
}

#[tokio::test]
async fn a_group_limit_per_custom_key_names_the_key() {
    let limit = RateLimit::new(1, Duration::from_secs(60)).keyed_by(|_| "tenant-a".to_owned());
    let server = limited_server(Scope::Group, limit);
    assert_eq!(
        refusal(&server, &RequestInfo::default()).await,
        rate_limited(
            "Rate limit reached: 1 call per 60s for this call's key across every action of rl.",
            "Wait 60 seconds before calling any action of rl again; do not retry sooner. \
             Calling another action of rl will not help; actions outside rl are not limited by it.",
            "group",
            "custom",
            60,
        )
    );
}

#[tokio::test]
async fn a_server_limit_per_caller_says_nothing_else_will_help() {
    let server = limited_server(Scope::Server, RateLimit::new(1, Duration::from_secs(60)));
    let info = RequestInfo::default();
    assert_eq!(
        refusal(&server, &info).await,
        rate_limited(
            "Rate limit reached: 1 call per 60s for this caller across every tool of this server.",
            "Wait 60 seconds before calling any tool of this server again; do not retry sooner. \
             Calling another action or tool will not help.",
            "server",
            "caller",
            60,
        )
    );
    assert_eq!(call(&server, "elsewhere", "hit", &info).await.is_error, Some(true), "every tool counts");
}

#[tokio::test]
async fn a_server_limit_per_identity_names_the_caller() {
    let server = limited_server(Scope::Server, RateLimit::new(1, Duration::from_secs(60)).per_identity());
    assert_eq!(
        refusal(&server, &signed_in("ana")).await,
        rate_limited(
            "Rate limit reached: 1 call per 60s for this caller across every tool of this server.",
            "Wait 60 seconds before calling any tool of this server again; do not retry sooner. \
             Calling another action or tool will not help.",
            "server",
            "identity",
            60,
        )
    );
}

/// A store that cannot answer.
struct Down;

impl RateLimitStore for Down {
    fn check(&self, _: &str, _: NonZeroU32, _: Duration) -> BoxFuture<'static, Result<Decision, StoreError>> {
        Box::pin(async { Err(StoreError("connection refused".to_owned())) })
    }
}

#[tokio::test]
async fn a_limit_that_cannot_be_checked_says_its_scope_too() {
    let server = FusionServer::builder("rl", "1")
        .rate_limit_store(Down)
        .rate_limit_failure(FailurePolicy::Closed, Duration::from_millis(250))
        .group(
            Group::new("rl", "Rate limited.")
                .rate_limit(RateLimit::new(1, Duration::from_secs(60)))
                .action(Action::new("hit", "Hit.").handler(hit)),
        )
        .build(())
        .unwrap();
    assert_eq!(
        error_text(&call(&server, "rl", "hit", &RequestInfo::default()).await),
        rate_limited(
            "The rate limit of 1 call per 60s for this caller across every action of rl cannot be checked right now, \
             so the call was refused.",
            "Wait 5 seconds before calling any action of rl again; the limit store is recovering. \
             Calling another action of rl will not help; actions outside rl are not limited by it.",
            "group",
            "caller",
            5,
        )
    );
}

#[derive(serde::Serialize, JsonSchema)]
struct Invoice {
    id: String,
}

async fn one_invoice(_ctx: Ctx<()>, _input: mcp_fusion::NoInput) -> mcp_fusion::Result<mcp_fusion::Json<Invoice>> {
    Ok(mcp_fusion::Json(Invoice { id: "inv_1".into() }))
}

async fn invoice_ids(_ctx: Ctx<()>, _input: mcp_fusion::NoInput) -> mcp_fusion::Result<mcp_fusion::Json<Vec<String>>> {
    Ok(mcp_fusion::Json(vec!["inv_1".into()]))
}

async fn summary(_ctx: Ctx<()>, _input: mcp_fusion::NoInput) -> mcp_fusion::Result<String> {
    Ok("1 invoice".into())
}

fn mixed_outputs() -> Group<()> {
    Group::new("billing", "Invoices.")
        .action(Action::new("get_invoice", "Read the invoice.").handler(one_invoice))
        .action(Action::new("list_ids", "List the ids.").handler(invoice_ids))
        .action(Action::new("summary", "Say how many.").handler(summary))
}

#[test]
fn a_group_that_would_lose_its_output_schema_is_refused_with_the_ways_out() {
    let refused = FusionServer::builder("billing", "1.0.0").group(mixed_outputs()).build(()).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "group \"billing\" would lose its outputSchema: \"get_invoice\" return JSON objects, but \"list_ids\" returns array; a grouped tool declares an output schema only when every action returns an object. Return a struct instead (a list as one of its fields: `Json<Notes>` with `notes: Vec<Note>`), expose the actions flat (`.exposition(Exposition::flat())` on the server builder: each action its own tool and schema), or accept a tool without one: `Group::without_output_schema()`"
    );

    // Acknowledged: built, without the schema.
    let accepted =
        FusionServer::builder("billing", "1.0.0").group(mixed_outputs().without_output_schema()).build(()).unwrap();
    assert!(accepted.tools()[0].output_schema.is_none());
    // Flat: each action keeps what it declares.
    let flat = FusionServer::builder("billing", "1.0.0")
        .exposition(Exposition::flat())
        .group(mixed_outputs())
        .build(())
        .unwrap();
    let get = flat.tools().into_iter().find(|tool| tool.name == "billing_get_invoice").unwrap();
    assert!(get.output_schema.is_some());
    // Text beside objects is a choice of unstructured output: built (and logged), as is a group
    // of texts alone.
    let text_beside = Group::new("billing", "Invoices.")
        .action(Action::new("get_invoice", "Read the invoice.").handler(one_invoice))
        .action(Action::new("summary", "Say how many.").handler(summary));
    assert!(FusionServer::builder("billing", "1.0.0").group(text_beside).build(()).is_ok());
    let texts = Group::new("billing", "Invoices.").action(Action::new("summary", "Say how many.").handler(summary));
    assert!(FusionServer::builder("billing", "1.0.0").group(texts).build(()).is_ok());
}
