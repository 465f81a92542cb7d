//! Streamable HTTP for real: an rmcp client (reqwest transport) and raw HTTP requests against a
//! server bound to a loopback port.

use std::net::SocketAddr;
use std::time::Duration;

use mcp_fusion::auth::{Identity, StaticTokens};
use mcp_fusion::http::{HttpConfig, HttpServer};
use mcp_fusion::wire::{ToolError, parse};
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;

#[derive(Deserialize, JsonSchema)]
struct Echo {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Slow {
    millis: u64,
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

async fn echo(_ctx: Ctx<()>, input: Echo) -> Result<String, ToolError> {
    Ok(input.text)
}

/// Told each time `slow` starts.
static SLOW_STARTED: Notify = Notify::const_new();

async fn slow(_ctx: Ctx<()>, input: Slow) -> Result<String, ToolError> {
    SLOW_STARTED.notify_one();
    tokio::time::sleep(Duration::from_millis(input.millis)).await;
    Ok(format!("slept {} ms", input.millis))
}

async fn session(ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    // Requests to the client reach it only where there is a session to carry them.
    let peer = if ctx.call().peer().is_some() { "peer" } else { "no peer" };
    Ok(format!("{} {peer}", ctx.call().session_id().unwrap_or("none")))
}

async fn whoami(ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    Ok(ctx.call().identity().map(|i| i.subject.clone()).unwrap_or_default())
}

/// Closes its stream, then answers whether there was one.
async fn reconnect(ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    let closed = ctx.close_sse_stream(Duration::from_millis(250)).await;
    Ok(if closed { "answered after closing its stream" } else { "no stream to close" }.to_owned())
}

fn server() -> FusionServer {
    FusionServer::builder("http-test", "1")
        .group(
            Group::new("t", "Test tools.")
                .action(Action::new("echo", "Echo.").handler(echo))
                .action(Action::new("slow", "Sleep, then answer.").handler(slow))
                .action(Action::new("session", "The session id.").handler(session))
                .action(Action::new("whoami", "Who is calling.").requires_identity().handler(whoami))
                .action(Action::new("reconnect", "Close the stream, then answer.").handler(reconnect)),
        )
        .build(())
        .unwrap()
}

struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Running {
    async fn start(config: HttpConfig) -> Running {
        let http = HttpServer::bind(server(), config).await.unwrap();
        let addr = http.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(http.serve(async move {
            let _ = stopped.await;
        }));
        Running { addr, stop: Some(stop), task }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    async fn shutdown(mut self) -> std::io::Result<()> {
        let _ = self.stop.take().map(|stop| stop.send(()));
        tokio::time::timeout(Duration::from_secs(20), self.task).await.expect("serve returns").unwrap()
    }
}

fn loopback() -> HttpConfig {
    HttpConfig::new("127.0.0.1:0")
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap()
}

async fn drive_a_client(url: String) -> String {
    let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    let ok = client
        .call_tool(CallToolRequestParams::new("t").with_arguments(args(json!({"action": "echo", "text": "hi"}))))
        .await;
    assert_eq!(ok.unwrap().content[0].as_text().unwrap().text, "hi");
    let bad = client
        .call_tool(CallToolRequestParams::new("t").with_arguments(args(json!({"action": "echo"}))))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    let envelope = parse(&bad.content[0].as_text().unwrap().text);
    assert_eq!(envelope.fields[0].text, "Missing required field. You sent: (missing). Expected a string.");
    let session =
        client.call_tool(CallToolRequestParams::new("t").with_arguments(args(json!({"action": "session"})))).await;
    let session = session.unwrap().content[0].as_text().unwrap().text.clone();
    client.cancel().await.unwrap();
    session
}

#[tokio::test]
async fn stateful_sessions() {
    let running = Running::start(loopback()).await;
    let session = drive_a_client(running.url()).await;
    let (id, peer) = session.split_once(' ').unwrap();
    assert_eq!((id.len(), peer), (36, "peer"), "a session id and a peer: {session}");
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn stateless_mode_needs_no_session() {
    let running = Running::start(loopback().stateless(true)).await;
    assert_eq!(drive_a_client(running.url()).await, "none no peer");
    // Any request stands alone: a tools/call with no initialize and no session header.
    let response = post(&running.url(), None, &call_frame(1, "echo", json!({"text": "alone"}))).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["result"]["content"][0]["text"], "alone", "{body}");
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn only_the_configured_path_is_served() {
    let running = Running::start(loopback().stateless(true).path("/api/mcp")).await;
    let base = format!("http://{}", running.addr);
    let frame = call_frame(1, "echo", json!({"text": "here"}));
    let served = post(&format!("{base}/api/mcp"), None, &frame).await;
    assert_eq!(served.status(), 200);
    for elsewhere in ["/mcp", "/api/mcpx", "/api", "/"] {
        let response = post(&format!("{base}{elsewhere}"), None, &frame).await;
        assert_eq!(response.status(), 404, "{elsewhere}");
    }
    running.shutdown().await.unwrap();
}

fn call_frame(id: u64, action: &str, mut arguments: Value) -> String {
    arguments["action"] = json!(action);
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "t", "arguments": arguments}})
        .to_string()
}

fn initialize_frame() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
}

