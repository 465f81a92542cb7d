//! The runtime end to end: a real rmcp client over an in-process duplex transport, one test per
//! row of what the runtime promises, each asserting the exact envelope.

use crate::support;

use mcp_fusion::contract::{PublishedRoute, published_route};
use mcp_fusion::middleware::{Call, Next};
use mcp_fusion::wire::{ErrorCode, ToolError, parse};
use mcp_fusion::{Action, Ctx, Exposition, FieldIssue, FusionServer, Group, Json, Validate, Validated, from_fn};
use mcp_fusion_wire::FieldPath;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use support::{Client, call, connect, error_text, field_lines, texts, validation_envelope};

#[derive(Deserialize, JsonSchema)]
struct Echo {
    text: String,
}

#[derive(Serialize, JsonSchema)]
struct Echoed {
    text: String,
    length: usize,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    Green,
    Blue,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Item {
    #[schemars(regex(pattern = r"^SKU-[0-9]{4}$"))]
    sku: String,
    #[schemars(range(min = 1))]
    qty: u32,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Order {
    #[schemars(email)]
    customer_email: String,
    /// A short code.
    #[schemars(length(min = 2, max = 4))]
    code: String,
    #[schemars(range(min = 1, max = 5))]
    quantity: u32,
    color: Color,
    #[schemars(length(max = 1))]
    note: Option<String>,
    #[schemars(length(min = 1))]
    items: Vec<Item>,
    #[schemars(length(max = 2))]
    tags: Option<Vec<String>>,
    #[schemars(extend("format" = "date"))]
    deliver_on: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Login {
    user: String,
    #[schemars(extend("writeOnly" = true), length(min = 8))]
    password: String,
    #[schemars(length(min = 8))]
    token: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Tool,
    Warning,
    OkWithWarning,
    Anyhow,
    Io,
    Panic,
}

#[derive(Deserialize, JsonSchema)]
struct Fail {
    mode: Mode,
}

#[derive(Deserialize, JsonSchema)]
struct Guarded {
    tenant: String,
}

#[derive(Deserialize, JsonSchema)]
struct Refund {
    amount_cents: u64,
    max_cents: u64,
}

impl Validate for Refund {
    fn validate(&self) -> Vec<FieldIssue> {
        if self.amount_cents <= self.max_cents {
            return vec![];
        }
        vec![FieldIssue::new(
            FieldPath::root().key("amount_cents"),
            "Refund exceeds the limit",
            format!("at most {} cents", self.max_cents),
        )]
    }
}

struct Shop {
    greeting: &'static str,
}

async fn echo(ctx: Ctx<Shop>, input: Echo) -> Result<Json<Echoed>, ToolError> {
    let text = format!("{} {}", ctx.state().greeting, input.text);
    Ok(Json(Echoed { length: text.len(), text }))
}

async fn order(_ctx: Ctx<Shop>, _input: Order) -> Result<String, ToolError> {
    Ok("ordered".into())
}

async fn login(_ctx: Ctx<Shop>, _input: Login) -> Result<String, ToolError> {
    Ok("welcome".into())
}

async fn refund(_ctx: Ctx<Shop>, Validated(input): Validated<Refund>) -> Result<String, ToolError> {
    Ok(format!("refunded {}", input.amount_cents))
}

async fn fail(ctx: Ctx<Shop>, input: Fail) -> anyhow::Result<String> {
    match input.mode {
        Mode::Tool => Err(ToolError::not_found("No order with that ID")
            .suggest("List orders first, then retry with a real ID")
            .actions(["shop.list_orders", "shop.search"])
            .detail("requestedId", "ord_9")
            .detail("attempts", 3)
            .retry_after(30)
            .critical()
            .into()),
        Mode::Warning => Err(ToolError::deprecated("shop.fail is deprecated.")
            .suggest("Use shop.echo.")
            .actions(["shop.echo"])
            .into()),
        Mode::OkWithWarning => {
            ctx.warn(
                ToolError::new("RESULT_TRUNCATED", "Only the first 10 orders are shown.")
                    .suggest("Paginate with a cursor."),
            );
            Ok("partial".into())
        }
        Mode::Anyhow => Err(anyhow::anyhow!("connection reset").context("loading orders")),
        Mode::Io => Err(std::io::Error::other("disk full").into()),
        Mode::Panic => panic!("handler exploded"),
    }
}

async fn guarded(_ctx: Ctx<Shop>, input: Guarded) -> Result<String, ToolError> {
    Ok(format!("hello {}", input.tenant))
}

fn shop() -> Group<Shop> {
    let tenant_gate = from_fn(|call: Call, next: Next| async move {
        let tenant = call.input::<Guarded>().map(|g| g.tenant.clone()).unwrap_or_default();
        match tenant.as_str() {
            "blocked" => Err(anyhow::Error::from(
                ToolError::forbidden("Tenant \"blocked\" may not call shop.guarded.").suggest("Use your own tenant."),
            )),
            "broken" => Err(anyhow::anyhow!("tenant directory unreachable")),
            "explode" => panic!("middleware exploded"),
            _ => next.run(call).await.map_err(anyhow::Error::from),
        }
    });
    Group::new("shop", "A test shop.")
        .action(Action::new("echo", "Echo the text with a greeting.").read_only().handler(echo))
        .action(Action::new("order", "Place an order.").handler(order))
        .action(Action::new("login", "Log in.").sensitive("token").handler(login))
        .action(Action::new("refund", "Refund an amount.").handler(refund))
        .action(Action::new("fail", "Fail on purpose.").handler(fail))
        .action(Action::new("guarded", "Behind a tenant gate.").middleware(tenant_gate).handler(guarded))
}

fn server() -> FusionServer {
    FusionServer::builder("shop-server", "1.0.0").group(shop()).build(Shop { greeting: "hi" }).unwrap()
}

async fn client() -> Client {
    connect(server()).await
}

fn valid_order() -> serde_json::Value {
    json!({
        "action": "order",
        "customer_email": "ana@example.com",
        "code": "AB",
        "quantity": 2,
        "color": "red",
        "items": [{"sku": "SKU-0001", "qty": 1}],
    })
}

fn with(mut base: serde_json::Value, key: &str, value: serde_json::Value) -> serde_json::Value {
    base[key] = value;
    base
}

fn without(mut base: serde_json::Value, key: &str) -> serde_json::Value {
    base.as_object_mut().unwrap().remove(key);
    base
}

async fn order_fields(client: &Client, arguments: serde_json::Value) -> Vec<String> {
    let text = error_text(&call(client, "shop", arguments).await);
    assert!(text.starts_with("<validation_error action=\"shop.order\">\n"), "{text}");
    assert!(text.ends_with(
        "<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>"
    ));
    field_lines(&text).into_iter().map(str::to_owned).collect()
}

#[tokio::test]
async fn valid_call_returns_structured_content() {
    let client = client().await;
    let result = call(&client, "shop", json!({"action": "echo", "text": "there"})).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(result.structured_content, Some(json!({"text": "hi there", "length": 8})));
    assert_eq!(texts(&result), [r#"{"text":"hi there","length":8}"#]);
    let plain = call(&client, "shop", valid_order()).await;
    assert_eq!((plain.is_error, texts(&plain)), (Some(false), vec!["ordered".to_owned()]));
}

#[tokio::test]
async fn tools_list_shows_the_group_with_its_discriminator() {
    let client = client().await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    let tool = &tools[0];
    assert_eq!(tool.name, "shop");
    let schema = serde_json::Value::Object((*tool.input_schema).clone());
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["action"]));
    assert_eq!(schema["properties"]["action"]["enum"], json!(["echo", "order", "login", "refund", "fail", "guarded"]));
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["properties"]["code"]["description"], "A short code. (required by order)");
    assert_eq!(schema["properties"]["note"]["description"], "(optional for order)");
    let meta = tool.meta.as_ref().unwrap();
    assert_eq!(meta["fusion/actions"]["echo"]["inputSchema"]["required"], json!(["text"]));
    let actions = ["echo", "order", "login", "refund", "fail", "guarded"].map(String::from).to_vec();
    assert_eq!(published_route(tool), Some(PublishedRoute::Grouped { discriminator: "action".into(), actions }));
    assert!(tool.description.as_deref().unwrap().contains("\n- refund: Refund an amount."));
}

#[tokio::test]
async fn missing_discriminator() {
    let client = client().await;
    let text = error_text(&call(&client, "shop", json!({"text": "x"})).await);
    assert_eq!(
        text,
        "<tool_error code=\"MISSING_DISCRIMINATOR\" severity=\"error\">\n\
         <message>Missing the \"action\" field: tool \"shop\" needs it to pick an action.</message>\n\
         <recovery>Add \"action\" set to one of the available actions without the \"shop.\" prefix (like \"echo\") and call again.</recovery>\n\
         <available_actions>\n  <action>shop.echo</action>\n  <action>shop.order</action>\n  <action>shop.login</action>\n  \
         <action>shop.refund</action>\n  <action>shop.fail</action>\n  <action>shop.guarded</action>\n</available_actions>\n\
         </tool_error>"
    );
    let empty = parse(&error_text(&call(&client, "shop", json!({"action": ""})).await));
    assert_eq!(empty.error.code, ErrorCode::MissingDiscriminator);
    assert_eq!(empty.error.message, "The \"action\" field is empty: tool \"shop\" needs it to pick an action.");
}

#[tokio::test]
async fn non_string_discriminator() {
    let client = client().await;
    let envelope = parse(&error_text(&call(&client, "shop", json!({"action": 42})).await));
    assert_eq!(envelope.error.code, ErrorCode::MissingDiscriminator);
    assert_eq!(envelope.error.message, "The \"action\" field must be a string naming an action, but you sent 42.");
    assert_eq!(envelope.error.available_actions.len(), 6);
}

#[tokio::test]
async fn unknown_action_with_did_you_mean() {
    let client = client().await;
    let text = error_text(&call(&client, "shop", json!({"action": "ehco", "text": "x"})).await);
    assert_eq!(
        text,
        "<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">\n\
         <message>Unknown action 'ehco' for tool \"shop\".</message>\n\
         <recovery>Did you mean \"shop.echo\"? Call tool \"shop\" with \"action\": \"echo\".</recovery>\n\
         <available_actions>\n  <action>shop.echo</action>\n  <action>shop.order</action>\n  <action>shop.login</action>\n  \
         <action>shop.refund</action>\n  <action>shop.fail</action>\n  <action>shop.guarded</action>\n</available_actions>\n\
         </tool_error>"
    );
    let far = parse(&error_text(&call(&client, "shop", json!({"action": "zzzzzz"})).await));
    assert_eq!(
        far.error.recovery.as_deref(),
        Some("Call tool \"shop\" with \"action\" set to one of the available actions.")
    );
}

#[tokio::test]
async fn qualified_action_names_are_understood() {
    let client = client().await;
    let result = call(&client, "shop", json!({"action": "shop.echo", "text": "q"})).await;
    assert_eq!(result.is_error, Some(false));
}

#[tokio::test]
async fn unknown_tool_names_the_closest() {
    let client = client().await;
    let text = error_text(&call(&client, "shpo", json!({})).await);
    assert_eq!(
        text,
        "<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">\n\
         <message>Unknown tool 'shpo'.</message>\n\
         <recovery>Did you mean \"shop\"? Call one of the available tools.</recovery>\n\
         <available_actions>\n  <action>shop</action>\n</available_actions>\n\
         </tool_error>"
    );
}

/// An rmcp client of `server` on MCP 2026-07-28: it discovers rather than initializes.
async fn client_on_2026_07_28(server: FusionServer) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(server, server_io).await {
            let _ = running.waiting().await;
        }
    });
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    ().serve_with_lifecycle(client_io, lifecycle).await.unwrap()
}

