//! The server built in process (`billing_server::server`) over a real SQLite file: what
//! needs no transport, or needs the database tampered with behind the server's back.

use crate::support;

use billing_server::Options;
use serde_json::{Value, json};
use support::in_process::{build, call, text};

#[tokio::test]
async fn partial_payments_add_up_until_the_invoice_is_paid() {
    let dir = tempfile::tempdir().unwrap();
    let server = build(&dir.path().join("billing.db"), &Options::default()).await;
    // inv_2026_0002: 45000 EUR cents, nothing paid.
    let first = call(&server, json!({"action": "pay_invoice", "id": "inv_2026_0002", "amount_cents": 20000})).await;
    let first = first.structured_content.expect("structured content");
    assert_eq!((&first["paid_cents"], &first["status"]), (&json!(20000), &json!("open")));
    let last = call(&server, json!({"action": "pay_invoice", "id": "inv_2026_0002", "amount_cents": 25000})).await;
    let last = last.structured_content.expect("structured content");
    assert_eq!((&last["paid_cents"], &last["status"]), (&json!(45000), &json!("paid")));
    let again = call(&server, json!({"action": "pay_invoice", "id": "inv_2026_0002", "amount_cents": 1})).await;
    assert_eq!(again.is_error, Some(true));
    assert!(text(&again).starts_with(r#"<tool_error code="CONFLICT" severity="error">"#), "{}", text(&again));
}

#[tokio::test]
async fn pages_chain_through_cursors_and_a_forged_cursor_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = build(&dir.path().join("billing.db"), &Options::default()).await;
    let mut ids = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let result = call(&server, json!({"action": "list_invoices", "limit": 4, "cursor": cursor})).await;
        let page = result.structured_content.expect("structured content");
        ids.extend(page["invoices"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_owned()));
        pages += 1;
        cursor = page["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(pages, 2);
    assert_eq!(ids, (1..=6).map(|n| format!("inv_2026_{n:04}")).collect::<Vec<_>>());

    let open = call(&server, json!({"action": "list_invoices", "status": "open"})).await;
    let open = open.structured_content.expect("structured content");
    let statuses: Vec<&Value> = open["invoices"].as_array().unwrap().iter().map(|i| &i["status"]).collect();
    assert_eq!(statuses, [&json!("open"); 3]);

    let forged = call(&server, json!({"action": "list_invoices", "cursor": "page-2"})).await;
    assert_eq!(forged.is_error, Some(true));
    assert_eq!(
        text(&forged),
        r#"<tool_error code="VALIDATION_ERROR" severity="error">
<message>The cursor 'page-2' was not issued by billing.list_invoices.</message>
<recovery>Omit "cursor" to read the first page, or pass the next_cursor of the previous page unchanged.</recovery>
<available_actions>
  <action>billing.list_invoices</action>
</available_actions>
<details>
  <detail key="cursor">'page-2'</detail>
</details>
</tool_error>"#
    );
}

#[tokio::test]
async fn voiding_keeps_the_reason_and_a_blank_reason_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = build(&dir.path().join("billing.db"), &Options::default()).await;
    let blank = call(&server, json!({"action": "void_invoice", "id": "inv_2026_0006", "reason": "   "})).await;
    assert_eq!(
        text(&blank),
        r#"<validation_error action="billing.void_invoice">
<field name="reason">Blank reason. You sent: '   '. Expected a reason in words, like 'Issued twice'.</field>
<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"#
    );
    let voided = call(
        &server,
        json!({"action": "void_invoice", "id": "inv_2026_0006", "reason": " Sent to the wrong customer "}),
    )
    .await;
    let voided = voided.structured_content.expect("structured content");
    assert_eq!(voided["status"], "void");
    assert_eq!(voided["void_reason"], "Sent to the wrong customer");
    let twice = call(&server, json!({"action": "void_invoice", "id": "inv_2026_0006", "reason": "again"})).await;
    assert!(text(&twice).contains("<message>Invoice \"inv_2026_0006\" is void and cannot be voided.</message>"));
    assert!(text(&twice).contains("<detail key=\"status\">void</detail>"));
}

#[tokio::test]
async fn a_database_failure_is_an_internal_error_not_a_tool_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let plain = build(&db, &Options::default()).await;
    let masked = build(&db, &Options { mask_internal_errors: Some(true), ..Options::default() }).await;
    rusqlite::Connection::open(&db).unwrap().execute_batch("DROP TABLE invoices").unwrap();

    let result = call(&plain, json!({"action": "get_invoice", "id": "inv_2026_0001"})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        r#"<tool_error code="INTERNAL_ERROR" severity="critical">
<message>[billing.get_invoice] database error: no such table: invoices</message>
<recovery>Do not blindly retry this call. Check the arguments, try another action, or report the failure to the user.</recovery>
</tool_error>"#
    );

    let result = call(&masked, json!({"action": "list_invoices"})).await;
    let text = text(&result);
    assert!(text.contains("<message>[billing.list_invoices] Internal error (incident "), "{text}");
    assert!(!text.contains("invoices</message>") && !text.contains("no such table"), "{text}");
}

