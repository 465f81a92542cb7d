//! The gateway in front of upstreams that misbehave on purpose (`support/hostile_upstream.py`):
//! tool names no client accepts, error texts that forge log lines, more tools than a mount
//! takes, an answer over the frame cap, a call never answered, results against their own
//! output schema, and a tool name copied from another mount. Whatever they send is bounded,
//! escaped, and answered as an envelope.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_fusion::handoff::Mount;
use mcp_fusion::wire::{Envelope, ErrorCode, Severity, ToolError};
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use mcp_fusion_gateway::{Gateway, Upstream};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use support::*;

/// The forged line the upstream hides in its names and texts: raw, it would start a log line
/// (or an envelope line) of its own.
const FORGED_PREFIX: &str = "2026-01-01T00:00:00";

fn script() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/hostile_upstream.py").to_owned()
}

fn hostile(mode: &str, args: &[&str]) -> Upstream {
    Upstream::stdio("python3", [script(), mode.to_owned()].into_iter().chain(args.iter().map(|a| (*a).to_owned())))
}

/// A `[[mount]]` of the hostile upstream in `mode`, with `extra` lines.
fn mount_toml(namespace: &str, mode: &[&str], extra: &str) -> String {
    let args: Vec<String> = [script()].into_iter().chain(mode.iter().map(|m| (*m).to_owned())).collect();
    format!("[[mount]]\nnamespace = {namespace:?}\ncommand = \"python3\"\nargs = {args:?}\n{extra}\n")
}

type Child = RunningService<rmcp::RoleClient, ()>;

/// `fusion-gateway --config` of `toml`, once its upstreams settled, its stderr in `log`.
async fn gateway_binary(dir: &Path, toml: &str) -> (Child, PathBuf) {
    let config = dir.join("gateway.toml");
    std::fs::write(&config, toml).unwrap();
    let log = dir.join("gateway.log");
    let mut command = tokio::process::Command::new(GATEWAY);
    command.args(["--config", &config.display().to_string(), "--wait-for-upstreams"]);
    let (transport, _) =
        TokioChildProcess::builder(command).stderr(Stdio::from(std::fs::File::create(&log).unwrap())).spawn().unwrap();
    (().serve(transport).await.unwrap(), log)
}

async fn call_child(client: &Child, tool: &str) -> rmcp::model::CallToolResult {
    client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(Default::default())).await.unwrap()
}

/// Ends the gateway and reads what it logged.
async fn logged(client: Child, log: &Path) -> String {
    client.cancel().await.unwrap();
    std::fs::read_to_string(log).unwrap()
}

/// No line of `text` is one the upstream wrote.
fn assert_no_forged_line(text: &str) {
    for line in text.lines() {
        assert!(!line.starts_with(FORGED_PREFIX) && !line.starts_with("FORGED"), "a forged line: {line:?} in\n{text}");
    }
}

#[tokio::test]
async fn tool_names_outside_the_mcp_rule_are_dropped_with_one_escaped_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (client, log) = gateway_binary(dir.path(), &mount_toml("h", &["names"], "")).await;
    let tools: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    assert_eq!(tools, ["h.fine", "h.dots.and-dashes_OK9"], "only names of 1 to 128 of A-Z a-z 0-9 _ . - are listed");
    assert_eq!(text(&call_child(&client, "h.fine").await), "fine");
    let logged = logged(client, &log).await;
    assert_no_forged_line(&logged);
    let warnings: Vec<&str> = logged.lines().filter(|line| line.contains("'has space'")).collect();
    assert_eq!(warnings.len(), 1, "one warning names the dropped tools: {logged}");
    assert!(warnings[0].contains(r"'bad\n2026-01-01T00:00:00"), "escaped and quoted: {}", warnings[0]);
    assert!(warnings[0].contains(r"'caf"), "{}", warnings[0]);
}

#[tokio::test]
async fn a_tools_list_error_is_quoted_in_the_envelope_and_escaped_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let (client, log) = gateway_binary(dir.path(), &mount_toml("h", &["list-error"], "")).await;
    let result = call_child(&client, "h.anything").await;
    let envelope = envelope(&result);
    assert_eq!(envelope.error.code, ErrorCode::HandoffUpstreamUnavailable, "{}", text(&result));
    assert!(envelope.error.message.contains(r"'tools are gone\n2026-01-01"), "{}", envelope.error.message);
    assert_no_forged_line(&text(&result));
    let logged = logged(client, &log).await;
    assert_no_forged_line(&logged);
    assert!(logged.contains(r"tools are gone\n2026-01-01"), "the log says what the upstream said, escaped: {logged}");
}