#[tokio::test]
async fn on_2026_07_28_an_unknown_tool_is_invalid_params_that_names_the_closest() {
    use rmcp::model::CallToolRequestParams;
    let on_2026 = client_on_2026_07_28(server()).await;
    let refused = on_2026.call_tool(CallToolRequestParams::new("shpo")).await.unwrap_err();
    let rmcp::ServiceError::McpError(error) = refused else { panic!("no JSON-RPC error: {refused}") };
    assert_eq!(error.code.0, -32602);
    assert_eq!(error.message, "Unknown tool 'shpo'. Did you mean \"shop\"? Call one of the available tools.");
    assert_eq!(
        error.data,
        Some(json!({
            "code": "UNKNOWN_ACTION",
            "severity": "error",
            "message": "Unknown tool 'shpo'.",
            "recovery": "Did you mean \"shop\"? Call one of the available tools.",
            "available_actions": ["shop"],
        }))
    );
    // The same error as the envelope of a result on the versions before.
    let read = ToolError::from_protocol_error(error.code.0, &error.message, error.data.as_ref()).unwrap();
    let before = client().await;
    assert_eq!(read.render(), error_text(&call(&before, "shpo", json!({})).await));
    // A known tool's unknown action is about its arguments: the tool's error, as before.
    let text = error_text(&call(&on_2026, "shop", json!({"action": "ehco"})).await);
    assert_eq!(parse(&text).error.code, ErrorCode::UnknownAction);
}

