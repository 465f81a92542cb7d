//! `#[action]`: the same actions as the builder's, byte for byte, with the doc comment as the
//! description, input-less and context-less handlers, and guards as arguments that refuse
//! calls as the builder's do.

use std::time::Duration;

use mcp_fusion::auth::{Caller, Identity};
use mcp_fusion::guard::RateLimit;
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::{ErrorCode, ToolError, parse};
use mcp_fusion::{Action, Ctx, FusionServer, Group, Json, NoInput, action};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct InvoiceId {
    /// The invoice id, like `inv_2026_0001`.
    #[schemars(regex(pattern = r"^inv_[a-z0-9_]+$"))]
    id: String,
}

#[derive(Serialize, JsonSchema)]
struct Invoice {
    id: String,
    amount_cents: u64,
}

struct Books {
    currency: &'static str,
}

/// Read one invoice
/// by its id.
///
/// Amounts are in cents.
#[action(read_only, title = "Get invoice")]
async fn get_invoice(_ctx: Ctx<Books>, input: InvoiceId) -> Result<Json<Invoice>, ToolError> {
    Ok(Json(Invoice { id: input.id, amount_cents: 1200 }))
}

/// The books' currency.
#[action(read_only)]
async fn currency(ctx: Ctx<Books>) -> Result<String, ToolError> {
    Ok(ctx.state().currency.to_owned())
}

/// Void an invoice. It cannot be undone.
#[action(
    destructive,
    requires_identity,
    scope = "billing:write",
    rate_limit = RateLimit::new(1, Duration::from_secs(60)).per_caller(),
    check_with = "get_invoice",
    deprecated_field("reason", "note"),
)]
async fn void_invoice(_ctx: Ctx<Books>, input: InvoiceId) -> Result<String, ToolError> {
    Ok(format!("voided {}", input.id))
}

/// Echo the id back; needs no state.
#[action(name = "echo", idempotent, open_world = false, timeout = Duration::from_millis(50))]
async fn echo_id(input: InvoiceId) -> Result<String, ToolError> {
    if input.id == "inv_slow" {
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    Ok(input.id)
}

/// Say hello.
#[action]
async fn hello() -> Result<&'static str, ToolError> {
    Ok("hello")
}

fn with_macro() -> Group<Books> {
    Group::new("billing", "Invoices.")
        .action(get_invoice())
        .action(currency())
        .action(void_invoice())
        .action(echo_id())
        .action(hello())
}

fn with_builder() -> Group<Books> {
    async fn get_invoice(_ctx: Ctx<Books>, input: InvoiceId) -> Result<Json<Invoice>, ToolError> {
        Ok(Json(Invoice { id: input.id, amount_cents: 1200 }))
    }
    async fn currency(ctx: Ctx<Books>, _: NoInput) -> Result<String, ToolError> {
        Ok(ctx.state().currency.to_owned())
    }
    async fn void_invoice(_ctx: Ctx<Books>, input: InvoiceId) -> Result<String, ToolError> {
        Ok(format!("voided {}", input.id))
    }
    async fn echo(_ctx: Ctx<Books>, input: InvoiceId) -> Result<String, ToolError> {
        Ok(input.id)
    }
    async fn hello(_ctx: Ctx<Books>, _: NoInput) -> Result<&'static str, ToolError> {
        Ok("hello")
    }
    Group::new("billing", "Invoices.")
        .action(
            Action::new("get_invoice", "Read one invoice by its id.\n\nAmounts are in cents.")
                .title("Get invoice")
                .read_only()
                .handler(get_invoice),
        )
        .action(Action::new("currency", "The books' currency.").read_only().handler(currency))
        .action(
            Action::new("void_invoice", "Void an invoice. It cannot be undone.")
                .destructive()
                .requires_identity()
                .scope("billing:write")
                .rate_limit(RateLimit::new(1, Duration::from_secs(60)).per_caller())
                .check_with("get_invoice")
                .deprecated_field("reason", Some("note"))
                .handler(void_invoice),
        )
        .action(
            Action::new("echo", "Echo the id back; needs no state.")
                .idempotent()
                .open_world(false)
                .timeout(Duration::from_millis(50))
                .handler(echo),
        )
        .action(Action::new("hello", "Say hello.").handler(hello))
}

fn server(group: Group<Books>) -> FusionServer {
    FusionServer::builder("billing", "1").group(group).build(Books { currency: "EUR" }).unwrap()
}