#[tokio::test]
async fn an_upstream_listing_more_tools_than_its_mount_takes_is_refused_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    // The next attempt is due long after the test: one attempt, one warning.
    let toml = "[reconnect]\ninitial_ms = 30000\n".to_owned()
        + &mount_toml("many", &["many", "1001"], "")
        + &mount_toml("raised", &["many", "1001"], "max_tools = 1001");
    let (client, log) = gateway_binary(dir.path(), &toml).await;
    let tools: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    assert_eq!(tools.len(), 1001, "the mount whose cap is raised serves all its tools, the other none");
    assert!(tools.iter().all(|name| name.starts_with("raised.")));
    assert_eq!(text(&call_child(&client, "raised.t1000").await), "t1000");
    let refused = envelope(&call_child(&client, "many.t0").await);
    assert_eq!(refused.error.code, ErrorCode::HandoffUpstreamUnavailable);
    let message = &refused.error.message;
    assert!(message.contains("1001 tools") && message.contains("1000") && message.contains("max_tools"), "{message}");
    let logged = logged(client, &log).await;
    let warnings = logged.lines().filter(|line| line.contains("1001 tools")).count();
    assert_eq!(warnings, 1, "one warning per attempt: {logged}");
}

#[tokio::test]
async fn an_answer_over_the_frame_cap_is_answered_at_once_and_the_connection_keeps_serving() {
    let server = FusionServer::builder::<()>("gateway-test", "1").build(()).unwrap();
    let running = Gateway::new().mount(Mount::new("h"), hostile("huge", &[])).start(&server);
    running.settled().await;
    let client = connect(&server, Seen::default()).await;
    let started = Instant::now();
    let answered = tokio::time::timeout(Duration::from_secs(50), call(&client, "h.huge", json!({}))).await;
    let took = started.elapsed();
    let result = answered.expect("the call to a tool whose answer was dropped is answered");
    let envelope = envelope(&result);
    assert_eq!(envelope.error.code, ErrorCode::HandoffUpstreamUnavailable, "{}", text(&result));
    assert!(envelope.error.message.contains("16777216 bytes"), "{}", envelope.error.message);
    assert!(took < Duration::from_secs(30), "answered when the line was read, not by a timeout: {took:?}");
    eprintln!("the oversized answer was answered in {took:?}");
    // The same connection still answers.
    assert_eq!(text(&call(&client, "h.small", json!({})).await), "small");
    running.shutdown().await;
}

/// The hostile upstream in `mode` over HTTP, with its URL read from its stderr.
async fn hostile_over_http(mode: &str) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt as _;
    let mut child = tokio::process::Command::new("python3")
        .args([script().as_str(), "--http", mode])
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let line = lines.next_line().await.unwrap().expect("the upstream says where it listens");
    (child, line.strip_prefix("listening on ").expect(&line).to_owned())
}

#[tokio::test]
async fn an_http_answer_over_the_size_cap_says_so() {
    let (_upstream, url) = hostile_over_http("huge").await;
    let server = FusionServer::builder::<()>("gateway-test", "1").build(()).unwrap();
    let running = Gateway::new().mount(Mount::new("h"), Upstream::http(&url)).start(&server);
    running.settled().await;
    let client = connect(&server, Seen::default()).await;
    let answered = tokio::time::timeout(Duration::from_secs(50), call(&client, "h.huge", json!({}))).await;
    let envelope = envelope(&answered.expect("answered"));
    assert_eq!(envelope.error.code, ErrorCode::HandoffUpstreamUnavailable);
    assert!(envelope.error.message.contains("larger than 16777216 bytes"), "{}", envelope.error.message);
    // rmcp's HTTP client drops its connection with the answer: the gateway dials again.
    eventually("the upstream back", Duration::from_secs(20), || async {
        (text(&call(&client, "h.small", json!({})).await) == "small").then_some(())
    })
    .await;
    running.shutdown().await;
}

