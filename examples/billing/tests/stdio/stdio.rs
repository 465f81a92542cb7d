//! The built `billing-server` binary, driven over stdio by rmcp's client exactly as an MCP
//! host would: a child process, a fresh SQLite file in a temp dir, real envelopes back.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_billing-server");

type Client = RunningService<RoleClient, ()>;

/// Starts the server on `db` and connects to it; its log goes to the test's stderr.
async fn start(db: &Path) -> Client {
    let mut command = tokio::process::Command::new(BIN);
    command.arg("--db").arg(db).env("RUST_LOG", "warn");
    let transport = TokioChildProcess::new(command).expect("spawn billing-server");
    ().serve(transport).await.expect("MCP initialize with billing-server")
}

async fn call(client: &Client, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else { panic!("arguments must be an object") };
    client.call_tool(CallToolRequestParams::new("billing").with_arguments(arguments)).await.expect("tools/call")
}

/// The one text block of a result.
fn text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "{result:?}");
    &result.content[0].as_text().expect("a text block").text
}

/// Asserts a failed call whose whole text is `envelope`, with no structured content.
fn assert_envelope(result: &CallToolResult, envelope: &str) {
    assert_eq!(text(result), envelope);
    assert_eq!(result.is_error, Some(true));
    assert_eq!(result.structured_content, None);
}

#[tokio::test]
async fn tools_list_has_one_billing_tool_with_five_actions() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(&dir.path().join("billing.db")).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    let tool = &tools[0];
    assert_eq!(tool.name, "billing");
    let schema = Value::Object((*tool.input_schema).clone());
    assert_eq!(
        schema["properties"]["action"]["enum"],
        json!(["list_invoices", "get_invoice", "create_invoice", "pay_invoice", "void_invoice", "export_invoices"])
    );
    assert_eq!(schema["required"], json!(["action"]));
    assert_eq!(schema["properties"]["customer_email"]["format"], "email");
    assert_eq!(schema["properties"]["id"]["pattern"], "^inv_[a-z0-9_]+$");
    assert_eq!(schema["properties"]["currency"]["enum"], json!(["EUR", "USD", "BRL"]));
    assert_eq!(schema["properties"]["due_date"]["format"], "date");
    let annotations = tool.annotations.as_ref().expect("annotations");
    assert_eq!(annotations.destructive_hint, Some(true), "void_invoice is destructive");
    assert_eq!(annotations.read_only_hint, Some(false));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn get_invoice_of_a_seeded_id_returns_structured_content() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(&dir.path().join("billing.db")).await;
    let result = call(&client, json!({"action": "get_invoice", "id": "inv_2026_0001"})).await;
    assert_eq!(result.is_error, Some(false));
    let expected = json!({
        "id": "inv_2026_0001",
        "customer_email": "ana@example.com",
        "amount_cents": 120000,
        "paid_cents": 120000,
        "currency": "EUR",
        "status": "paid",
        "due_date": "2026-02-01",
        "created_at": "2026-01-05T09:00:00Z",
        "void_reason": null,
    });
    assert_eq!(result.structured_content, Some(expected.clone()));
    assert_eq!(serde_json::from_str::<Value>(text(&result)).unwrap(), expected);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unknown_invoice_is_the_exact_not_found_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(&dir.path().join("billing.db")).await;
    let expected = r#"<tool_error code="NOT_FOUND" severity="error">
<message>No invoice with id "inv_2026_9999".</message>
<recovery>List invoices first, then retry with a real ID.</recovery>
<available_actions>
  <action>billing.list_invoices</action>
</available_actions>
<details>
  <detail key="requestedId">inv_2026_9999</detail>