#[tokio::test]
async fn missing_required_field() {
    let client = client().await;
    assert_eq!(
        order_fields(&client, without(valid_order(), "customer_email")).await,
        [
            "<field name=\"customer_email\">Missing required field. You sent: (missing). Expected a valid email address, like name@example.com.</field>"
        ]
    );
}

#[tokio::test]
async fn wrong_type() {
    let client = client().await;
    assert_eq!(
        order_fields(&client, with(valid_order(), "quantity", json!("two"))).await,
        ["<field name=\"quantity\">Invalid type. You sent: 'two'. Expected an integer from 1 to 5.</field>"]
    );
}

#[tokio::test]
async fn bad_email_and_date() {
    let client = client().await;
    let args = with(with(valid_order(), "customer_email", json!("not-an-email")), "deliver_on", json!("31/01/2026"));
    assert_eq!(
        order_fields(&client, args).await,
        [
            "<field name=\"customer_email\">Invalid email format. You sent: 'not-an-email'. Expected a valid email address, like name@example.com.</field>",
            "<field name=\"deliver_on\">Invalid date format. You sent: '31/01/2026'. Expected a date as YYYY-MM-DD, like 2026-01-31.</field>",
        ]
    );
}

#[tokio::test]
async fn pattern() {
    let client = client().await;
    let args = with(valid_order(), "items", json!([{"sku": "sku-1", "qty": 1}]));
    assert_eq!(
        order_fields(&client, args).await,
        [
            "<field name=\"items.0.sku\">Does not match the required pattern. You sent: 'sku-1'. Expected a string matching the pattern /^SKU-[0-9]{4}$/.</field>"
        ]
    );
}

