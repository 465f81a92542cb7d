//! The direct path answers byte for byte what rmcp's service answers: every request the
//! conformance scenarios send (each fixture tool, the lists, each resource and prompt, a
//! completion, a ping, `server/discover`, and what a model gets wrong: an unknown tool, bad
//! arguments, an unknown method), in the forms of 2025-11-25 (no session: stateless) and of
//! 2026-07-28 (its version in `_meta` and the headers), through the same checks, once with the
//! direct path and once without it.

use axum::body::Body;
use http::Request;
use mcp_fusion::http::HttpConfig;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

/// One request's answer: its HTTP status, its content type, and its JSON-RPC message's bytes
/// (an event stream's one message, taken from its `data:` line).
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    status: u16,
    message: String,
}

async fn ask(app: axum::Router, version: &str, body: &Value) -> (Answer, bool) {
    ask_in(app, None, version, body).await
}

async fn ask_in(app: axum::Router, session: Option<&str>, version: &str, body: &Value) -> (Answer, bool) {
    let mut request = Request::post("/mcp");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let mut request = request
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", version);
    if version >= "2026-07-28" {
        request = request.header("mcp-method", body["method"].as_str().unwrap());
        let params = &body["params"];
        if let Some(name) = params["name"].as_str().or(params["uri"].as_str()) {
            request = request.header("mcp-name", name);
        }
    }
    let request = request.body(Body::from(body.to_string())).unwrap();
    let response = app.oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let streamed = response.headers().get("content-type").is_some_and(|value| value == "text/event-stream");
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let message = if streamed {
        let data = text.lines().filter_map(|line| line.strip_prefix("data: ")).find(|data| !data.is_empty());
        data.unwrap_or_default().to_owned()
    } else {
        text
    };
    (Answer { status, message }, streamed)
}

fn app(config: HttpConfig) -> axum::Router {
    let server = fusion_conformance_server::server().unwrap();
    mcp_fusion::http::router(server, &config, CancellationToken::new())
}

fn config(stateless: bool, direct: bool) -> HttpConfig {
    HttpConfig::new("127.0.0.1:0").stateless(stateless).direct_path(direct)
}

/// The requests of the scenarios, each as a JSON-RPC request with id 1.
fn requests() -> Vec<Value> {
    let mut requests: Vec<Value> = fusion_conformance_server::TOOL_NAMES
        .iter()
        // One edits the server; the other closes its stream, so rmcp answers it on the stream
        // the client resumes, where the direct path has no stream to close.
        .filter(|tool| !["test_trigger_tool_change", "test_reconnection"].contains(*tool))
        .map(|tool| json!({"name": tool, "arguments": {}}))
        .map(|params| json!({"method": "tools/call", "params": params}))
        .collect();
    requests.extend([
        json!({"method": "tools/list"}),
        json!({"method": "tools/call", "params": {"name": "test_simpel_text", "arguments": {}}}),
        json!({"method": "tools/call", "params": {"name": "test_tool_with_progress", "arguments": {"steps": "three"}}}),
        json!({"method": "tools/call", "params": {"name": "test_simple_text", "arguments": []}}),
        json!({"method": "resources/list"}),
        json!({"method": "resources/templates/list"}),
        json!({"method": "resources/read", "params": {"uri": "test://static-text"}}),
        json!({"method": "resources/read", "params": {"uri": "test://static-binary"}}),
        json!({"method": "resources/read", "params": {"uri": "test://template/42/data"}}),
        json!({"method": "resources/read", "params": {"uri": "test://no-such-resource"}}),
        json!({"method": "prompts/list"}),
        json!({"method": "prompts/get", "params": {"name": "test_simple_prompt"}}),
        json!({"method": "prompts/get", "params": {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}}),
        json!({"method": "prompts/get", "params": {"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://x"}}}),
        json!({"method": "prompts/get", "params": {"name": "test_prompt_with_image"}}),
        json!({"method": "prompts/get", "params": {"name": "test_prompt_with_arguments"}}),
        json!({"method": "completion/complete", "params": {"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "a"}}}),
        json!({"method": "ping"}),
        json!({"method": "server/discover"}),
        json!({"method": "no/such/method"}),
    ]);
    for request in &mut requests {
        request["jsonrpc"] = json!("2.0");
        request["id"] = json!(1);
    }
    requests
}

/// Whether the direct path answers `request` (with sessions): not params of the wrong shape,
/// which rmcp decodes as a custom request, nor a method it leaves to rmcp, nor
/// `server/discover` without the version it must name.
fn answered_directly(request: &Value) -> bool {
    let method = request["method"].as_str().unwrap();
    let named = !request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].is_null();
    // On 2026-07-28 a tool that mirrors an argument in an `Mcp-Param-*` header is rmcp's to
    // check, and so to answer.
    let mirrors_a_header = named && request["params"]["name"] == "test_param_header";
    !request["params"]["arguments"].is_array()
        && method != "no/such/method"
        && (method != "server/discover" || named)
        && !mirrors_a_header
}

/// The request in the form of 2026-07-28: its version and capabilities in its `_meta`.
fn of_2026(mut request: Value) -> Value {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "direct-path-test", "version": "1"},
    });
    match request.get_mut("params") {
        Some(params) => params["_meta"] = meta,
        None => request["params"] = json!({"_meta": meta}),
    }
    request
}