</details>
</tool_error>"#;
    let result = call(&client, json!({"action": "get_invoice", "id": "inv_2026_9999"})).await;
    assert_envelope(&result, expected);
    // Every action that takes an id answers an unknown one the same way.
    let result = call(&client, json!({"action": "pay_invoice", "id": "inv_2026_9999", "amount_cents": 1})).await;
    assert_envelope(&result, expected);
    let result = call(&client, json!({"action": "void_invoice", "id": "inv_2026_9999", "reason": "typo"})).await;
    assert_envelope(&result, expected);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn paying_a_paid_invoice_is_the_exact_conflict_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(&dir.path().join("billing.db")).await;
    let result = call(&client, json!({"action": "pay_invoice", "id": "inv_2026_0001", "amount_cents": 100})).await;
    assert_envelope(
        &result,
        r#"<tool_error code="CONFLICT" severity="error">
<message>Invoice "inv_2026_0001" is paid and cannot be paid.</message>
<recovery>Do not retry: a paid invoice is final. Tell the user, or pick an open invoice with billing.list_invoices (status "open").</recovery>
<available_actions>
  <action>billing.get_invoice</action>
  <action>billing.list_invoices</action>
</available_actions>
<details>
  <detail key="id">inv_2026_0001</detail>
  <detail key="status">paid</detail>
</details>
</tool_error>"#,
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn voiding_a_paid_invoice_is_the_exact_conflict_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(&dir.path().join("billing.db")).await;
    let result =
        call(&client, json!({"action": "void_invoice", "id": "inv_2026_0005", "reason": "Customer asked"})).await;
    assert_envelope(
        &result,
        r#"<tool_error code="CONFLICT" severity="error">
<message>Invoice "inv_2026_0005" is paid and cannot be voided.</message>
<recovery>Do not retry: a paid invoice is final. Tell the user, or pick an open invoice with billing.list_invoices (status "open").</recovery>
<available_actions>
  <action>billing.get_invoice</action>
  <action>billing.list_invoices</action>
</available_actions>
<details>
  <detail key="id">inv_2026_0005</detail>
  <detail key="status">paid</detail>
</details>
</tool_error>"#,
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_overpayment_is_a_validation_error_naming_the_maximum() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(&dir.path().join("billing.db")).await;
    // inv_2026_0003: 990000 BRL cents, 300000 paid, so 690000 open.
    let result = call(&client, json!({"action": "pay_invoice", "id": "inv_2026_0003", "amount_cents": 690001})).await;
    assert_envelope(
        &result,
        r#"<tool_error code="VALIDATION_ERROR" severity="error">
<message>A payment of 690001 cents exceeds the open balance of invoice "inv_2026_0003" (690000 BRL cents).</message>
<recovery>Pay at most 690000 cents: call again with amount_cents 690000 or less.</recovery>
<details>
  <detail key="amount_cents">690001</detail>
  <detail key="open_balance_cents">690000</detail>
</details>
</tool_error>"#,
    );
    // Nothing was booked: the exact balance still closes the invoice.
    let result = call(&client, json!({"action": "pay_invoice", "id": "inv_2026_0003", "amount_cents": 690000})).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let invoice = result.structured_content.unwrap();
    assert_eq!((invoice["paid_cents"].as_i64(), invoice["status"].as_str()), (Some(990000), Some("paid")));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_bad_create_lists_one_field_line_per_problem() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(&dir.path().join("billing.db")).await;
    let result = call(
        &client,
        json!({"action": "create_invoice", "customer_email": "not-an-email", "amount_cents": 0, "currency": "eur"}),
    )
    .await;
    assert_envelope(
        &result,
        r#"<validation_error action="billing.create_invoice">
<field name="amount_cents">Too small. You sent: 0. Expected at least 1.</field>
<field name="currency">Invalid value. You sent: 'eur'. Expected one of 'EUR', 'USD', 'BRL'.</field>
<field name="customer_email">Invalid email format. You sent: 'not-an-email'. Expected a valid email address, like name@example.com.</field>
<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"#,
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_created_invoice_reads_back_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    assert!(!db.exists());
    let client = start(&db).await;
    let result = call(
        &client,
        json!({
            "action": "create_invoice",
            "customer_email": "dora@example.com",
            "amount_cents": 4200,
            "currency": "USD",
            "due_date": "2026-06-30",
        }),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let created = result.structured_content.expect("structured content");
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("inv_") && id.ends_with("_0007"), "the sequence continues after the seed: {id}");
    assert_eq!(created["status"], "open");
    assert_eq!(created["paid_cents"], 0);
    assert_eq!(created["due_date"], "2026-06-30");
    assert_eq!(created["void_reason"], Value::Null);
    let created_at = created["created_at"].as_str().unwrap();
    assert!(chrono::DateTime::parse_from_rfc3339(created_at).is_ok(), "{created_at}");

    let read = call(&client, json!({"action": "get_invoice", "id": id})).await;
    assert_eq!(read.structured_content.as_ref(), Some(&created));
    client.cancel().await.unwrap();
    assert!(db.is_file(), "the SQLite file is created on first start");

    let client = start(&db).await;
    let read = call(&client, json!({"action": "get_invoice", "id": id})).await;
    assert_eq!(read.structured_content.as_ref(), Some(&created));
    let all = call(&client, json!({"action": "list_invoices", "limit": 100})).await;
    let page = all.structured_content.expect("structured content");
    assert_eq!(page["invoices"].as_array().unwrap().len(), 7, "not seeded again");
    assert_eq!(page["next_cursor"], Value::Null);
    client.cancel().await.unwrap();
}

/// Runs the binary to its end with `args` and no client; returns (exit code, stderr).
fn run_to_exit(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let output = Command::new(BIN).args(args).stdin(Stdio::null()).output().expect("run billing-server");
    assert!(output.stdout.is_empty(), "stdout is for MCP only: {:?}", String::from_utf8_lossy(&output.stdout));
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn a_directory_as_db_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = run_to_exit(&["--db".as_ref(), dir.path().as_os_str()]);
    assert_eq!(code, Some(1), "{stderr}");
    let expected =
        format!("cannot use {} as the billing database: it is a directory, not a file", dir.path().display());
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_file_that_is_not_sqlite_is_a_clear_error_and_stays_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    let content = "Shopping list: milk, eggs, flour, butter, sugar, and a new SQLite book.\n";
    std::fs::write(&path, content).unwrap();
    let (code, stderr) = run_to_exit(&["--db".as_ref(), path.as_os_str()]);
    assert_eq!(code, Some(1), "{stderr}");
    let expected = format!("cannot use {} as the billing database: file is not a database", path.display());
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), content);
}

#[test]
fn an_unknown_flag_is_clap_s_error() {
    let (code, stderr) = run_to_exit(&["--dbb".as_ref(), "x.db".as_ref()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("unexpected argument '--dbb'"), "{stderr}");
    assert!(stderr.contains("tip: a similar argument exists: '--db'"), "{stderr}");
}

#[test]
fn stdout_carries_only_mcp_messages_and_logs_go_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(dir.path().join("billing.db"))
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn billing-server");
    let mut stdin = child.stdin.take().unwrap();
    let initialize = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "stdio-test", "version": "0"},
        },
    });
    writeln!(stdin, "{initialize}").unwrap();
    stdin.flush().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let response: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
    assert_eq!(response["id"], 1);
    assert_eq!(response["result"]["serverInfo"]["name"], "billing-server");
    assert_eq!(response["result"]["protocolVersion"], "2025-06-18");

    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "closing stdin ends the server cleanly: {status}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert_eq!(rest, "", "nothing but MCP messages on stdout");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("billing-server serving MCP on stdio"), "{stderr}");
}