#[tokio::test]
async fn enum_lists_the_allowed_values() {
    let client = client().await;
    assert_eq!(
        order_fields(&client, with(valid_order(), "color", json!("purple"))).await,
        ["<field name=\"color\">Invalid value. You sent: 'purple'. Expected one of 'red', 'green', 'blue'.</field>"]
    );
}

#[tokio::test]
async fn bounds_singular_and_plural() {
    let client = client().await;
    let cases = [
        ("code", json!("A"), "<field name=\"code\">Too short. You sent: 'A'. Expected at least 2 characters.</field>"),
        (
            "code",
            json!("ABCDE"),
            "<field name=\"code\">Too long. You sent: 'ABCDE'. Expected at most 4 characters.</field>",
        ),
        ("note", json!("ab"), "<field name=\"note\">Too long. You sent: 'ab'. Expected at most 1 character.</field>"),
        ("quantity", json!(0), "<field name=\"quantity\">Too small. You sent: 0. Expected at least 1.</field>"),
        ("quantity", json!(6), "<field name=\"quantity\">Too big. You sent: 6. Expected at most 5.</field>"),
        (
            "items",
            json!([]),
            "<field name=\"items\">Too few items. You sent: array(0). Expected at least 1 item.</field>",
        ),
        (
            "tags",
            json!(["a", "b", "c"]),
            "<field name=\"tags\">Too many items. You sent: array(3). Expected at most 2 items.</field>",
        ),
    ];
    for (key, value, line) in cases {
        assert_eq!(order_fields(&client, with(valid_order(), key, value)).await, [line], "{key}");
    }
}