async fn call(server: &FusionServer, arguments: Value, caller: Caller) -> CallToolResult {
    let request = RequestInfo { caller, ..RequestInfo::default() };
    server.call("billing", arguments.as_object().cloned(), request).await
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

fn code(result: &CallToolResult) -> ErrorCode {
    assert_eq!(result.is_error, Some(true), "{}", text(result));
    parse(text(result)).error.code.clone()
}

#[test]
fn the_macro_builds_what_the_builder_builds() {
    let by_macro = serde_json::to_value(server(with_macro()).tools()).unwrap();
    let by_builder = serde_json::to_value(server(with_builder()).tools()).unwrap();
    assert_eq!(by_macro, by_builder);
    let description = by_macro[0]["description"].as_str().unwrap();
    assert!(description.contains("Read one invoice by its id.\n\nAmounts are in cents."), "{description}");
    let contract = |group| mcp_fusion::contract::contracts_of(&server(group).tools());
    assert_eq!(contract(with_macro()), contract(with_builder()));
}

// On the paused clock echo's 50 ms timeout ends its 5 s of work at once.
#[tokio::test(start_paused = true)]
async fn macro_actions_run_and_heal_as_builder_actions() {
    let server = server(with_macro());
    let anonymous = || Caller::Anonymous;
    let ana = || Caller::Authenticated(Identity::new("ana").scopes(["billing:write"]));

    let read = call(&server, json!({"action": "get_invoice", "id": "inv_1"}), anonymous()).await;
    assert_eq!(read.structured_content, Some(json!({"id": "inv_1", "amount_cents": 1200})));
    assert_eq!(text(&call(&server, json!({"action": "currency"}), anonymous()).await), "EUR");
    assert_eq!(text(&call(&server, json!({"action": "hello"}), anonymous()).await), "hello");
    assert_eq!(text(&call(&server, json!({"action": "echo", "id": "inv_2"}), anonymous()).await), "inv_2");

    // An input-less action still refuses arguments it does not take; a typed one heals a bad id.
    let extra = call(&server, json!({"action": "hello", "name": "ana"}), anonymous()).await;
    assert_eq!(code(&extra), ErrorCode::ValidationError);
    let bad = call(&server, json!({"action": "get_invoice", "id": "INV-1"}), anonymous()).await;
    assert!(text(&bad).contains("You sent: 'INV-1'. Expected a string matching the pattern"), "{}", text(&bad));

    // The guards written as arguments refuse as the builder's do.
    let void = json!({"action": "void_invoice", "id": "inv_1"});
    assert_eq!(code(&call(&server, void.clone(), anonymous()).await), ErrorCode::AuthRequired);
    let reader = Caller::Authenticated(Identity::new("bo").scopes(["billing:read"]));
    assert_eq!(code(&call(&server, void.clone(), reader).await), ErrorCode::Forbidden);
    assert_eq!(text(&call(&server, void.clone(), ana()).await), "voided inv_1");
    assert_eq!(code(&call(&server, void, ana()).await), ErrorCode::RateLimited);
    let slow = call(&server, json!({"action": "echo", "id": "inv_slow"}), anonymous()).await;
    assert_eq!(code(&slow), ErrorCode::Timeout);
}

/// An alias of the context, and a handler generic over what it returns.
type BooksCtx = Ctx<Books>;

/// The books' currency, through an alias.
#[action(read_only)]
async fn aliased(ctx: BooksCtx) -> Result<String, ToolError> {
    Ok(ctx.state().currency.to_owned())
}

/// A fixed answer of any type that serializes.
#[action]
async fn fixed<T>(_ctx: Ctx<Books>) -> Result<Json<T>, ToolError>
where
    T: Serialize + JsonSchema + Default + Send + Sync + 'static,
{
    Ok(Json(T::default()))
}

#[derive(Serialize, JsonSchema, Default)]
struct Count {
    count: u32,
}

#[tokio::test]
async fn aliases_and_generics_expand() {
    let group = Group::new("billing", "Invoices.").action(aliased()).action(fixed::<Count>());
    let server = server(group);
    assert_eq!(text(&call(&server, json!({"action": "aliased"}), Caller::Anonymous).await), "EUR");
    let count = call(&server, json!({"action": "fixed"}), Caller::Anonymous).await;
    assert_eq!(count.structured_content, Some(json!({"count": 0})));
}

#[test]
fn an_input_less_action_takes_an_empty_object() {
    let server = FusionServer::builder("billing", "1")
        .exposition(mcp_fusion::Exposition::flat())
        .group(Group::new("billing", "Invoices.").action(hello()))
        .build(Books { currency: "EUR" })
        .unwrap();
    let schema = serde_json::to_value(&server.tools()[0].input_schema).unwrap();
    assert_eq!(schema, json!({"type": "object", "properties": {}, "additionalProperties": false}));
}

/// Exports the books; only as a task.
#[action(read_only, task = required)]
async fn export() -> Result<&'static str, ToolError> {
    Ok("inv_1,inv_2")
}

#[tokio::test]
async fn a_task_argument_makes_a_task_action() {
    let server = server(Group::new("billing", "Invoices.").action(export()));
    let arguments = json!({"action": "export"}).as_object().cloned();
    let refused = server.respond("billing", arguments.clone(), RequestInfo::default()).await.unwrap_err();
    assert_eq!(refused.code.0, -32021, "{refused:?}");
    let request = RequestInfo {
        client_capabilities: Some(rmcp::model::ClientCapabilities::builder().enable_tasks().build()),
        ..RequestInfo::default()
    };
    let created = server.respond("billing", arguments, request).await.unwrap();
    assert!(matches!(created, rmcp::model::CallToolResponse::Task(_)), "{created:?}");
}

#[derive(Deserialize, JsonSchema)]
struct Region {
    /// Where to look.
    region: String,
}

/// Counts the invoices of one region, routed by it.
#[action(read_only, param_header("region", "Region"))]
async fn count_in(input: Region) -> Result<String, ToolError> {
    Ok(format!("3 in {}", input.region))
}

#[test]
fn a_param_header_argument_annotates_the_field_and_a_grouped_tool_refuses_it() {
    let server = FusionServer::builder("books", "1").action(count_in()).build(Books { currency: "EUR" }).unwrap();
    assert_eq!(server.tools()[0].input_schema["properties"]["region"]["x-mcp-header"], "Region");
    let grouped = FusionServer::builder("books", "1")
        .group(Group::new("billing", "Invoices.").action(count_in()))
        .build(Books { currency: "EUR" })
        .unwrap_err();
    assert!(grouped.to_string().contains("a grouped tool takes one object of arguments"), "{grouped}");
}
