//! The demo's resources and prompt through the built `billing-server` over stdio, as an MCP
//! host uses them: the summary and one invoice, the dunning letter and its completed tone, each
//! failure as the JSON-RPC error the host gets, and a subscription told when a payment changes
//! them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CallToolRequestParams, CompleteRequestParams, ErrorCode, GetPromptRequestParams,
    ReadResourceRequestParams, Reference, ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use tokio::sync::Notify;

const BIN: &str = env!("CARGO_BIN_EXE_billing-server");

/// The URIs of `notifications/resources/updated`, as received.
#[derive(Clone, Default)]
struct Updates {
    uris: Arc<Mutex<Vec<String>>>,
    arrived: Arc<Notify>,
}

impl ClientHandler for Updates {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.uris.lock().unwrap().push(params.uri);
        self.arrived.notify_one();
    }
}

type Client = RunningService<RoleClient, Updates>;

async fn start(db: &std::path::Path, updates: Updates) -> Client {
    let mut command = tokio::process::Command::new(BIN);
    command.arg("--db").arg(db).env("RUST_LOG", "warn");
    updates.serve(TokioChildProcess::new(command).expect("spawn billing-server")).await.expect("initialize")
}

/// The one text content of a read, as JSON.
async fn read_json(client: &Client, uri: &str) -> Value {
    let contents = client.read_resource(ReadResourceRequestParams::new(uri)).await.expect("resources/read").contents;
    match contents.as_slice() {
        [ResourceContents::TextResourceContents { uri: read, mime_type, text, .. }] => {
            assert_eq!((read.as_str(), mime_type.as_deref()), (uri, Some("application/json")));
            serde_json::from_str(text).expect("JSON contents")
        }
        other => panic!("expected one text content, got {other:?}"),
    }
}

async fn read_error(client: &Client, uri: &str) -> ErrorData {
    match client.read_resource(ReadResourceRequestParams::new(uri)).await {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test]
async fn the_summary_and_an_invoice_are_listed_and_read() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(&dir.path().join("billing.db"), Updates::default()).await;
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(
        resources.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(),
        [
            "billing://summary",
            "ui://billing/invoice-view",
            "skill://chase-unpaid-invoice/SKILL.md",
            "skill://chase-unpaid-invoice/references/reminder-email.md"
        ]
    );
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates.iter().map(|t| t.uri_template.as_str()).collect::<Vec<_>>(), ["billing://invoices/{id}"]);

    let invoice = read_json(&client, "billing://invoices/inv_2026_0002").await;
    assert_eq!((invoice["id"].as_str(), invoice["status"].as_str()), (Some("inv_2026_0002"), Some("open")));
    assert_eq!(
        read_json(&client, "billing://summary").await,
        json!({"totals": [
            {"status": "open", "currency": "BRL", "invoices": 2, "amount_cents": 1_005_000, "paid_cents": 300_000},
            {"status": "open", "currency": "EUR", "invoices": 1, "amount_cents": 45_000, "paid_cents": 0},
            {"status": "paid", "currency": "EUR", "invoices": 1, "amount_cents": 120_000, "paid_cents": 120_000},
            {"status": "paid", "currency": "USD", "invoices": 1, "amount_cents": 25_000, "paid_cents": 25_000},
            {"status": "void", "currency": "USD", "invoices": 1, "amount_cents": 25_000, "paid_cents": 0},
        ]})
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_bad_id_an_unknown_invoice_and_an_unknown_uri_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(&dir.path().join("billing.db"), Updates::default()).await;
    let error = read_error(&client, "billing://invoices/INV-1").await;
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "Invalid parameters in the resource URI 'billing://invoices/INV-1':\n\
         id: Does not match the required pattern. You sent: 'INV-1'. Expected a string matching the pattern /^inv_[a-z0-9_]+$/, like 'inv_2026_0001'.\n\
         Fix the URI and read it again; resources/templates/list describes the templates."
    );
    let error = read_error(&client, "billing://invoices/inv_2099_0001").await;
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert_eq!(error.message, "No invoice with id \"inv_2099_0001\". List invoices first, then retry with a real ID.");
    let data = error.data.unwrap();
    assert_eq!(
        (data["code"].as_str(), data["available_actions"].clone()),
        (Some("NOT_FOUND"), json!(["billing.list_invoices"]))
    );
    let error = read_error(&client, "billing://invoice/inv_2026_0002").await;
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert_eq!(
        error.message,
        "Resource not found: 'billing://invoice/inv_2026_0002'. Did you mean 'billing://invoices/inv_2026_0002'? \
         Call resources/list for the resources this server reads and resources/templates/list for its URI templates."
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
#[allow(deprecated, reason = "resources/subscribe is how clients before 2026-07-28 subscribe")]
async fn a_payment_tells_the_subscribers_of_the_invoice_and_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let updates = Updates::default();
    let client = start(&dir.path().join("billing.db"), updates.clone()).await;
    client.subscribe(SubscribeRequestParams::new("billing://summary")).await.unwrap();
    client.subscribe(SubscribeRequestParams::new("billing://invoices/inv_2026_0002")).await.unwrap();
    let pay = json!({"action": "pay_invoice", "id": "inv_2026_0002", "amount_cents": 45_000});
    let result = client
        .call_tool(CallToolRequestParams::new("billing").with_arguments(pay.as_object().cloned().unwrap()))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    tokio::time::timeout(Duration::from_secs(10), async {
        while updates.uris.lock().unwrap().len() < 2 {
            updates.arrived.notified().await;
        }
    })
    .await
    .expect("two updates arrive");
    let mut uris = updates.uris.lock().unwrap().clone();
    uris.sort();
    assert_eq!(uris, ["billing://invoices/inv_2026_0002", "billing://summary"]);
    let summary = read_json(&client, "billing://summary").await;
    assert_eq!(
        summary["totals"][1],
        json!({"status": "paid", "currency": "EUR", "invoices": 2, "amount_cents": 165_000, "paid_cents": 165_000})
    );
    client.cancel().await.unwrap();
}