#[tokio::test]
async fn unknown_key_with_did_you_mean() {
    let client = client().await;
    let args = with(without(valid_order(), "quantity"), "quantiy", json!(2));
    assert_eq!(
        order_fields(&client, args).await,
        [
            "<field name=\"quantity\">Missing required field. You sent: (missing). Expected an integer from 1 to 5.</field>",
            "<field name=\"quantiy\">Unrecognized key 'quantiy' (did you mean 'quantity'?). You sent: 2. Expected only known fields; rename it to 'quantity' or remove it.</field>",
        ]
    );
    let far = order_fields(&client, with(valid_order(), "zzz", json!(true))).await;
    assert_eq!(
        far,
        [
            "<field name=\"zzz\">Unrecognized key 'zzz'. You sent: true. Expected only the known fields 'customer_email', 'code' (a short code), 'quantity', 'color', 'note', 'items', 'tags', 'deliver_on'; remove it.</field>"
        ]
    );
}

#[tokio::test]
async fn several_problems_in_a_stable_order() {
    let client = client().await;
    let args = json!({
        "action": "order",
        "customer_email": "nope",
        "code": "ABCDEFG",
        "color": "teal",
        "items": [{"sku": "SKU-0001", "qty": 1}, {"sku": "SKU-0002", "qty": 0}],
    });
    let expected = [
        "<field name=\"code\">Too long. You sent: 'ABCDEFG'. Expected at most 4 characters.</field>",
        "<field name=\"color\">Invalid value. You sent: 'teal'. Expected one of 'red', 'green', 'blue'.</field>",
        "<field name=\"customer_email\">Invalid email format. You sent: 'nope'. Expected a valid email address, like name@example.com.</field>",
        "<field name=\"items.1.qty\">Too small. You sent: 0. Expected at least 1.</field>",
        "<field name=\"quantity\">Missing required field. You sent: (missing). Expected an integer from 1 to 5.</field>",
    ];
    for _ in 0..3 {
        assert_eq!(order_fields(&client, args.clone()).await, expected);
    }
    let text = error_text(&call(&client, "shop", args).await);
    assert_eq!(text, validation_envelope("shop.order", &expected));
}

#[tokio::test]
async fn nested_path_and_array_index() {
    let client = client().await;
    let args = with(valid_order(), "items", json!([{"sku": "SKU-0001", "qty": 1}, {"sku": "SKU-0002"}]));
    assert_eq!(
        order_fields(&client, args).await,
        [
            "<field name=\"items.1.qty\">Missing required field. You sent: (missing). Expected an integer of at least 1.</field>"
        ]
    );
}

#[tokio::test]
async fn sensitive_values_are_redacted() {
    let client = client().await;
    let text = error_text(
        &call(&client, "shop", json!({"action": "login", "user": "ana", "password": "hunter2", "token": "t0k"})).await,
    );
    assert_eq!(
        text,
        validation_envelope(
            "shop.login",
            &[
                "<field name=\"password\">Too short. You sent: (redacted). Expected at least 8 characters.</field>",
                "<field name=\"token\">Too short. You sent: (redacted). Expected at least 8 characters.</field>",
            ]
        )
    );
    assert!(!text.contains("hunter2") && !text.contains("t0k"));
}

#[tokio::test]
async fn custom_rules_heal_like_schema_rules() {
    let client = client().await;
    let text =
        error_text(&call(&client, "shop", json!({"action": "refund", "amount_cents": 900, "max_cents": 500})).await);
    assert_eq!(
        text,
        validation_envelope(
            "shop.refund",
            &[
                "<field name=\"amount_cents\">Refund exceeds the limit. You sent: 900. Expected at most 500 cents.</field>"
            ]
        )
    );
    let ok = call(&client, "shop", json!({"action": "refund", "amount_cents": 100, "max_cents": 500})).await;
    assert_eq!(texts(&ok), ["refunded 100"]);
}

