//! MCP 2026-07-28 over HTTP as raw JSON-RPC: no handshake, each request carrying its version and
//! capabilities in its own `_meta` and headers, the answer on the request's own stream.

use std::net::SocketAddr;

use std::time::Duration;

use mcp_fusion::auth::{Identity, StaticTokens};
use mcp_fusion::cache::{CacheHint, Listing};
use mcp_fusion::http::{HttpConfig, HttpServer};
use mcp_fusion::prompt::Prompt;
use mcp_fusion::resource::{Resource, ResourceTemplate};
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tracing_subscriber::layer::SubscriberExt as _;

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

async fn chatty(_ctx: Ctx<()>, _input: Nothing) -> Result<&'static str, ToolError> {
    tracing::debug!(target: "billing", "looking closely");
    tracing::info!(target: "billing", invoices = 3, "counted the invoices");
    tracing::warn!(target: "billing", "one is overdue");
    Ok("done")
}

fn server() -> FusionServer {
    FusionServer::builder("http-2026", "1")
        .group(Group::new("t", "Test tools.").action(Action::new("chatty", "Logs three events.").handler(chatty)))
        .build(())
        .unwrap()
}

/// Binds `server` on a loopback port and serves it until the test's runtime ends.
async fn serve(server: FusionServer) -> SocketAddr {
    serve_with(server, HttpConfig::new("127.0.0.1:0")).await
}

pub(super) async fn serve_with(server: FusionServer, config: HttpConfig) -> SocketAddr {
    let http = HttpServer::bind(server, config).await.unwrap();
    let addr = http.local_addr();
    tokio::spawn(http.serve(std::future::pending()));
    addr
}

/// The `_meta` every 2026-07-28 request carries, with `extra` keys added.
pub(super) fn meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    });
    if let (Some(meta), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        meta.extend(extra);
    }
    meta
}

/// Posts one request (`params` get `_meta` unless they have one) with the headers 2026-07-28
/// asks for, and returns the HTTP status and the JSON-RPC messages of the answer, in order.
async fn request(addr: SocketAddr, method: &str, params: Map<String, Value>) -> (u16, Vec<Value>) {
    send(addr, None, method, params).await
}

