//! The HTTP transport tried as an attacker and a careless client would: requests without
//! credentials, other callers' sessions, too many sessions and connections, slow headers,
//! ambiguous requests, and rate limits walked around by new sessions or shared by strangers.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mcp_fusion::auth::{Identity, StaticTokens};
use mcp_fusion::guard::RateLimit;
use mcp_fusion::http::{HttpConfig, HttpServer, ProtectedResource};
use mcp_fusion::wire::{ToolError, parse};
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::{Notify, oneshot};

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// Told each time `nap` starts.
static NAPPING: Notify = Notify::const_new();
/// Ends the nap under way, or the next one.
static WAKE: Notify = Notify::const_new();

async fn nap(_ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    NAPPING.notify_one();
    WAKE.notified().await;
    Ok("rested".into())
}

async fn whoami(ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    Ok(ctx.call().identity().map(|i| i.subject.clone()).unwrap_or_else(|| "anonymous".into()))
}

fn server(limit: Option<RateLimit>) -> FusionServer {
    let mut builder = FusionServer::builder("hostile", "1");
    if let Some(limit) = limit {
        builder = builder.rate_limit(limit);
    }
    builder
        .group(
            Group::new("t", "Test tools.")
                .action(Action::new("whoami", "Who is calling.").handler(whoami))
                .action(Action::new("nap", "Sleep until woken.").handler(nap)),
        )
        .build(())
        .unwrap()
}

struct Running {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl Running {
    async fn start(config: HttpConfig, limit: Option<RateLimit>) -> Running {
        let http = HttpServer::bind(server(limit), config).await.unwrap();
        let addr = http.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(http.serve(async move {
            let _ = stopped.await;
        }));
        Running { addr, _stop: stop }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// A POST of `body`, with a bearer `token` and a `session` if given.
    async fn post(&self, token: Option<&str>, session: Option<&str>, body: &Value) -> reqwest::Response {
        self.try_post(token, session, body).await.unwrap()
    }

    /// [`Running::post`], or the error of a connection closed without an answer.
    async fn try_post(
        &self,
        token: Option<&str>,
        session: Option<&str>,
        body: &Value,
    ) -> reqwest::Result<reqwest::Response> {
        let mut request = reqwest::Client::new()
            .post(self.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.body(body.to_string()).send().await
    }

    /// A new session for `token`: its id.
    async fn open(&self, token: Option<&str>) -> String {
        let response = self.post(token, None, &initialize()).await;
        assert_eq!(response.status(), 200, "{:?}", response.text().await);
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let ready = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post(token, Some(&session), &ready).await.status(), 202);
        session
    }

    /// `whoami` in `session`: the text of its result.
    async fn whoami(&self, token: Option<&str>, session: Option<&str>) -> (u16, String) {
        let response = self.post(token, session, &call(7)).await;
        let status = response.status().as_u16();
        let body = response.text().await.unwrap();
        // A session's answer comes on an SSE stream, after an empty priming event: the first
        // `data:` line with data holds the JSON-RPC message.
        let message = body.lines().filter_map(|line| line.strip_prefix("data: ")).find(|data| !data.is_empty());
        let message = message.unwrap_or(&body).to_owned();
        (status, message)
    }

    /// Writes `request` raw and reads until the server closes the connection.
    async fn raw(&self, request: &str) -> String {
        let mut tcp = TcpStream::connect(self.addr).await.unwrap();
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut answer)).await.unwrap().unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
}

fn call(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "t", "arguments": {"action": "whoami"}}})
}

fn loopback() -> HttpConfig {
    HttpConfig::new("127.0.0.1:0")
}

fn two_callers() -> StaticTokens {
    StaticTokens::new().token("ana-token", Identity::new("ana")).token("bob-token", Identity::new("bob"))
}

#[tokio::test]
async fn every_request_needs_a_token_when_an_authenticator_is_set() {
    let running = Running::start(loopback().authenticator(two_callers()), None).await;
    // No session is created for a request without a token: 401 with the challenge.
    let anonymous = running.post(None, None, &initialize()).await;
    assert_eq!(anonymous.status(), 401);
    assert_eq!(anonymous.headers()["www-authenticate"], r#"Bearer realm="mcp""#);
    assert!(anonymous.headers().get("mcp-session-id").is_none());
    let refused = running.post(Some("stolen"), None, &initialize()).await;
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.headers()["www-authenticate"],
        r#"Bearer error="invalid_token", error_description="the bearer token is not valid""#
    );

    // Inside a session too: every method, the GET stream and DELETE.
    let session = running.open(Some("ana-token")).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(running.post(None, Some(&session), &list).await.status(), 401);
    let client = reqwest::Client::new();
    let get = client.get(running.url()).header("accept", "text/event-stream").header("mcp-session-id", &session);
    assert_eq!(get.send().await.unwrap().status(), 401);
    let delete = client.delete(running.url()).header("mcp-session-id", &session);
    assert_eq!(delete.send().await.unwrap().status(), 401);
    // The session is untouched, and answers its owner.
    assert_eq!(running.whoami(Some("ana-token"), Some(&session)).await.0, 200);
}

