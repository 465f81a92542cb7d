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
    let mut request = Request::post("/mcp")
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
    HttpConfig::new("127.0.0.1:0".parse().unwrap()).stateless(stateless).direct_path(direct)
}

/// The requests of the scenarios, each as a JSON-RPC request with id 1.
fn requests() -> Vec<Value> {
    let mut requests: Vec<Value> = fusion_conformance_server::TOOL_NAMES
        .iter()
        .filter(|tool| **tool != "test_trigger_tool_change")
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
        let direct_answers = !request["params"]["arguments"].is_array();
        let expected = (rmcp.status == 200, rmcp.status == 200 && !direct_answers);
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