#[tokio::test]
async fn tool_error_reaches_the_model_unchanged() {
    let client = client().await;
    let text = error_text(&call(&client, "shop", json!({"action": "fail", "mode": "tool"})).await);
    assert_eq!(
        text,
        "<tool_error code=\"NOT_FOUND\" severity=\"critical\">\n\
         <message>No order with that ID</message>\n\
         <recovery>List orders first, then retry with a real ID</recovery>\n\
         <available_actions>\n  <action>shop.list_orders</action>\n  <action>shop.search</action>\n</available_actions>\n\
         <details>\n  <detail key=\"requestedId\">ord_9</detail>\n  <detail key=\"attempts\">3</detail>\n</details>\n\
         <retry_after>30 seconds</retry_after>\n\
         </tool_error>"
    );
}

#[tokio::test]
async fn warning_alone_is_not_an_error() {
    let client = client().await;
    let result = call(&client, "shop", json!({"action": "fail", "mode": "warning"})).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        texts(&result),
        ["<tool_error code=\"DEPRECATED\" severity=\"warning\">\n<message>shop.fail is deprecated.</message>\n\
          <recovery>Use shop.echo.</recovery>\n<available_actions>\n  <action>shop.echo</action>\n</available_actions>\n</tool_error>"]
    );
}

#[tokio::test]
async fn warning_rides_a_success() {
    let client = client().await;
    let result = call(&client, "shop", json!({"action": "fail", "mode": "ok_with_warning"})).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        texts(&result),
        [
            "partial",
            "<tool_error code=\"RESULT_TRUNCATED\" severity=\"warning\">\n<message>Only the first 10 orders are shown.</message>\n\
             <recovery>Paginate with a cursor.</recovery>\n</tool_error>"
        ]
    );
}

const WRAPPED_RECOVERY: &str = "<recovery>Do not blindly retry this call. Check the arguments, try another action, or report the failure to the user.</recovery>";

#[tokio::test]
async fn anyhow_and_io_errors_are_wrapped() {
    let client = client().await;
    let text = error_text(&call(&client, "shop", json!({"action": "fail", "mode": "anyhow"})).await);
    assert_eq!(
        text,
        format!(
            "<tool_error code=\"INTERNAL_ERROR\" severity=\"critical\">\n<message>[shop.fail] loading orders</message>\n{WRAPPED_RECOVERY}\n</tool_error>"
        )
    );
    let io = parse(&error_text(&call(&client, "shop", json!({"action": "fail", "mode": "io"})).await));
    assert_eq!(io.error.message, "[shop.fail] disk full");
}

#[tokio::test]
async fn masked_internal_errors_show_an_incident_only() {
    let server = FusionServer::builder("shop-server", "1.0.0")
        .group(shop())
        .mask_internal_errors(true)
        .build(Shop { greeting: "hi" })
        .unwrap();
    let client = connect(server).await;
    for mode in ["anyhow", "panic"] {
        let envelope = parse(&error_text(&call(&client, "shop", json!({"action": "fail", "mode": mode})).await));
        let message = &envelope.error.message;
        let incident = message
            .strip_prefix("[shop.fail] Internal error (incident ")
            .and_then(|rest| rest.strip_suffix(").").map(str::to_owned))
            .unwrap_or_else(|| panic!("{message}"));
        assert_eq!(incident.len(), 12);
        assert!(incident.bytes().all(|b| b.is_ascii_hexdigit()), "{incident}");
        assert!(!message.contains("connection reset") && !message.contains("exploded"));
    }
    // Branded errors are never masked.
    let tool = parse(&error_text(&call(&client, "shop", json!({"action": "fail", "mode": "tool"})).await));
    assert_eq!(tool.error.message, "No order with that ID");
}

#[tokio::test]
async fn panic_is_wrapped_and_the_server_keeps_serving() {
    let client = client().await;
    let text = error_text(&call(&client, "shop", json!({"action": "fail", "mode": "panic"})).await);
    assert_eq!(
        text,
        format!(
            "<tool_error code=\"INTERNAL_ERROR\" severity=\"critical\">\n<message>[shop.fail] panicked: handler exploded</message>\n{WRAPPED_RECOVERY}\n</tool_error>"
        )
    );
    let next = call(&client, "shop", json!({"action": "echo", "text": "still here"})).await;
    assert_eq!(next.is_error, Some(false));
}

