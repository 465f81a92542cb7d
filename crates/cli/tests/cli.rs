//! `fusion call` and `fusion parse`, run as a user runs them.

mod demo;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const FUSION: &str = env!("CARGO_BIN_EXE_fusion");

fn fusion(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(FUSION)
        .args(args)
        .env_remove("FUSION_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fusion");
    child.stdin.take().unwrap().write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The demo binary, beside `fusion`.
fn billing_server() -> PathBuf {
    demo::billing_server(FUSION)
}

const NOT_FOUND: &str = "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message>No invoice.</message>\n\
    <recovery>List first.</recovery>\n<available_actions>\n  <action>billing.list_invoices</action>\n</available_actions>\n\
    <details>\n  <detail key=\"requestedId\">inv_9</detail>\n</details>\n<retry_after>3 seconds</retry_after>\n</tool_error>";

#[test]
fn parse_prints_the_envelope_as_call_reports_it() {
    let output = fusion(&["parse"], Some(NOT_FOUND));
    assert_eq!(output.status.code(), Some(1), "an error envelope exits 1, as `fusion call` does: {}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "error: NOT_FOUND (error): No invoice.\n  recovery: List first.\n  available actions: billing.list_invoices\n  \
         detail requestedId: inv_9\n  retry after: 3 s\n"
    );
    let validation = "<validation_error action=\"billing.create_invoice\">\n<field name=\"currency\">Missing required field.</field>\n\
                      <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>";
    assert_eq!(
        stdout(&fusion(&["parse"], Some(validation))),
        "error: VALIDATION_ERROR (error): Invalid arguments for billing.create_invoice.\n  \
         fields:\n    currency: Missing required field.\n  recovery: Fix the fields above and call the tool again. Do not explain the error.\n"
    );
    let critical =
        "<tool_error code=\"INTERNAL_ERROR\" severity=\"critical\">\n<message>Disk full.</message>\n</tool_error>";
    assert_eq!(stdout(&fusion(&["parse"], Some(critical))), "error: INTERNAL_ERROR (critical): Disk full.\n");
    let plain = fusion(&["parse"], Some("connection refused"));
    assert_eq!(stdout(&plain), "error: UNKNOWN (error): connection refused\n");
}

#[test]
fn parse_json_prints_the_envelope_as_json() {
    let text = NOT_FOUND;
    let output = fusion(&["parse", "--json"], Some(text));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let printed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        printed,
        json!({
            "is_error": true, "code": "NOT_FOUND", "severity": "error", "message": "No invoice.",
            "recovery": "List first.", "available_actions": ["billing.list_invoices"],
            "details": [["requestedId", "inv_9"]], "retry_after": 3, "fields": [], "contract_changes": [], "action": null,
        })
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("envelope.txt");
    std::fs::write(&file, text).unwrap();
    let from_file = fusion(&["parse", "--json", file.to_str().unwrap()], None);
    assert_eq!(serde_json::from_str::<Value>(&stdout(&from_file)).unwrap(), printed);
}

/// The golden vectors of the reference TypeScript implementation.
const VECTORS: &str = include_str!("../../wire/tests/vectors/wire-vectors.jsonl");

/// What `fusion parse --json` prints for a tool error with these fields and nothing else.
fn tool_error_json(is_error: bool, code: &str, severity: &str, message: &str) -> Value {
    json!({
        "is_error": is_error, "code": code, "severity": severity, "message": message,
        "recovery": null, "available_actions": [], "details": [], "retry_after": null,
        "fields": [], "contract_changes": [], "action": null,
    })
}

fn parse_json(text: &str) -> Value {
    let output = fusion(&["parse", "--json"], Some(text));
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

#[test]
fn parse_json_reads_golden_vectors_as_their_input() {
    for id in [
        "tool_error/matrix/all_sections/critical",
        "tool_error/severity/warning_with_everything",
        "tool_error/escape/code_specials",
        "tool_error/escape/detail_value_specials",
        "tool_error/escape/xml_like_injection",
        "tool_error/retry_after/max_safe",
        "tool_error/code/ProjectNotFound/default_severity",
    ] {
        let case: Value = VECTORS
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .find(|case| case["id"] == id)
            .unwrap_or_else(|| panic!("no vector {id}"));
        let (input, expected) = (&case["input"], &case["expected"]);
        let mut wanted = tool_error_json(
            expected["is_error"].as_bool().unwrap(),
            input["code"].as_str().unwrap(),
            input.get("severity").and_then(Value::as_str).unwrap_or("error"),
            input["message"].as_str().unwrap(),
        );
        for (key, field) in [
            ("suggestion", "recovery"),
            ("available_actions", "available_actions"),
            ("details", "details"),
            ("retry_after", "retry_after"),
        ] {
            if let Some(value) = input.get(key) {
                wanted[field] = value.clone();
            }
        }
        assert_eq!(parse_json(expected["text"].as_str().unwrap()), wanted, "{id}");
    }
}

#[test]
fn parse_json_reads_each_shape_as_the_reference_client() {
    // A bare message outside an envelope: its text, unescaped.
    let bare = "upstream said:\n<message>Quota &amp; limits &lt;reached&gt;</message>\n";
    assert_eq!(parse_json(bare), tool_error_json(true, "UNKNOWN", "error", "Quota & limits <reached>"));

    // A repeated single-valued element: the first one wins.
    let repeated = "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n<message>first</message>\n<message>second</message>\n\
                    <recovery>Wait.</recovery>\n<recovery>Give up.</recovery>\n<retry_after>5 seconds</retry_after>\n\
                    <retry_after>60 seconds</retry_after>\n</tool_error>";
    let mut wanted = tool_error_json(true, "RATE_LIMITED", "error", "first");
    wanted["recovery"] = json!("Wait.");
    wanted["retry_after"] = json!(5);
    assert_eq!(parse_json(repeated), wanted);

    // A severity outside the three: kept as sent, and an error.
    let fatal = "<tool_error code=\"INTERNAL_ERROR\" severity=\"fatal\">\n<message>Disk gone.</message>\n</tool_error>";
    assert_eq!(parse_json(fatal), tool_error_json(true, "INTERNAL_ERROR", "fatal", "Disk gone."));
    assert_eq!(stdout(&fusion(&["parse"], Some(fatal))), "error: INTERNAL_ERROR (fatal): Disk gone.\n");

    // Attribute values unescaped like element text.
    let escaped = "<tool_error code=\"X&lt;Y\" severity=\"a&amp;b\">\n<message>m</message>\n<details>\n  \
                   <detail key=\"a&quot;b\">v</detail>\n</details>\n</tool_error>";
    let mut wanted = tool_error_json(true, "X<Y", "a&b", "m");
    wanted["details"] = json!([["a\"b", "v"]]);
    assert_eq!(parse_json(escaped), wanted);
    let validation = "<validation_error action=\"a&amp;b\">\n<field name=\"x&lt;y\">bad.</field>\n</validation_error>\n\
                      <contract_awareness>\n  <action>a&amp;b</action>\n  <contract_changes>\n    \
                      <change severity=\"BREAKING\" field=\"p&amp;q\">\n      <description>d</description>\n    </change>\n  \
                      </contract_changes>\n</contract_awareness>";
    let printed = parse_json(validation);
    assert_eq!((&printed["action"], &printed["message"]), (&json!("a&b"), &json!("Invalid arguments for a&b.")));
    assert_eq!(printed["fields"], json!([{"name": "x<y", "text": "bad."}]));
    assert_eq!(printed["contract_changes"][0]["field"], "p&q");
}

#[test]
fn parse_reads_a_call_tool_result() {
    let result = json!({"content": [
        {"type": "text", "text": "<tool_error code=\"DEPRECATED\" severity=\"warning\">"},
        {"type": "text", "text": "<message>old</message>\n</tool_error>"}
    ], "isError": false});
    let output = fusion(&["parse", "--json"], Some(&result.to_string()));
    let printed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        (&printed["is_error"], &printed["code"], &printed["message"]),
        (&json!(false), &json!("DEPRECATED"), &json!("old"))
    );
    assert_eq!(stdout(&fusion(&["parse"], Some(&result.to_string()))), "warning: DEPRECATED (warning): old\n");
    // A warning next to the data of a success is found too.
    let with_data = json!({"content": [
        {"type": "text", "text": "{\"id\": 1}"},
        {"type": "text", "text": "<tool_error code=\"RESULT_TRUNCATED\" severity=\"warning\">\n<message>Cut.</message>\n</tool_error>"}
    ]});
    assert_eq!(
        stdout(&fusion(&["parse"], Some(&with_data.to_string()))),
        "warning: RESULT_TRUNCATED (warning): Cut.\n"
    );
    // isError from the result, whatever the envelope says.
    let flagged = json!({"content": [{"type": "text", "text": "<tool_error code=\"X\" severity=\"warning\">\n<message>m</message>\n</tool_error>"}], "isError": true});
    let printed: Value =
        serde_json::from_str(&stdout(&fusion(&["parse", "--json"], Some(&flagged.to_string())))).unwrap();
    assert_eq!((&printed["is_error"], &printed["severity"]), (&json!(true), &json!("warning")));
    let plain = fusion(&["parse", "--json"], Some("connection refused"));
    let printed: Value = serde_json::from_str(&stdout(&plain)).unwrap();
    assert_eq!((&printed["code"], &printed["message"]), (&json!("UNKNOWN"), &json!("connection refused")));
}

#[test]
fn parse_garbage_is_a_clear_error() {
    let not_a_result = fusion(&["parse"], Some("{\"jsonrpc\": \"2.0\"}"));
    assert_eq!(not_a_result.status.code(), Some(2));
    assert_eq!(stderr(&not_a_result), "fusion: error: not an MCP CallToolResult: it has no \"content\" array\n");
    let missing = fusion(&["parse", "/no/such/file"], None);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).starts_with("fusion: error: reading /no/such/file: "), "{}", stderr(&missing));
}