#[tokio::test]
async fn a_void_invoice_is_returned_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let server = build(&dir.path().join("billing.db"), &Options::default()).await;
    let result = call(&server, json!({"action": "get_invoice", "id": "inv_2026_0004"})).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(result.structured_content.as_ref().map(|s| s["status"].clone()), Some(json!("void")));
    assert_eq!(result.content.len(), 2);
    assert_eq!(
        result.content[1].as_text().expect("a text block").text,
        "<tool_error code=\"INVOICE_VOID\" severity=\"warning\">\n\
         <message>Invoice \"inv_2026_0004\" is void: it is kept for the record and cannot be paid.</message>\n\
         <recovery>Do not ask the customer to pay it; list open invoices instead.</recovery>\n\
         <available_actions>\n  <action>billing.list_invoices</action>\n</available_actions>\n\
         <details>\n  <detail key=\"void_reason\">Issued twice; see inv_2026_0005.</detail>\n</details>\n\
         </tool_error>"
    );
}

#[tokio::test]
async fn the_rate_limit_flag_limits_each_session() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        rate_limit: Some(mcp_fusion::guard::RateLimit::new(2, std::time::Duration::from_secs(60))),
        ..Options::default()
    };
    let server = build(&dir.path().join("billing.db"), &options).await;
    let get = json!({"action": "get_invoice", "id": "inv_2026_0001"});
    assert_eq!(call(&server, get.clone()).await.is_error, Some(false));
    assert_eq!(call(&server, get.clone()).await.is_error, Some(false));
    let limited = call(&server, get).await;
    assert_eq!(limited.is_error, Some(true));
    assert!(text(&limited).starts_with("<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n<message>Rate limit reached: 2 calls per 60s for this caller across every tool of this server.</message>"), "{}", text(&limited));
}

/// Found by the `billing_call` fuzz target: an id of the right shape but any length reached
/// the handler, whose not-found envelope repeated it whole, past the 50-character echo cut.
#[tokio::test]
async fn a_long_id_is_never_echoed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let server = build(&dir.path().join("billing.db"), &Options::default()).await;
    let id = format!("inv_{}", "a".repeat(60));
    let calls = [
        json!({"action": "get_invoice", "id": id}),
        json!({"action": "pay_invoice", "id": id, "amount_cents": 1}),
        json!({"action": "void_invoice", "id": id, "reason": "Issued twice"}),
    ];
    for arguments in calls {
        let result = call(&server, arguments).await;
        assert_eq!(result.is_error, Some(true));
        assert!(!text(&result).contains(&id[..48]), "{}", text(&result));
    }
}

/// Found by the `billing_call` fuzz target: any cursor reached the handler, whose envelope
/// repeated it whole.
#[tokio::test]
async fn a_long_cursor_is_never_echoed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let server = build(&dir.path().join("billing.db"), &Options::default()).await;
    let cursor = "page-".repeat(20);
    let result = call(&server, json!({"action": "list_invoices", "cursor": cursor})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(!text(&result).contains(&cursor[..48]), "{}", text(&result));
}

#[tokio::test]
async fn served_flat_each_action_is_a_tool_of_its_own_with_its_own_hints() {
    let dir = tempfile::tempdir().unwrap();
    let server = build(&dir.path().join("billing.db"), &Options { flat: true, ..Options::default() }).await;
    let tools = server.tools();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "billing_list_invoices",
            "billing_get_invoice",
            "billing_create_invoice",
            "billing_pay_invoice",
            "billing_void_invoice",
            "billing_export_invoices"
        ]
    );
    let hints = |name: &str| {
        let tool = tools.iter().find(|tool| tool.name == name).unwrap();
        let hints = tool.annotations.clone().unwrap_or_default();
        (hints.read_only_hint, hints.destructive_hint)
    };
    assert_eq!(hints("billing_list_invoices"), (Some(true), Some(false)));
    assert_eq!(hints("billing_void_invoice"), (Some(false), Some(true)));
}