/// [`request`] with a bearer token.
pub(super) async fn send(
    addr: SocketAddr,
    bearer: Option<&str>,
    method: &str,
    mut params: Map<String, Value>,
) -> (u16, Vec<Value>) {
    params.entry("_meta").or_insert_with(|| meta(json!({})));
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(token) = bearer {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(Value::String(name)) = params.get("name").or_else(|| params.get("uri")).or_else(|| params.get("taskId"))
    {
        request = request.header("mcp-name", name.as_str());
    }
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let response = request.body(body.to_string()).send().await.unwrap();
    let status = response.status().as_u16();
    (status, messages(&response.text().await.unwrap()))
}

/// The JSON-RPC messages of an answer, in order: a JSON body, or the `data:` lines of an SSE
/// stream (an event without data, a stream's priming event, carries none).
pub(super) fn messages(body: &str) -> Vec<Value> {
    if body.trim_start().starts_with('{') {
        return vec![serde_json::from_str(body).unwrap()];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:").map(str::trim))
        .filter(|data| !data.is_empty())
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

fn chatty_call(meta: Value) -> Map<String, Value> {
    json!({"name": "t", "arguments": {"action": "chatty"}, "_meta": meta}).as_object().cloned().unwrap()
}

#[tokio::test]
async fn a_calls_log_messages_ride_its_own_stream_at_its_level_and_none_without_one() {
    let _logging = tracing::dispatcher::set_default(&tracing::Dispatch::new(
        tracing_subscriber::registry().with(mcp_fusion::logging::layer()),
    ));
    let addr = serve(server()).await;

    let (status, quiet) = request(addr, "tools/call", chatty_call(meta(json!({})))).await;
    assert_eq!(status, 200);
    assert_eq!(quiet.len(), 1, "{quiet:?}");
    assert_eq!(quiet[0]["result"]["content"][0]["text"], "done");

    let (status, heard) =
        request(addr, "tools/call", chatty_call(meta(json!({"io.modelcontextprotocol/logLevel": "info"})))).await;
    assert_eq!(status, 200);
    let methods: Vec<_> = heard.iter().map(|m| m["method"].as_str().unwrap_or("(result)")).collect();
    assert_eq!(methods, ["notifications/message", "notifications/message", "(result)"]);
    assert_eq!(
        heard[0]["params"],
        json!({"level": "info", "logger": "billing", "data": {"message": "counted the invoices", "invoices": 3}})
    );
    assert_eq!(
        heard[1]["params"],
        json!({"level": "warning", "logger": "billing", "data": {"message": "one is overdue"}})
    );
    assert_eq!(heard[2]["result"]["content"][0]["text"], "done");

    let (status, refused) =
        request(addr, "tools/call", chatty_call(meta(json!({"io.modelcontextprotocol/logLevel": "loud"})))).await;
    assert_eq!((status, refused[0]["error"]["code"].as_i64()), (200, Some(-32602)), "{refused:?}");
}

#[tokio::test]
async fn methods_2026_07_28_removed_answer_404_method_not_found_with_what_to_do_instead() {
    let addr = serve(server()).await;
    // rmcp answers a removed ping and well-formed subscriptions itself; the framework answers
    // what reaches it, and says what to do instead.
    for (method, instead) in [
        (
            "initialize",
            Some("send server/discover, and your protocol version and capabilities in each request's _meta"),
        ),
        (
            "logging/setLevel",
            Some("set io.modelcontextprotocol/logLevel in the _meta of the request whose messages you want"),
        ),
        ("ping", None),
        ("resources/subscribe", None),
        ("resources/unsubscribe", None),
    ] {
        // Params as a 2026-07-28 client sends them: its version in `_meta`, not an
        // initialize's own fields.
        let params = json!({"level": "info", "uri": "test://x"});
        let (status, answer) = request(addr, method, params.as_object().cloned().unwrap()).await;
        assert_eq!(status, 404, "{method}: {answer:?}");
        assert_eq!(answer[0]["error"]["code"], -32601, "{method}");
        if let Some(instead) = instead {
            let expected = format!("Method not found: {method} was removed in MCP 2026-07-28; {instead}");
            assert_eq!(answer[0]["error"]["message"], expected);
        }
    }
}

#[derive(Deserialize, JsonSchema)]
struct Page {
    n: u32,
}

/// Says which settings the client declared for the extension `com.example/receipts`.
async fn receipts(ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    Ok(match ctx.call().client_extension("com.example/receipts") {
        Some(settings) => Value::Object(settings.clone()).to_string(),
        None => "not declared".to_owned(),
    })
}

fn cached() -> FusionServer {
    let minutes = |m: u64| Duration::from_secs(60 * m);
    let receipts_settings = json!({"formats": ["pdf"]}).as_object().cloned().unwrap();
    FusionServer::builder("cached", "1")
        .group(Group::new("t", "Test tools.").action(Action::new("receipts", "Which receipts.").handler(receipts)))
        .resource(
            Resource::new("docs://terms", "terms")
                .cache_hint(CacheHint::shared(minutes(60)))
                .handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>("the terms") }),
        )
        .resource(
            Resource::new("docs://mine", "mine")
                .requires_identity()
                .cache_hint(CacheHint::shared(minutes(60)))
                .handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>("yours alone") }),
        )
        .resource_template(
            ResourceTemplate::new("docs://pages/{n}", "page")
                .handler(|_ctx: Ctx<()>, page: Page| async move { Ok::<_, ToolError>(format!("page {}", page.n)) }),
        )
        .prompt(
            Prompt::new("greet", "A greeting.")
                .handler(|_ctx: Ctx<()>, _: Nothing| async { Ok::<_, ToolError>("hello") }),
        )
        .cache_hint(CacheHint::private(Duration::from_secs(5)))
        .list_cache_hint(Listing::Tools, CacheHint::shared(minutes(1)))
        .list_cache_hint(Listing::ResourceTemplates, CacheHint::shared(minutes(10)))
        .extension("com.example/receipts", receipts_settings)
        .build(())
        .unwrap()
}

/// The `ttlMs` and `cacheScope` of an answer's result.
fn hint(answer: &[Value]) -> (Value, Value) {
    let result = &answer.last().unwrap()["result"];
    (result["ttlMs"].clone(), result["cacheScope"].clone())
}