#[tokio::test]
async fn middleware_short_circuits_and_fails_like_handlers() {
    let client = client().await;
    let blocked = error_text(&call(&client, "shop", json!({"action": "guarded", "tenant": "blocked"})).await);
    assert_eq!(
        blocked,
        "<tool_error code=\"FORBIDDEN\" severity=\"error\">\n<message>Tenant \"blocked\" may not call shop.guarded.</message>\n\
         <recovery>Use your own tenant.</recovery>\n</tool_error>"
    );
    let broken = error_text(&call(&client, "shop", json!({"action": "guarded", "tenant": "broken"})).await);
    assert_eq!(
        broken,
        format!(
            "<tool_error code=\"INTERNAL_ERROR\" severity=\"critical\">\n<message>[shop.guarded] tenant directory unreachable</message>\n{WRAPPED_RECOVERY}\n</tool_error>"
        )
    );
    let exploded = parse(&error_text(&call(&client, "shop", json!({"action": "guarded", "tenant": "explode"})).await));
    assert_eq!(exploded.error.message, "[shop.guarded] panicked: middleware exploded");
    let passed = call(&client, "shop", json!({"action": "guarded", "tenant": "acme"})).await;
    assert_eq!(texts(&passed), ["hello acme"]);
}

#[tokio::test]
async fn middleware_runs_outermost_first_and_sees_the_call() {
    let trace = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let layer = |name: &'static str| {
        let trace = std::sync::Arc::clone(&trace);
        from_fn(move |call: Call, next: Next| {
            let trace = std::sync::Arc::clone(&trace);
            async move {
                let text = call.input::<Echo>().map(|e| e.text.clone()).unwrap_or_default();
                trace.lock().unwrap().push(format!("{name}>{}:{}:{text}", call.action(), call.arguments()["text"]));
                let out = next.run(call).await;
                trace.lock().unwrap().push(format!("<{name}"));
                out
            }
        })
    };
    let server = FusionServer::builder("s", "1")
        .middleware(layer("server"))
        .group(
            Group::new("g", "g")
                .middleware(layer("group"))
                .action(Action::new("echo", "e").middleware(layer("action")).handler(echo)),
        )
        .build(Shop { greeting: "yo" })
        .unwrap();
    let client = connect(server).await;
    let result = call(&client, "g", json!({"action": "echo", "text": "t"})).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        *trace.lock().unwrap(),
        ["server>g.echo:\"t\":t", "group>g.echo:\"t\":t", "action>g.echo:\"t\":t", "<action", "<group", "<server"]
    );
}

#[tokio::test]
async fn flat_exposition_routes_by_tool_name() {
    let server = FusionServer::builder("shop-server", "1.0.0")
        .group(shop())
        .exposition(Exposition::flat())
        .build(Shop { greeting: "hi" })
        .unwrap();
    let client = connect(server).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["shop_echo", "shop_order", "shop_login", "shop_refund", "shop_fail", "shop_guarded"]);
    let echo_tool = &tools[0];
    // Each flat tool says which action it serves, whatever the separator.
    let route = published_route(echo_tool);
    assert_eq!(route, Some(PublishedRoute::Flat { action: "shop.echo".into() }));
    assert_eq!(echo_tool.input_schema.get("required"), Some(&json!(["text"])));
    assert!(echo_tool.output_schema.is_some());
    assert_eq!(echo_tool.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
    let result = call(&client, "shop_echo", json!({"text": "flat"})).await;
    assert_eq!(result.structured_content, Some(json!({"text": "hi flat", "length": 7})));
    let unknown = error_text(&call(&client, "shop_ecoh", json!({"text": "x"})).await);
    assert!(
        unknown.contains("<recovery>Did you mean \"shop_echo\"? Call one of the available tools.</recovery>"),
        "{unknown}"
    );
    let validation = error_text(&call(&client, "shop_echo", json!({"action": "echo", "text": "x"})).await);
    assert!(validation.starts_with("<validation_error action=\"shop.echo\">"), "{validation}");
}