#[tokio::test]
async fn a_call_the_upstream_never_answers_times_out_by_default() {
    let server = FusionServer::builder::<()>("gateway-test", "1").build(()).unwrap();
    let running = Gateway::new()
        .keepalive(Duration::from_secs(3600))
        .mount(Mount::new("h"), hostile("silent", &[]))
        .start(&server);
    running.settled().await;
    let client = connect(&server, Seen::default()).await;
    listed(&client, "h.hang").await;
    // From here on nothing but the call waits: the clock jumps to its next timer.
    tokio::time::pause();
    let started = tokio::time::Instant::now();
    let answered = tokio::time::timeout(Duration::from_secs(3600), call(&client, "h.hang", json!({}))).await;
    let result = answered.expect("a mount without timeout_ms still bounds its calls");
    let envelope = envelope(&result);
    assert_eq!(envelope.error.code, ErrorCode::Timeout, "{}", text(&result));
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(60) && waited < Duration::from_secs(61), "{waited:?}");
    tokio::time::resume();
    running.shutdown().await;
}

#[tokio::test]
async fn a_result_against_its_own_output_schema_is_an_envelope() {
    let server = FusionServer::builder::<()>("gateway-test", "1").build(()).unwrap();
    let running = Gateway::new().mount(Mount::new("h"), hostile("output", &[])).start(&server);
    running.settled().await;
    let client = connect(&server, Seen::default()).await;

    let right = call(&client, "h.right", json!({})).await;
    assert_eq!((right.is_error, right.structured_content), (Some(false), Some(json!({"count": 3}))));
    // Its own failure, which is no envelope, in one: its words, and a code that says whose.
    let failed = call(&client, "h.failed", json!({})).await;
    assert_eq!(failed.is_error, Some(true));
    let said = envelope(&failed);
    assert_eq!(said.error.code.as_str(), "UPSTREAM_ERROR", "{}", text(&failed));
    assert_eq!(said.error.message, r#"Upstream "h" answered h.failed with an error: 'the upstream\'s own failure'."#);

    let missing = call(&client, "h.missing", json!({})).await;
    assert_eq!(missing.is_error, Some(true), "{}", text(&missing));
    assert_eq!(missing.structured_content, None);
    let said = envelope(&missing);
    assert_eq!((&said.error.code, &said.error.severity), (&ErrorCode::HandoffUpstreamUnavailable, &Severity::Error));
    assert!(said.error.message.contains("no structuredContent"), "{}", said.error.message);
    assert!(said.error.recovery.as_deref().is_some_and(|r| r.contains("already")), "{:?}", said.error.recovery);

    let wrong = call(&client, "h.wrong", json!({})).await;
    assert_eq!(wrong.is_error, Some(true), "{}", text(&wrong));
    let said = envelope(&wrong);
    assert_eq!(said.error.code, ErrorCode::HandoffUpstreamUnavailable);
    assert!(said.error.message.contains("does not match") && said.error.message.contains("count"), "{:?}", said.error);
    assert_no_forged_line(&text(&wrong));
    running.shutdown().await;
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Payment {}

async fn pay(_ctx: Ctx<()>, _input: Payment) -> Result<String, ToolError> {
    Ok("paid locally".into())
}

/// The envelope of a call to `tool`, with its candidates sorted.
async fn ambiguous(client: &Client, tool: &str) -> Envelope {
    let mut said = envelope(&call(client, tool, json!({"action": "pay_invoice"})).await);
    said.error.available_actions.sort();
    said
}

#[tokio::test]
async fn a_name_several_namespaces_serve_lists_every_one_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db").display().to_string();
    let local = Group::new("invoices", "Local invoices.").action(Action::new("pay_invoice", "Pay.").handler(pay));
    let server = FusionServer::builder::<()>("gateway-test", "1").group(local).build(()).unwrap();
    // The impostor is mounted first, and copies the demo's tool name and actions.
    let running = Gateway::new()
        .mount(Mount::new("aaa"), hostile("impostor", &[]))
        .mount(Mount::new("demo"), Upstream::stdio(billing_server().display().to_string(), ["--db", &db]))
        .start(&server);
    running.settled().await;
    let client = connect(&server, Seen::default()).await;
    listed(&client, "demo.billing").await;

    for (tool, candidates) in [
        ("billing", &["aaa.billing", "demo.billing"][..]),
        ("billing.pay_invoice", &["aaa.billing", "demo.billing"][..]),
        ("pay_invoice", &["aaa.billing", "demo.billing", "invoices.pay_invoice"][..]),
    ] {
        let said = ambiguous(&client, tool).await;
        assert_eq!(said.error.available_actions, candidates, "{tool}: {:?}", said.error);
        assert!(said.error.message.contains("ambiguous"), "{tool}: {}", said.error.message);
        let recovery = said.error.recovery.clone().unwrap_or_default();
        for candidate in candidates {
            let named = candidate.strip_suffix(".pay_invoice").unwrap_or(candidate);
            assert!(recovery.contains(&format!("\"{named}\"")), "{tool}: {recovery}");
        }
    }
    // A name only one of them serves still gets its one guess.
    let single = envelope(&call(&client, "list_invoice", json!({})).await);
    assert!(!single.error.message.contains("ambiguous"), "{:?}", single.error);
    running.shutdown().await;
}

/// An upstream that logs every request on stderr, as the Python SDK does at INFO, and a
/// gateway whose own stderr nobody reads (MCP lets a stdio client ignore it): the upstream's
/// lines go to the gateway's log, which drops what it cannot write, so the upstream never waits
/// on a full pipe and every call is answered.
#[tokio::test]
async fn a_chatty_upstream_behind_a_stderr_nobody_reads_answers_every_one_of_2000_calls() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    // A stalled upstream fails its call in 5 s rather than the default 60.
    std::fs::write(&config, mount_toml("chat", &["chatty"], "timeout_ms = 5000")).unwrap();
    let mut command = tokio::process::Command::new(GATEWAY);
    command.args(["--config", &config.display().to_string(), "--wait-for-upstreams"]);
    let (transport, stderr) = TokioChildProcess::builder(command).stderr(Stdio::piped()).spawn().unwrap();
    let _unread = stderr.expect("stderr is a pipe");
    let client: Child = ().serve(transport).await.unwrap();
    for n in 0..2_000 {
        let answered = tokio::time::timeout(Duration::from_secs(60), call_child(&client, "chat.small")).await;
        let result = answered.unwrap_or_else(|_| panic!("call {n} of 2000 unanswered"));
        assert_eq!(text(&result), "small", "call {n} of 2000");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_upstreams_stderr_is_logged_line_by_line_tagged_with_its_mount_and_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let (client, log) = gateway_binary(dir.path(), &mount_toml("chat", &["chatty"], "")).await;
    assert_eq!(text(&call_child(&client, "chat.small").await), "small");
    // The upstream logs a request before it answers it, and its lines are passed on in order.
    eventually("the upstream's line of the call in the log", Duration::from_secs(20), || async {
        std::fs::read_to_string(&log).unwrap().contains("of type tools/call").then_some(())
    })
    .await;
    let logged = logged(client, &log).await;
    assert_no_forged_line(&logged);
    for raw in ['\u{1b}', '\u{7}', '\u{202e}', '\r'] {
        assert!(!logged.contains(raw), "{raw:?} reached the log raw: {logged}");
    }
    let upstream: Vec<&str> = logged.lines().filter(|line| line.contains(" INFO upstream: ")).collect();
    let said = |words: &str| {
        upstream.iter().find(|line| line.contains(words)).unwrap_or_else(|| panic!("{words:?} in {logged}"))
    };
    assert!(said("plain words").ends_with(r#" INFO upstream: mount="chat" line="plain words""#), "{logged}");
    let escapes = said("escapes: ");
    assert!(escapes.contains(r"escapes: \u{1b}[2J\u{7} \u{202e}gnp.exe ok\rwritten over"), "{escapes}");
    // The forged line is one of the upstream's own lines, under the gateway's prefix.
    assert!(said("FORGED line").contains(r#"line="2026-01-01T00:00:00.000000Z ERROR fusion-gateway: FORGED line""#));
    assert!(said("not utf-8").contains("line=\"not utf-8: \u{fffd}\u{fffd} end\""), "{logged}");
    // A line longer than the log keeps is cut, and says how much of it was left out.
    let long = said("long: xxx");
    assert!(long.len() < 2_300 && long.contains("...") && long.contains(" cut_bytes="), "{long}");
    assert!(said("of type initialize").contains(r#"mount="chat""#));
}