fn params(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

#[tokio::test]
async fn cache_hints_as_the_server_each_list_and_each_resource_set_them() {
    let addr = serve(cached()).await;
    let cases = [
        ("tools/list", json!({}), (60_000, "public")),
        ("prompts/list", json!({}), (5_000, "private")),
        ("resources/list", json!({}), (5_000, "private")),
        ("resources/templates/list", json!({}), (600_000, "public")),
        ("resources/read", json!({"uri": "docs://terms"}), (3_600_000, "public")),
        ("resources/read", json!({"uri": "docs://pages/2"}), (5_000, "private")),
    ];
    for (method, sent, (ttl, scope)) in cases {
        let (status, answer) = request(addr, method, params(sent.clone())).await;
        assert_eq!(status, 200, "{method} {sent}: {answer:?}");
        assert_eq!(hint(&answer), (json!(ttl), json!(scope)), "{method} {sent}");
    }
}

#[tokio::test]
async fn what_may_differ_by_caller_is_private_whatever_its_hint_says() {
    let tokens = StaticTokens::new().token("ana-token", Identity::new("ana"));
    let config = HttpConfig::new("127.0.0.1:0").authenticator(tokens).allow_anonymous(true);
    let addr = serve_with(cached(), config).await;
    // Lists made for their caller, and a resource that needs one.
    let (_, tools) = send(addr, Some("ana-token"), "tools/list", Map::new()).await;
    assert_eq!(hint(&tools), (json!(60_000), json!("private")));
    let (_, templates) = send(addr, None, "resources/templates/list", Map::new()).await;
    assert_eq!(hint(&templates), (json!(600_000), json!("private")));
    let (_, mine) = send(addr, Some("ana-token"), "resources/read", params(json!({"uri": "docs://mine"}))).await;
    assert_eq!(mine[0]["result"]["contents"][0]["text"], "yours alone");
    assert_eq!(hint(&mine), (json!(3_600_000), json!("private")));
}

#[tokio::test]
async fn an_extension_is_advertised_and_a_call_reads_what_its_client_declared() {
    let addr = serve(cached()).await;
    let (_, discovered) = request(addr, "server/discover", Map::new()).await;
    assert_eq!(
        discovered[0]["result"]["capabilities"]["extensions"],
        json!({"com.example/receipts": {"formats": ["pdf"]}})
    );
    let call = |capabilities: Value| {
        params(json!({"name": "t", "arguments": {"action": "receipts"},
            "_meta": meta(json!({"io.modelcontextprotocol/clientCapabilities": capabilities}))}))
    };
    let (_, declared) =
        request(addr, "tools/call", call(json!({"extensions": {"com.example/receipts": {"version": 2}}}))).await;
    assert_eq!(declared[0]["result"]["content"][0]["text"], r#"{"version":2}"#);
    let (_, silent) = request(addr, "tools/call", call(json!({"extensions": {"org.other/thing": {}}}))).await;
    assert_eq!(silent[0]["result"]["content"][0]["text"], "not declared");
}

#[test]
fn an_extension_name_must_be_vendor_slash_name_and_given_once() {
    for bad in ["receipts", "/receipts", "com.example/", "com example/receipts", "a/b/c"] {
        let error = FusionServer::builder("x", "1").extension(bad, Map::new()).build(()).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "invalid extension name {bad:?}: use `vendor-prefix/extension-name`, such as `com.example/receipts`, each part 1 to 64 characters from A-Z a-z 0-9 . _ -"
            )
        );
    }
    let twice = FusionServer::builder("x", "1")
        .extension("com.example/receipts", Map::new())
        .extension("com.example/receipts", Map::new())
        .build(())
        .unwrap_err();
    assert_eq!(
        twice.to_string(),
        "duplicate extension \"com.example/receipts\": names must be unique; rename one of them"
    );
}

async fn consent(ctx: Ctx<()>, _input: Nothing) -> Result<&'static str, ToolError> {
    match ctx.elicit_url("Give the bank your consent", "https://bank.example/consent").key("consent").await? {
        mcp_fusion::Elicited::Accepted(()) => Ok("consented"),
        other => Err(other.refusal(ctx.action())),
    }
}

