//! Value-free errors: with `value_free_errors` on, no envelope repeats a value a call sent.
//! Every call below carries marker values in the places models and users put data (fields of
//! every type, a misspelt action, an unknown tool, an unknown key's value, an idempotency key,
//! an id the store does not hold), and every answer is searched for them.

use crate::support;

use billing_server::Options;
use mcp_fusion::testing::TestClient;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};
use support::in_process::build;

/// The markers: none is a word or a number an error could say on its own.
const STRINGS: &[&str] = &["qx7Marker", "Zq9Secret", "ana.qx7@example.invalid", "inv_qx7_gone", "qx7-cursor"];
const NUMBERS: &[i64] = &[918_273_645, 918_273_646, 7_364_519];

fn bad_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("billing", json!({"action": "qx7Marker"})),
        ("billing", json!({"action": 918_273_645})),
        (
            "billing",
            json!({"action": "create_invoice", "customer_email": "Zq9Secret", "amount_cents": "qx7Marker", "currency": "Zq9Secret", "due_date": "qx7Marker"}),
        ),
        (
            "billing",
            json!({"action": "create_invoice", "customer_email": "ana.qx7@example.invalid", "amount_cents": -918_273_646, "currency": "EUR"}),
        ),
        (
            "billing",
            json!({"action": "create_invoice", "customer_email": "ana.qx7@example.invalid", "amount_cents": 918_273_645, "currency": "EUR", "due_date": 7_364_519}),
        ),
        ("billing", json!({"action": "get_invoice", "id": "inv_qx7_gone"})),
        ("billing", json!({"action": "get_invoice", "id": "Zq9Secret"})),
        ("billing", json!({"action": "get_invoice", "id": 918_273_646})),
        ("billing", json!({"action": "list_invoices", "limit": 918_273_645, "status": "qx7Marker"})),
        ("billing", json!({"action": "list_invoices", "cursor": "qx7-cursor"})),
        ("billing", json!({"action": "list_invoices", "limit": "7364519"})),
        ("billing", json!({"action": "list_invoices", "qx7key": "Zq9Secret", "limt": 7_364_519})),
        ("billing", json!({"action": "pay_invoice", "id": "inv_qx7_gone", "amount_cents": 918_273_645})),
        ("billing", json!({"action": "pay_invoice", "id": "inv_2026_0002", "amount_cents": 918_273_645})),
        ("billing", json!({"action": "void_invoice", "id": "inv_qx7_gone", "reason": "qx7Marker"})),
        ("billing", json!({"action": "void_invoice", "id": "inv_2026_0001", "reason": ""})),
        (
            "billing",
            json!({"action": "create_invoice", "customer_email": "ana.qx7@example.invalid", "amount_cents": 500, "currency": "EUR", "idempotency_key": 918_273_646}),
        ),
        (
            "billing",
            json!({"action": "create_invoice", "customer_email": "ana.qx7@example.invalid", "amount_cents": 500, "currency": "EUR", "idempotency_key": "Zq9Secret"}),
        ),
        (
            "billing",
            json!({"action": "create_invoice", "customer_email": "ana.qx7@example.invalid", "amount_cents": 501, "currency": "EUR", "idempotency_key": "Zq9Secret"}),
        ),
        ("billing", json!({"action": "export_invoices", "status": 918_273_646})),
        ("qx7Marker", json!({"action": "list_invoices"})),
        ("billing.qx7Marker", json!({})),
    ]
}

/// Every envelope of `result`: its text blocks when it failed, and any envelope riding on a
/// success (a warning).
fn envelopes(result: &CallToolResult) -> Vec<String> {
    let texts = result.content.iter().filter_map(|block| block.as_text()).map(|text| text.text.clone());
    match result.is_error {
        Some(true) => texts.collect(),
        _ => texts.filter(|text| text.starts_with("<tool_error") || text.starts_with("<validation_error")).collect(),
    }
}

async fn answers(options: &Options) -> Vec<(String, Value, String)> {
    let dir = tempfile::tempdir().unwrap();
    let client: TestClient = build(&dir.path().join("billing.db"), options).await;
    let mut answers = Vec::new();
    for (tool, arguments) in bad_calls() {
        let arguments: Map<String, Value> = arguments.as_object().cloned().unwrap();
        let result = client.call_tool(tool, arguments.clone()).await;
        for envelope in envelopes(&result) {
            answers.push((tool.to_owned(), Value::Object(arguments.clone()), envelope));
        }
    }
    answers
}

fn leaks(envelope: &str) -> Vec<String> {
    let strings = STRINGS.iter().map(|s| s.to_string());
    let numbers = NUMBERS.iter().map(|n| n.to_string());
    strings.chain(numbers).filter(|marker| envelope.contains(marker.as_str())).collect()
}

#[tokio::test]
async fn with_value_free_errors_no_envelope_repeats_a_value_sent() {
    let options = Options { value_free_errors: true, ..Options::default() };
    let answers = answers(&options).await;
    // All but the first call under a new idempotency key end in an envelope (the string
    // spelling a limit runs, with its warning).
    assert!(answers.len() >= bad_calls().len() - 1, "{} envelopes: {answers:#?}", answers.len());
    for (tool, arguments, envelope) in &answers {
        assert!(leaks(envelope).is_empty(), "{tool} {arguments} was answered with {:?}:\n{envelope}", leaks(envelope));
        assert!(envelope.contains("<recovery>"), "still says what to do: {envelope}");
    }
}

#[tokio::test]
async fn without_it_the_same_calls_are_echoed_so_the_search_can_fail() {
    let answers = answers(&Options::default()).await;
    let echoed = answers.iter().filter(|(_, _, envelope)| !leaks(envelope).is_empty()).count();
    assert!(echoed >= 10, "the markers are found where errors echo: {echoed} of {}", answers.len());
}