#[tokio::test]
async fn a_protected_resource_publishes_its_metadata_and_every_401_names_it() {
    let resource = ProtectedResource::new("https://mcp.example.com/mcp")
        .and_then(|resource| resource.authorization_server("https://auth.example.com"))
        .and_then(|resource| resource.scopes(["billing:read", "billing:write"]))
        .unwrap();
    let config = loopback().authenticator(two_callers()).protected_resource(resource);
    let running = Running::start(config, None).await;
    let metadata = r#"resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#;
    let anonymous = running.post(None, None, &initialize()).await;
    assert_eq!(anonymous.status(), 401);
    assert_eq!(anonymous.headers()["www-authenticate"], format!(r#"Bearer realm="mcp", {metadata}"#));
    let refused = running.post(Some("stolen"), None, &initialize()).await;
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.headers()["www-authenticate"],
        format!(r#"Bearer error="invalid_token", error_description="the bearer token is not valid", {metadata}"#)
    );

    // The document, with no token, at the path-aware and at the bare well-known path.
    let expected = json!({
        "resource": "https://mcp.example.com/mcp",
        "authorization_servers": ["https://auth.example.com"],
        "scopes_supported": ["billing:read", "billing:write"],
        "bearer_methods_supported": ["header"],
    });
    let client = reqwest::Client::new();
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let response = client.get(format!("http://{}{path}", running.addr)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(response.headers()["access-control-allow-origin"], "*");
        let document: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
        assert_eq!(document, expected, "{path}");
    }
    // Other paths under it are not served, and the endpoint's Host rule applies.
    let other = client.get(format!("http://{}/.well-known/oauth-protected-resource/other", running.addr));
    assert_eq!(other.send().await.unwrap().status(), 404);
    let rebound = client
        .get(format!("http://{}/.well-known/oauth-protected-resource/mcp", running.addr))
        .header("host", "evil.example");
    assert_eq!(rebound.send().await.unwrap().status(), 403);
    // Still no session was created by the refused requests: the first one a token opens works.
    let session = running.open(Some("ana-token")).await;
    assert_eq!(running.whoami(Some("ana-token"), Some(&session)).await.0, 200);
}

#[tokio::test]
async fn a_session_answers_only_the_identity_that_opened_it() {
    let running = Running::start(loopback().authenticator(two_callers()), None).await;
    let session = running.open(Some("ana-token")).await;
    // Another identity cannot use it, nor end it: 404, as for a session that does not exist.
    let (status, body) = running.whoami(Some("bob-token"), Some(&session)).await;
    assert_eq!(status, 404, "{body}");
    let delete =
        reqwest::Client::new().delete(running.url()).bearer_auth("bob-token").header("mcp-session-id", &session);
    assert_eq!(delete.send().await.unwrap().status(), 404);
    let (status, body) = running.whoami(Some("ana-token"), Some(&session)).await;
    assert_eq!(status, 200);
    assert!(body.contains(r#""text":"ana""#), "{body}");
    let delete =
        reqwest::Client::new().delete(running.url()).bearer_auth("ana-token").header("mcp-session-id", &session);
    assert_eq!(delete.send().await.unwrap().status(), 204);
}

#[tokio::test]
async fn sessions_are_capped_in_all_and_per_caller() {
    let config = loopback().authenticator(two_callers()).max_sessions(3).max_sessions_per_caller(2);
    let running = Running::start(config, None).await;
    let first = running.open(Some("ana-token")).await;
    running.open(Some("ana-token")).await;
    let third = running.post(Some("ana-token"), None, &initialize()).await;
    assert_eq!(third.status(), 429);
    assert_eq!(third.headers()["retry-after"], "30");
    let refusal: Value = third.json().await.unwrap();
    assert!(refusal["error"]["message"].as_str().unwrap().contains("maximum of 2 open sessions"), "{refusal}");
    // Another caller still gets one, up to the server's cap.
    running.open(Some("bob-token")).await;
    let full = running.post(Some("bob-token"), None, &initialize()).await;
    assert_eq!(full.status(), 503);
    // A session ended frees its slot.
    let delete = reqwest::Client::new().delete(running.url()).bearer_auth("ana-token").header("mcp-session-id", &first);
    assert_eq!(delete.send().await.unwrap().status(), 204);
    running.open(Some("ana-token")).await;
}

#[tokio::test]
async fn an_idle_session_expires_and_frees_its_slot() {
    // Idle for 2 s: long enough that the session is surely alive when the 503 below is asked.
    let config = loopback().max_sessions(1).session_idle_timeout(Duration::from_secs(2));
    let running = Running::start(config, None).await;
    let session = running.open(None).await;
    assert_eq!(running.post(None, None, &initialize()).await.status(), 503);
    // A refused initialize touches no session: asked again until the idle one has expired and
    // the new one takes its slot.
    let deadline = Instant::now() + Duration::from_secs(30);
    let opened = loop {
        let response = running.post(None, None, &initialize()).await;
        if response.status() != 503 {
            break response;
        }
        assert!(Instant::now() < deadline, "the idle session still held its slot after 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(opened.status(), 200);
    assert_eq!(running.whoami(None, Some(&session)).await.0, 404);
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order_on_the_direct_path() {
    let running = Running::start(loopback().stateless(true), None).await;
    let host = format!("127.0.0.1:{}", running.addr.port());
    let head = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    let request = |id: u64, last: bool| {
        let body = call(id).to_string();
        let close = if last { "Connection: close\r\n" } else { "" };
        format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\n{head}{close}Content-Length: {}\r\n\r\n{body}", body.len())
    };
    // Three requests in one write, the last closing the connection: three answers, in order.
    let answer = running.raw(&(request(1, false) + &request(2, false) + &request(3, true))).await;
    assert_eq!(answer.matches("HTTP/1.1 200 OK").count(), 3, "{answer}");
    let ids: Vec<usize> = (1..=3).map(|id| answer.find(&format!("\"id\":{id},")).unwrap()).collect();
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "{answer}");
    assert_eq!(answer.matches("content-type: application/json").count(), 3, "{answer}");
}

#[tokio::test]
async fn ambiguous_requests_are_refused() {
    let running = Running::start(loopback(), None).await;
    let host = format!("127.0.0.1:{}", running.addr.port());
    let body = initialize().to_string();
    let head = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\n";
    // Content-Length and Transfer-Encoding together: a proxy may read one, this server the other.
    let smuggled = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{head}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    let answer = running.raw(&smuggled).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("not both"), "{answer}");
    let two_hosts = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nHost: evil.example\r\n{head}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    assert!(running.raw(&two_hosts).await.starts_with("HTTP/1.1 400"));
    let absolute = format!(
        "POST http://evil.example/mcp HTTP/1.1\r\nHost: {host}\r\n{head}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let answer = running.raw(&absolute).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    // The same request, well formed, is served.
    let fine = format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\n{head}Content-Length: {}\r\n\r\n{body}", body.len());
    assert!(running.raw(&fine).await.starts_with("HTTP/1.1 200"));
}

#[tokio::test]
async fn the_loopback_origin_is_accepted_over_https_too() {
    let running = Running::start(loopback(), None).await;
    for origin in ["https://localhost", "https://localhost:3000", "https://127.0.0.1:8443", "http://localhost"] {
        let response = reqwest::Client::new()
            .post(running.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("origin", origin)
            .body(initialize().to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{origin}");
    }
}

#[tokio::test]
async fn slow_headers_and_extra_connections_are_cut_off() {
    let config = loopback().max_connections(2).header_timeout(Duration::from_millis(400));
    let running = Running::start(config, None).await;
    // Two connections sending their headers a byte at a time hold both slots…
    let mut slow = Vec::new();
    for _ in 0..2 {
        let mut tcp = TcpStream::connect(running.addr).await.unwrap();
        tcp.write_all(b"POST /mcp HTTP/1.1\r\nHo").await.unwrap();
        slow.push(tcp);
    }
    // …so a third, accepted after them, is closed as it arrives…
    let mut third = TcpStream::connect(running.addr).await.unwrap();
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(2), third.read(&mut byte)).await.unwrap();
    assert!(matches!(read, Ok(0) | Err(_)), "the third connection was served: {read:?}");
    // …until the header deadline ends the slow ones.
    for tcp in &mut slow {
        let mut rest = Vec::new();
        let ended = tokio::time::timeout(Duration::from_secs(3), tcp.read_to_end(&mut rest)).await;
        assert!(ended.is_ok(), "a slow connection outlived the header deadline");
    }
    // Their slots come back as the server lets go of them.
    let deadline = Instant::now() + Duration::from_secs(30);
    let served = loop {
        match running.try_post(None, None, &initialize()).await {
            Ok(response) => break response,
            Err(error) => assert!(Instant::now() < deadline, "no slot came back within 30 s: {error}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(served.status(), 200);
}

#[tokio::test]
async fn a_rate_limit_counts_per_identity_across_sessions() {
    let limit = RateLimit::new(2, Duration::from_secs(60));
    let running = Running::start(loopback().authenticator(two_callers()), Some(limit)).await;
    // A new session is no new budget for the same identity.
    for expected in ["ana", "ana", "RATE_LIMITED"] {
        let session = running.open(Some("ana-token")).await;
        let (_, body) = running.whoami(Some("ana-token"), Some(&session)).await;
        assert!(body.contains(expected), "{expected}: {body}");
    }
    let session = running.open(Some("bob-token")).await;
    assert!(running.whoami(Some("bob-token"), Some(&session)).await.1.contains("bob"));
}

#[tokio::test]
async fn stateless_anonymous_callers_are_counted_by_address() {
    let limit = RateLimit::new(1, Duration::from_secs(60));
    let config = loopback().stateless(true).client_address_header(http::HeaderName::from_static("x-forwarded-for"));
    let running = Running::start(config, Some(limit)).await;
    let from = |address: &'static str| {
        let url = running.url();
        async move {
            let response = reqwest::Client::new()
                .post(url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("x-forwarded-for", address)
                .body(call(1).to_string())
                .send()
                .await
                .unwrap();
            let body: Value = response.json().await.unwrap();
            let text = body["result"]["content"][0]["text"].as_str().unwrap().to_owned();
            if body["result"]["isError"] == true { parse(&text).error.code.as_str().to_owned() } else { text }
        }
    };
    // One caller's burst does not block another.
    assert_eq!(from("203.0.113.7").await, "anonymous");
    assert_eq!(from("203.0.113.7, 10.0.0.1").await, "RATE_LIMITED");
    assert_eq!(from("198.51.100.2").await, "anonymous");
}

/// A raw POST body: the status and the JSON-RPC error it answered.
async fn post_raw(running: &Running, session: Option<&str>, body: &'static str) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(running.url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.body(body).send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn a_body_that_is_not_json_rpc_gets_400_and_a_json_rpc_error_under_its_id() {
    let running = Running::start(loopback(), None).await;
    let (status, body) = post_raw(&running, None, r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","#).await;
    assert_eq!(status, 400, "{body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (json!(7), json!(-32700)), "{body}");
    let (status, body) = post_raw(&running, None, "not json at all").await;
    assert_eq!(status, 400);
    assert!(body.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#), "{body}");
    // An id beyond 64 bits comes back exactly as it was written.
    let (status, body) =
        post_raw(&running, None, r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#).await;
    assert_eq!(status, 400);
    assert!(body.starts_with(r#"{"jsonrpc":"2.0","id":18446744073709551616,"error":{"code":-32600"#), "{body}");
    let (status, body) = post_raw(&running, None, r#"{"jsonrpc":"2.0","id":"x","method":5}"#).await;
    assert_eq!(status, 400);
    assert!(body.starts_with(r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32600"#), "{body}");
}

#[tokio::test]
async fn an_id_in_flight_in_a_session_is_not_taken_twice() {
    let running = Running::start(loopback(), None).await;
    let session = running.open(None).await;
    let nap = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "t", "arguments": {"action": "nap"}}});
    let (first, second) = tokio::join!(running.post(None, Some(&session), &nap), async {
        tokio::time::timeout(Duration::from_secs(30), NAPPING.notified()).await.expect("the first call started");
        let second = running.post(None, Some(&session), &nap).await;
        WAKE.notify_one();
        second
    });
    assert_eq!(first.status(), 200);
    assert!(first.text().await.unwrap().contains("rested"));
    assert_eq!(second.status(), 400);
    let refusal: Value = second.json().await.unwrap();
    assert_eq!(refusal["id"], 9);
    assert!(refusal["error"]["message"].as_str().unwrap().contains("already in use"), "{refusal}");
    // Once answered, the id is free again.
    WAKE.notify_one();
    let again = running.post(None, Some(&session), &nap).await;
    assert_eq!(again.status(), 200);
    assert!(again.text().await.unwrap().contains("rested"));
}