#[tokio::test]
async fn build_errors_say_what_to_do() {
    let duplicate = FusionServer::builder::<Shop>("s", "1")
        .group(
            Group::new("g", "g")
                .action(Action::new("a", "a").handler(echo))
                .action(Action::new("a", "b").handler(echo)),
        )
        .build(Shop { greeting: "" })
        .unwrap_err();
    assert_eq!(duplicate.to_string(), "duplicate action \"g.a\": names must be unique; rename one of them");
    let missing = FusionServer::builder::<Shop>("s", "1")
        .group(Group::new("g", "g").action(Action::new("a", "a")))
        .build(Shop { greeting: "" })
        .unwrap_err();
    assert_eq!(missing.to_string(), "action \"g.a\" has no handler: call `.handler(..)` on it");
    let bad_name = FusionServer::builder::<Shop>("s", "1")
        .group(Group::new("g.x", "g").action(Action::new("a", "a").handler(echo)))
        .build(Shop { greeting: "" })
        .unwrap_err();
    assert_eq!(bad_name.to_string(), "invalid group name \"g.x\": use 1 to 64 characters from A-Z a-z 0-9 _ -");
    let empty =
        FusionServer::builder::<Shop>("s", "1").group(Group::new("g", "g")).build(Shop { greeting: "" }).unwrap_err();
    assert_eq!(empty.to_string(), "group \"g\" has no action: add one with `.action(..)` or drop the group");

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct HasAction {
        action: String,
    }
    async fn takes_action(_ctx: Ctx<()>, _input: HasAction) -> Result<String, ToolError> {
        Ok(String::new())
    }
    let clash = FusionServer::builder("s", "1")
        .group(Group::new("g", "g").action(Action::new("a", "a").handler(takes_action)))
        .build(())
        .unwrap_err();
    assert!(clash.to_string().starts_with("the input of \"g.a\" has a field \"action\""), "{clash}");
}

#[tokio::test]
async fn tool_schemas_are_valid_2020_12_object_schemas() {
    for exposition in [Exposition::grouped(), Exposition::flat()] {
        let server = FusionServer::builder("shop-server", "1.0.0")
            .group(shop())
            .exposition(exposition)
            .build(Shop { greeting: "hi" })
            .unwrap();
        for tool in server.tools() {
            for schema in [Some(&tool.input_schema), tool.output_schema.as_ref()].into_iter().flatten() {
                let schema = serde_json::Value::Object((**schema).clone());
                assert_eq!(schema["type"], "object", "{}: {schema}", tool.name);
                assert!(jsonschema::draft202012::meta::is_valid(&schema), "{}: {schema}", tool.name);
            }
        }
    }
}

/// An uppercase code: the schema says "a string", the type says more.
#[derive(Deserialize, JsonSchema)]
#[serde(try_from = "String")]
#[schemars(with = "String")]
struct Upper(#[allow(dead_code)] String);

impl TryFrom<String> for Upper {
    type Error = String;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        if value.chars().all(|c| c.is_ascii_uppercase()) {
            Ok(Upper(value))
        } else {
            Err(format!("an uppercase code, not {value:?}"))
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Codes {
    codes: Vec<Upper>,
}

#[tokio::test]
async fn a_serde_error_the_schema_let_through_is_mapped_with_its_path() {
    async fn codes(_ctx: Ctx<()>, _input: Codes) -> Result<String, ToolError> {
        Ok("ok".into())
    }
    let server = FusionServer::builder("s", "1")
        .group(Group::new("c", "Codes.").action(Action::new("set", "Set codes.").handler(codes)))
        .build(())
        .unwrap();
    let client = connect(server).await;
    let text = error_text(&call(&client, "c", json!({"action": "set", "codes": ["AB", "cd"]})).await);
    assert_eq!(
        text,
        validation_envelope(
            "c.set",
            &[
                "<field name=\"codes.1\">Not accepted by the action. You sent: 'cd'. Expected a value the action accepts: a string (an uppercase code: the schema says \"a string\", the type says more).</field>"
            ]
        )
    );
}