#[tokio::test]
async fn stateless_answers_are_the_same_bytes_on_both_paths() {
    let mut compared = 0;
    for request in requests() {
        for (version, request) in [("2025-11-25", request.clone()), ("2026-07-28", of_2026(request))] {
            let (rmcp, _) = ask(app(config(true, false)), version, &request).await;
            let (direct, _) = ask(app(config(true, true)), version, &request).await;
            assert_eq!(direct, rmcp, "{version}: {request}");
            assert!(rmcp.message.starts_with('{'), "{version}: {request} got {rmcp:?}");
            compared += 1;
        }
    }
    assert!(compared > 60, "{compared}");
}

#[tokio::test]
async fn with_sessions_a_2026_request_is_answered_directly_in_the_same_bytes() {
    for request in requests().into_iter().map(of_2026) {
        let (rmcp, rmcp_streamed) = ask(app(config(false, false)), "2026-07-28", &request).await;
        let (direct, direct_streamed) = ask(app(config(false, true)), "2026-07-28", &request).await;
        assert_eq!(direct, rmcp, "{request}");
        // rmcp opens a stream for a `200`; the direct path answers in one JSON body. Params of
        // the wrong shape are rmcp's to decode (as a custom request), and so to answer.
        let expected = (rmcp.status == 200, rmcp.status == 200 && !answered_directly(&request));
        assert_eq!((rmcp_streamed, direct_streamed), expected, "{request}");
    }
}

#[tokio::test]
async fn a_request_that_may_hear_more_than_its_answer_goes_to_rmcp() {
    let progress = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p1"}}});
    let mut logged = of_2026(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "test_tool_with_logging", "arguments": {}}}));
    logged["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    // Stateless, rmcp streams what a call sends before its answer; with sessions, it streams
    // every answer to a request of 2026-07-28, and the direct path none.
    for (stateless, version, request) in [(true, "2025-11-25", progress), (false, "2026-07-28", logged)] {
        let (answer, streamed) = ask(app(config(stateless, true)), version, &request).await;
        assert!(streamed, "{version}: answered on the direct path: {answer:?}");
    }
}

/// A session of MCP 2025-06-18 opened on `app` by a client that declared `capabilities`,
/// through `initialize` and `notifications/initialized`. (In a session of 2025-11-25 that did
/// not declare the tasks extension, `tools/list` is served under a method of that version's
/// experimental tasks, which rmcp answers.)
async fn open_session(app: &axum::Router, capabilities: Value) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": capabilities,
        "clientInfo": {"name": "direct-path-test", "version": "1"}}});
    let request = Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Body::from(initialize.to_string()))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (answer, _) = ask_in(app.clone(), Some(&session), "2025-06-18", &initialized).await;
    assert_eq!(answer.status, 202, "{answer:?}");
    session
}

/// Waits until the server has taken in the session's `notifications/initialized` (rmcp hands
/// it on after answering it): from then on a ping in the session is answered without a stream,
/// when the direct path answers it at all.
async fn settled(app: &axum::Router, session: &str) {
    let ping = json!({"jsonrpc": "2.0", "id": 0, "method": "ping"});
    for _ in 0..1000 {
        if !ask_in(app.clone(), Some(session), "2025-06-18", &ping).await.1 {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("the session's pings are still answered on a stream");
}

#[tokio::test]
async fn in_a_session_whose_client_cannot_be_asked_anything_the_answer_is_direct_and_the_same() {
    let (rmcp_app, direct_app) = (app(config(false, false)), app(config(false, true)));
    let rmcp_session = open_session(&rmcp_app, json!({})).await;
    let direct_session = open_session(&direct_app, json!({})).await;
    settled(&direct_app, &direct_session).await;
    for request in requests() {
        let (rmcp, rmcp_streamed) = ask_in(rmcp_app.clone(), Some(&rmcp_session), "2025-06-18", &request).await;
        let (direct, direct_streamed) = ask_in(direct_app.clone(), Some(&direct_session), "2025-06-18", &request).await;
        assert_eq!(direct, rmcp, "{request}");
        assert_eq!((rmcp_streamed, direct_streamed), (true, !answered_directly(&request)), "{request}");
    }
    // A client that may be asked for its roots mid-call is served by rmcp, which routes the
    // question through the session.
    let asked = open_session(&direct_app, json!({"roots": {}})).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "test_simple_text", "arguments": {}}});
    let (_, streamed) = ask_in(direct_app.clone(), Some(&asked), "2025-06-18", &call).await;
    assert!(streamed);
    // So is a request naming a session that is not there.
    let (answer, _) = ask_in(direct_app, Some("no-such-session"), "2025-06-18", &call).await;
    assert_eq!(answer.status, 404, "{answer:?}");
}

#[tokio::test(start_paused = true)]
async fn a_session_used_only_on_the_direct_path_is_kept_alive() {
    let config = config(false, true).session_idle_timeout(std::time::Duration::from_secs(2));
    let app = app(config);
    let (used, idle) = (open_session(&app, json!({})).await, open_session(&app, json!({})).await);
    settled(&app, &used).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "test_simple_text", "arguments": {}}});
    // Four times the idle timeout, a call every half second: each answered directly.
    for _ in 0..16 {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let (answer, streamed) = ask_in(app.clone(), Some(&used), "2025-06-18", &call).await;
        assert_eq!((answer.status, streamed), (200, false), "{answer:?}");
    }
    // The session no call kept alive has expired.
    let (answer, _) = ask_in(app.clone(), Some(&idle), "2025-06-18", &call).await;
    assert_eq!(answer.status, 404, "{answer:?}");
}