async fn post(url: &str, origin: Option<&str>, body: &str) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    request.body(body.to_owned()).send().await.unwrap()
}

#[tokio::test]
async fn closing_a_session_answers_204() {
    let running = Running::start(loopback()).await;
    let response = post(&running.url(), None, &initialize_frame()).await;
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let client = reqwest::Client::new();
    let delete = client.delete(running.url()).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(delete.status(), 204);
    let after = client
        .post(running.url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .body(call_frame(1, "echo", json!({"text": "x"})))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 404);
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_foreign_origin_is_rejected() {
    let running = Running::start(loopback().allowed_origin("https://app.example.com")).await;
    let url = running.url();
    assert_eq!(post(&url, Some("http://evil.example"), &initialize_frame()).await.status(), 403);
    assert_eq!(post(&url, Some("http://localhost:5173"), &initialize_frame()).await.status(), 200);
    assert_eq!(post(&url, Some("https://app.example.com"), &initialize_frame()).await.status(), 200);
    assert_eq!(post(&url, None, &initialize_frame()).await.status(), 200);
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_foreign_host_is_rejected() {
    let running = Running::start(loopback()).await;
    let response = reqwest::Client::new()
        .post(running.url())
        .header("host", "evil.example")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize_frame())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_oversized_body_gets_413() {
    let running = Running::start(loopback().stateless(true).max_body_bytes(1024)).await;
    let big = call_frame(1, "echo", json!({"text": "x".repeat(2048)}));
    assert_eq!(post(&running.url(), None, &big).await.status(), 413);
    let small = call_frame(2, "echo", json!({"text": "fits"}));
    assert_eq!(post(&running.url(), None, &small).await.status(), 200);
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_body_that_is_no_message_gets_a_jsonrpc_error_under_its_id() {
    for stateless in [true, false] {
        let running = Running::start(loopback().stateless(stateless)).await;
        let cases = [
            (r#"{"jsonrpc":"2.0","id":7,"method":5}"#, json!(7), "Invalid request: unrecognized JSON-RPC message"),
            (r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","#, json!("a"), "Parse error: "),
        ];
        for (body, id, message) in cases {
            let response = post(&running.url(), None, body).await;
            assert_eq!(response.status(), 400, "stateless: {stateless}, {body}");
            let refusal: Value = response.json().await.unwrap();
            assert_eq!(refusal["id"], id, "{refusal}");
            let text = refusal["error"]["message"].as_str().unwrap();
            assert!(text.starts_with(message), "stateless: {stateless}: {text}");
        }
        running.shutdown().await.unwrap();
    }
}

#[tokio::test]
async fn shutdown_lets_a_call_in_flight_finish() {
    for stateless in [false, true] {
        let running = Running::start(loopback().stateless(stateless)).await;
        let client = ().serve(StreamableHttpClientTransport::from_uri(running.url())).await.unwrap();
        let in_flight = tokio::spawn(async move {
            let result = client
                .call_tool(
                    CallToolRequestParams::new("t").with_arguments(args(json!({"action": "slow", "millis": 600}))),
                )
                .await;
            (result, client)
        });
        tokio::time::timeout(Duration::from_secs(30), SLOW_STARTED.notified()).await.expect("the call started");
        let addr = running.addr;
        running.shutdown().await.unwrap();
        let (result, client) = in_flight.await.unwrap();
        assert_eq!(result.unwrap().content[0].as_text().unwrap().text, "slept 600 ms", "stateless: {stateless}");
        drop(client);
        // No longer listening.
        assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    }
}

#[tokio::test]
async fn bearer_tokens_become_identities_or_envelopes() {
    // With anonymous callers allowed, refused and missing tokens reach the actions, which
    // answer with envelopes; by default the transport refuses them (hostile_http.rs, beside this file).
    let tokens = StaticTokens::new().token("good-token", Identity::new("ana"));
    let running = Running::start(loopback().authenticator(tokens).allow_anonymous(true)).await;
    let whoami = |token: Option<&'static str>| {
        let url = running.url();
        async move {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url);
            if let Some(token) = token {
                config = config.auth_header(token);
            }
            let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
            let result = client
                .call_tool(CallToolRequestParams::new("t").with_arguments(args(json!({"action": "whoami"}))))
                .await
                .unwrap();
            client.cancel().await.unwrap();
            (result.is_error, result.content[0].as_text().unwrap().text.clone())
        }
    };
    assert_eq!(whoami(Some("good-token")).await, (Some(false), "ana".to_owned()));
    let (is_error, refused) = whoami(Some("bad-token")).await;
    assert_eq!(is_error, Some(true));
    assert_eq!(parse(&refused).error.code.as_str(), "UNAUTHORIZED");
    let (_, anonymous) = whoami(None).await;
    assert_eq!(parse(&anonymous).error.code.as_str(), "AUTH_REQUIRED");

    // A header that is no bearer token at all is refused by the transport.
    let response = reqwest::Client::new()
        .post(running.url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", "Basic YW5hOnB3")
        .body(initialize_frame())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        r#"Bearer error="invalid_request", error_description="expected a bearer token""#
    );
    running.shutdown().await.unwrap();
}

/// The events of an SSE body: (`id`, `retry`, `data`) each.
fn sse_events(body: &str) -> Vec<(Option<String>, Option<String>, String)> {
    body.split("\n\n")
        .filter(|event| !event.trim().is_empty())
        .map(|event| {
            let field = |name: &str| {
                event.lines().find_map(|line| line.strip_prefix(name).map(|value| value.trim_start().to_owned()))
            };
            (field("id:"), field("retry:"), field("data:").unwrap_or_default())
        })
        .collect()
}

#[tokio::test]
async fn a_call_that_closes_its_stream_is_answered_on_the_stream_the_client_resumes() {
    let running = Running::start(loopback()).await;
    // A client that can be asked something: its calls are answered on a stream of the session
    // (one that can be asked nothing may get one JSON body on the direct path).
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "raw", "version": "0"}}});
    let response = post(&running.url(), None, &initialize.to_string()).await;
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let client = reqwest::Client::new();
    let send = |body: String| {
        client
            .post(running.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .header("mcp-session-id", &session)
            .body(body)
            .send()
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(send(initialized).await.unwrap().status(), 202);

    // The POST's stream ends without the answer, its last event telling when to come back.
    let call = send(call_frame(7, "reconnect", json!({}))).await.unwrap();
    assert!(call.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let events = sse_events(&tokio::time::timeout(Duration::from_secs(20), call.text()).await.unwrap().unwrap());
    assert!(events.iter().all(|(_, _, data)| !data.contains("\"result\"")), "{events:?}");
    let (last_id, retry, _) = events.last().expect("a priming event before the stream closed");
    assert_eq!(retry.as_deref(), Some("250"), "{events:?}");
    let last_id = last_id.clone().expect("the priming event has an id");

    // The client comes back with the last event it read: the answer is on the resumed stream.
    let mut resumed = client
        .get(running.url())
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", &session)
        .header("last-event-id", &last_id)
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    let mut body = String::new();
    let answer = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let Some(chunk) = resumed.chunk().await.unwrap() else {
                panic!("the stream ended before the answer: {body}")
            };
            body.push_str(std::str::from_utf8(&chunk).unwrap());
            let answer = sse_events(&body).into_iter().find_map(|(_, _, data)| {
                serde_json::from_str::<Value>(&data).ok().filter(|message| message["id"] == 7)
            });
            if let Some(answer) = answer {
                return answer;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "answered after closing its stream", "{answer}");
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn rmcps_client_resumes_a_closed_stream_and_a_call_without_one_has_nothing_to_close() {
    for (config, expected) in
        [(loopback(), "answered after closing its stream"), (loopback().stateless(true), "no stream to close")]
    {
        let running = Running::start(config).await;
        let client = ().serve(StreamableHttpClientTransport::from_uri(running.url())).await.unwrap();
        let call = CallToolRequestParams::new("t").with_arguments(args(json!({"action": "reconnect"})));
        let result = tokio::time::timeout(Duration::from_secs(20), client.call_tool(call)).await.unwrap().unwrap();
        assert_eq!(result.content[0].as_text().unwrap().text, expected);
        client.cancel().await.unwrap();
        running.shutdown().await.unwrap();
    }
}