fn dunning(id: &str, tone: &str) -> GetPromptRequestParams {
    let mut params = GetPromptRequestParams::new("dunning_letter");
    params.arguments = json!({"id": id, "tone": tone}).as_object().cloned();
    params
}

#[tokio::test]
async fn the_dunning_letter_is_written_from_the_invoice_and_its_tone_completes() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(&dir.path().join("billing.db"), Updates::default()).await;
    let prompts = client.list_all_prompts().await.unwrap();
    let arguments: Vec<(&str, Option<bool>)> =
        prompts[0].arguments.iter().flatten().map(|a| (a.name.as_str(), a.required)).collect();
    assert_eq!(
        (prompts[0].name.as_str(), arguments),
        ("dunning_letter", vec![("id", Some(true)), ("tone", Some(true))])
    );

    let letter = client.get_prompt(dunning("inv_2026_0002", "firm")).await.unwrap();
    let messages = serde_json::to_value(&letter.messages).unwrap();
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": {"type": "text", "text":
            "Write a payment reminder e-mail to ana@example.com about invoice inv_2026_0002: 45000 EUR cents are open, \
             due 2026-03-01. Make it a firm last reminder: state the amount and a payment deadline of 7 days, and that \
             further steps follow. Use only the figures of the invoice below; do not invent any."}})
    );
    let embedded = &messages[1]["content"]["resource"];
    assert_eq!(
        (embedded["uri"].as_str(), embedded["mimeType"].as_str()),
        (Some("billing://invoices/inv_2026_0002"), Some("application/json"))
    );
    let invoice: Value = serde_json::from_str(embedded["text"].as_str().unwrap()).unwrap();
    assert_eq!(invoice["amount_cents"], 45_000);

    let complete = |value: &str| {
        CompleteRequestParams::new(Reference::for_prompt("dunning_letter"), ArgumentInfo::new("tone", value))
    };
    assert_eq!(client.complete(complete("")).await.unwrap().completion.values, ["friendly", "firm"]);
    assert_eq!(client.complete(complete("fi")).await.unwrap().completion.values, ["firm"]);

    let error = match client.get_prompt(dunning("inv_2026_0001", "friendly")).await {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    };
    assert_eq!(error.code, ErrorCode(-32000));
    assert_eq!(
        error.message,
        "Invoice \"inv_2026_0001\" is paid and cannot be dunned. Do not retry: a paid invoice is final. Tell the user, \
         or pick an open invoice with billing.list_invoices (status \"open\")."
    );
    assert_eq!(error.data.unwrap()["code"], "CONFLICT");
    client.cancel().await.unwrap();
}
