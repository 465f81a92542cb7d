//! The typed client against the built demo, over stdio and HTTP: every error kind of the demo
//! comes back as the right `FusionClientError` fields, a typed success decodes, and the retry
//! policy honours `retry_after`.

use crate::support;

use std::time::{Duration, Instant};

use mcp_fusion_client::wire::{ErrorCode, Severity};
use mcp_fusion_client::{Exposition, FusionClient, FusionClientError, RetryPolicy};
use serde::{Deserialize, Serialize};
use serde_json::json;

use support::BIN;

async fn over_stdio(db: &std::path::Path, extra: &[&str]) -> FusionClient {
    let mut command = tokio::process::Command::new(BIN);
    command.arg("--db").arg(db).args(extra).env("RUST_LOG", "warn");
    FusionClient::spawn(command).await.expect("connect over stdio")
}

#[derive(Serialize)]
struct GetInvoice<'a> {
    id: &'a str,
}

#[derive(Debug, Deserialize)]
struct Invoice {
    id: String,
    status: String,
    amount_cents: i64,
}

fn failure(result: Result<impl std::fmt::Debug, FusionClientError>) -> mcp_fusion_client::ToolFailure {
    match result {
        Err(FusionClientError::Tool(failure)) => *failure,
        other => panic!("expected a tool failure, got {other:?}"),
    }
}

/// Every documented error of the demo, read back through the client.
async fn exercise(client: &FusionClient) {
    assert_eq!(client.exposition(), Some(Exposition::grouped()));

    let invoice =
        client.call_typed::<_, Invoice>("billing.get_invoice", &GetInvoice { id: "inv_2026_0001" }).await.unwrap();
    assert_eq!(
        (invoice.id.as_str(), invoice.status.as_str(), invoice.amount_cents),
        ("inv_2026_0001", "paid", 120_000)
    );
    assert!(invoice.warnings.is_empty());

    let missing = failure(client.call("billing.get_invoice", json!({"id": "inv_2026_9999"})).await);
    assert_eq!(missing.code(), &ErrorCode::NotFound);
    assert_eq!(missing.message(), "No invoice with id \"inv_2026_9999\".");
    assert_eq!(missing.recovery(), Some("List invoices first, then retry with a real ID."));
    assert_eq!(missing.available_actions(), ["billing.list_invoices"]);
    assert_eq!(missing.details(), [("requestedId".to_owned(), "inv_2026_9999".to_owned())]);
    assert_eq!((missing.severity(), missing.retry_after()), (Severity::Error, None));
    assert_eq!(missing.raw().is_error, Some(true));

    let invalid = failure(
        client
            .call(
                "billing.create_invoice",
                json!({"customer_email": "not-an-email", "amount_cents": 0, "currency": "eur"}),
            )
            .await,
    );
    assert_eq!(invalid.code(), &ErrorCode::ValidationError);
    assert_eq!(invalid.message(), "Invalid arguments for billing.create_invoice.");
    assert_eq!(invalid.recovery(), Some("Fix the fields above and call the tool again. Do not explain the error."));
    let names: Vec<&str> = invalid.fields().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["amount_cents", "currency", "customer_email"]);
    assert_eq!(invalid.fields()[1].text, "Invalid value. You sent: 'eur'. Expected one of 'EUR', 'USD', 'BRL'.");
    assert_eq!(invalid.envelope().action.as_deref(), Some("billing.create_invoice"));
    assert!(invalid.contract_changes().is_empty());

    let conflict =
        failure(client.call("billing.pay_invoice", json!({"id": "inv_2026_0001", "amount_cents": 100})).await);
    assert_eq!(conflict.code(), &ErrorCode::Conflict);
    assert_eq!(conflict.available_actions(), ["billing.get_invoice", "billing.list_invoices"]);
    assert_eq!(conflict.details()[1], ("status".to_owned(), "paid".to_owned()));

    let over =
        failure(client.call("billing.pay_invoice", json!({"id": "inv_2026_0003", "amount_cents": 999_999})).await);
    assert_eq!(over.code(), &ErrorCode::ValidationError);
    assert!(over.fields().is_empty(), "a handler's VALIDATION_ERROR is a tool error, not field problems");
    assert_eq!(over.details()[1], ("open_balance_cents".to_owned(), "690000".to_owned()));

    let unknown = failure(client.call("billing.get_invoce", json!({"id": "inv_2026_0001"})).await);
    assert_eq!(unknown.code(), &ErrorCode::UnknownAction);
    assert!(unknown.recovery().unwrap().starts_with("Did you mean \"billing.get_invoice\"?"));
    assert_eq!(unknown.available_actions().len(), 6);

    let void = client.call("billing.get_invoice", json!({"id": "inv_2026_0004"})).await.unwrap();
    assert_eq!(void.value.as_ref().unwrap()["status"], "void");
    assert_eq!(void.warnings.len(), 1);
    assert_eq!(void.warnings[0].error.code.as_str(), "INVOICE_VOID");

    let raw = client.call_raw("billing.get_invoice", json!({"id": "inv_2026_9999"})).await.unwrap();
    assert!(raw.is_error());
    assert_eq!(raw.error.as_ref().unwrap().error.code, ErrorCode::NotFound);

    match client.call("crm.find", json!({})).await {
        Err(FusionClientError::NoSuchAction { action, tools }) => {
            assert_eq!((action.as_str(), tools), ("crm.find", vec!["billing".to_owned()]))
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn every_demo_error_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let client = over_stdio(&dir.path().join("billing.db"), &[]).await;
    exercise(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn every_demo_error_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let server = support::spawn_http(&dir.path().join("billing.db"), &[], &[]);
    let client = FusionClient::connect_http(&server.url, None).await.unwrap();
    exercise(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn the_retry_policy_waits_for_retry_after_and_gives_up_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    // One call per 2 s: the second call is told to come back in 2 s.
    let client = over_stdio(&dir.path().join("billing.db"), &["--rate-limit", "1/2"]).await;
    let get = json!({"id": "inv_2026_0001"});
    client.call("billing.get_invoice", get.clone()).await.unwrap();

    let impatient = client.with_retry(RetryPolicy::new(3, Duration::from_secs(1)));
    let limited = failure(impatient.call("billing.get_invoice", get.clone()).await);
    assert_eq!(limited.code(), &ErrorCode::RateLimited);
    assert_eq!(limited.retry_after(), Some(2));

    let patient = impatient.with_retry(RetryPolicy::new(3, Duration::from_secs(10)));
    let started = Instant::now();
    let reply = patient.call("billing.get_invoice", get).await.unwrap();
    assert_eq!(reply.value.as_ref().unwrap()["id"], "inv_2026_0001");
    assert!(started.elapsed() >= Duration::from_millis(1900), "it waited for retry_after: {:?}", started.elapsed());
    patient.close().await.unwrap();
}