#[expect(deprecated, reason = "rmcp marks sampling deprecated (SEP-2577); 2026-07-28 keeps it")]
async fn ask_model(ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    use rmcp::model::{CreateMessageRequestParams, SamplingMessage};
    let answer = ctx.sample(CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Hi?")], 10)).await?;
    Ok(format!("{:?}", answer.model))
}

fn asking_server() -> FusionServer {
    FusionServer::builder("asking", "1")
        .group(
            Group::new("t", "Tools that ask.")
                .action(Action::new("consent", "Asks the user to open a page.").handler(consent))
                .action(Action::new("ask_model", "Asks the client's model.").handler(ask_model)),
        )
        .build(())
        .unwrap()
}

fn asking_call(action: &str, capabilities: Value) -> Map<String, Value> {
    let meta = meta(json!({"io.modelcontextprotocol/clientCapabilities": capabilities}));
    json!({"name": "t", "arguments": {"action": action}, "_meta": meta}).as_object().cloned().unwrap()
}

#[tokio::test]
async fn a_url_question_rides_an_input_required_result_and_a_client_without_url_mode_is_told_what_to_open() {
    let addr = serve(asking_server()).await;
    let (status, asked) =
        request(addr, "tools/call", asking_call("consent", json!({"elicitation": {"url": {}}}))).await;
    assert_eq!(status, 200);
    let result = &asked[0]["result"];
    assert_eq!(result["resultType"], "input_required", "{asked:?}");
    let params = &result["inputRequests"]["consent"]["params"];
    assert_eq!((&params["mode"], &params["url"]), (&json!("url"), &json!("https://bank.example/consent")));
    assert_eq!(params["message"], "Give the bank your consent");

    let mut again = asking_call("consent", json!({"elicitation": {"url": {}}}));
    again.insert("inputResponses".into(), json!({"consent": {"action": "accept"}}));
    again.insert("requestState".into(), result["requestState"].clone());
    let (_, done) = request(addr, "tools/call", again).await;
    assert_eq!(done[0]["result"]["content"][0]["text"], "consented", "{done:?}");

    let (_, forms_only) =
        request(addr, "tools/call", asking_call("consent", json!({"elicitation": {"form": {}}}))).await;
    let text = forms_only[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with(r#"<tool_error code="ELICITATION_UNSUPPORTED" severity="error">"#), "{text}");
    assert!(text.contains("this client cannot open a page (URL elicitation)"), "{text}");
    assert!(text.contains(r#"<detail key="url">'https://bank.example/consent'</detail>"#), "{text}");
}

#[tokio::test]
async fn sampling_without_the_capability_is_refused_with_its_name_and_a_call_in_process_is_told_it_cannot_ask() {
    let server = asking_server();
    let addr = serve(server.clone()).await;
    let (status, refused) = request(addr, "tools/call", asking_call("ask_model", json!({}))).await;
    assert_eq!(status, 400, "{refused:?}");
    assert_eq!(refused[0]["error"]["code"], -32021);
    assert_eq!(refused[0]["error"]["data"], json!({"requiredCapabilities": {"sampling": {}}}));
    assert_eq!(
        refused[0]["error"]["message"],
        "t.ask_model needs the client's sampling capability, which this request does not declare: declare \"sampling\" in the client capabilities of its _meta (or at initialize), or call an action that does not need it"
    );

    let arguments = json!({"action": "consent"}).as_object().cloned();
    let in_process = server.call("t", arguments, mcp_fusion::transport::RequestInfo::default()).await;
    let text = &in_process.content[0].as_text().unwrap().text;
    assert!(text.starts_with(r#"<tool_error code="CLIENT_UNREACHABLE" severity="error">"#), "{text}");
}

#[derive(Deserialize, JsonSchema)]
struct Deploy {
    /// Where to deploy.
    region: String,
}

async fn deploy(_ctx: Ctx<()>, input: Deploy) -> Result<String, ToolError> {
    Ok(format!("deployed to {}", input.region))
}

/// A `tools/call` of `deploy` to `region`, with `Mcp-Param-Region: header` when given.
async fn deploy_with(addr: SocketAddr, region: &str, header: Option<&str>) -> (u16, Value) {
    let params = json!({"name": "deploy", "arguments": {"region": region}, "_meta": meta(json!({}))});
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "deploy");
    if let Some(header) = header {
        request = request.header("mcp-param-region", header);
    }
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
    let response = request.body(body.to_string()).send().await.unwrap();
    let status = response.status().as_u16();
    let mut messages = messages(&response.text().await.unwrap());
    (status, messages.pop().unwrap())
}

#[tokio::test]
async fn an_argument_mirrored_in_a_header_is_published_and_a_header_that_disagrees_is_refused_before_the_handler() {
    let server = FusionServer::builder("routed", "1")
        .action(Action::new("deploy", "Deploy.").param_header("region", "Region").handler(deploy))
        .build(())
        .unwrap();
    assert_eq!(server.tools()[0].input_schema["properties"]["region"]["x-mcp-header"], "Region");
    let addr = serve(server).await;

    // Agreeing, in plain text and in the Base64 form a value with spaces takes.
    let (status, answer) = deploy_with(addr, "eu", Some("eu")).await;
    assert_eq!((status, &answer["result"]["content"][0]["text"]), (200, &json!("deployed to eu")), "{answer}");
    let (status, answer) = deploy_with(addr, " eu west ", Some("=?base64?IGV1IHdlc3Qg?=")).await;
    assert_eq!((status, &answer["result"]["content"][0]["text"]), (200, &json!("deployed to  eu west ")), "{answer}");

    // Disagreeing, missing, or not Base64: 400 and -32020, naming the header and the field.
    for (header, says) in [
        (Some("us"), "Mcp-Param-Region header `us` does not match body value `eu`"),
        (None, "missing Mcp-Param-Region header for `region`"),
        (Some("=?base64?SGVs!!!bG8=?="), "Mcp-Param-Region header is not valid Base64"),
    ] {
        let (status, answer) = deploy_with(addr, "eu", header).await;
        assert_eq!((status, &answer["error"]["code"]), (400, &json!(-32020)), "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains(says), "{answer}");
    }
}