#[test]
fn call_over_stdio_prints_results_and_errors() {
    let server = billing_server();
    let dir = tempfile::tempdir().unwrap();
    let command = format!("'{}' --db '{}'", server.display(), dir.path().join("billing.db").display());

    let found = fusion(&["call", "--stdio", &command, "billing.get_invoice", r#"{"id": "inv_2026_0001"}"#], None);
    assert!(found.status.success(), "{}", stderr(&found));
    let invoice: Value = serde_json::from_str(&stdout(&found)).unwrap();
    assert_eq!(invoice["id"], "inv_2026_0001");

    let missing = fusion(&["call", "--stdio", &command, "billing.get_invoice", r#"{"id": "inv_2026_9999"}"#], None);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        stdout(&missing),
        "error: NOT_FOUND (error): No invoice with id \"inv_2026_9999\".\n  recovery: List invoices first, then retry with a real ID.\n  \
         available actions: billing.list_invoices\n  detail requestedId: inv_2026_9999\n"
    );

    let invalid = fusion(
        &[
            "call",
            "--stdio",
            &command,
            "--json",
            "billing.create_invoice",
            r#"{"customer_email": "x", "amount_cents": 5, "currency": "EUR"}"#,
        ],
        None,
    );
    assert_eq!(invalid.status.code(), Some(1));
    let printed: Value = serde_json::from_str(&stdout(&invalid)).unwrap();
    assert_eq!(printed["code"], "VALIDATION_ERROR");
    assert_eq!(printed["action"], "billing.create_invoice");
    assert_eq!(printed["fields"][0]["name"], "customer_email");

    let warned =
        fusion(&["call", "--stdio", &command, "--json", "billing.get_invoice", r#"{"id": "inv_2026_0004"}"#], None);
    assert!(warned.status.success());
    let printed: Value = serde_json::from_str(&stdout(&warned)).unwrap();
    assert_eq!(printed["is_error"], false);
    assert_eq!(printed["value"]["status"], "void");
    assert_eq!(printed["warnings"][0]["code"], "INVOICE_VOID");
}

#[tokio::test]
async fn call_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let store = billing_server::Store::open(&dir.path().join("billing.db")).unwrap();
    let server = billing_server::server(store, &billing_server::Options::default()).unwrap();
    let config = mcp_fusion::http::HttpConfig::new("127.0.0.1:0");
    let http = mcp_fusion::http::HttpServer::bind(server, config).await.unwrap();
    let url = format!("http://{}/mcp", http.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(http.serve(async move {
        let _ = stopped.await;
    }));
    let output = tokio::task::spawn_blocking(move || {
        fusion(&["call", "--url", &url, "--json", "billing.list_invoices", r#"{"limit": 2}"#], None)
    })
    .await
    .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let printed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(printed["value"]["invoices"].as_array().unwrap().len(), 2);
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}

#[test]
fn bad_invocations_say_what_to_do() {
    let both = fusion(&["call", "--stdio", "x", "--url", "http://y", "a.b"], None);
    assert_eq!(both.status.code(), Some(2));
    assert!(stderr(&both).contains("cannot be used with"), "{}", stderr(&both));
    let neither = fusion(&["call", "a.b"], None);
    assert_eq!(neither.status.code(), Some(2));
    let not_json = fusion(&["call", "--url", "http://127.0.0.1:9/mcp", "a.b", "{id: 1}"], None);
    assert_eq!(not_json.status.code(), Some(2));
    assert!(
        stderr(&not_json).starts_with("fusion: error: the arguments are not JSON: {id: 1}"),
        "{}",
        stderr(&not_json)
    );
    let not_object = fusion(&["call", "--url", "http://127.0.0.1:9/mcp", "a.b", "[1]"], None);
    assert!(stderr(&not_object).contains("must be a JSON object"), "{}", stderr(&not_object));
    let unreachable = fusion(&["call", "--url", "http://127.0.0.1:9/mcp", "a.b"], None);
    assert_eq!(unreachable.status.code(), Some(2));
    assert!(
        stderr(&unreachable)
            .starts_with("fusion: error: cannot connect to http://127.0.0.1:9/mcp: connection refused; "),
        "{}",
        stderr(&unreachable)
    );
}
