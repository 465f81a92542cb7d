//! Resource subscriptions held within bounds, through real rmcp clients and raw JSON-RPC: a
//! listen request for too many URIs refused before it is acknowledged, what a session and the
//! server may hold, URIs checked as a read checks them, the rate limits counting subscriptions,
//! and what a session held freed when it ends.

use crate::support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mcp_fusion::guard::RateLimit;
use mcp_fusion::http::{HttpConfig, HttpServer};
use mcp_fusion::resource::{Resource, ResourceTemplate, SubscriptionLimits};
use mcp_fusion::transport::stdio::LineTransport;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Ctx, FusionServer, ServerBuilder};
use rmcp::model::{
    ErrorCode, ProtocolVersion, ReadResourceRequestParams, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RunningService, ServiceError, Subscription};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ErrorData, RoleClient, ServiceExt as _};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::sync::oneshot;

#[derive(Deserialize, JsonSchema)]
struct InvoiceUri {
    /// The invoice id, like `inv_7`.
    #[schemars(regex(pattern = r"^inv_[a-z0-9_]+$"), length(max = 64))]
    id: String,
}

#[derive(Deserialize, JsonSchema)]
struct NoteUri {
    /// Any text.
    text: String,
}

async fn invoice(_ctx: Ctx<()>, uri: InvoiceUri) -> Result<String, ToolError> {
    Ok(format!("invoice {}", uri.id))
}

async fn note(_ctx: Ctx<()>, uri: NoteUri) -> Result<String, ToolError> {
    Ok(uri.text)
}

/// A server of invoices (`billing://invoices/{id}`, ids checked) and notes (`notes://{text}`,
/// any text), set up further by `with`.
fn server_with(with: impl FnOnce(ServerBuilder<()>) -> ServerBuilder<()>) -> FusionServer {
    let builder = FusionServer::builder("subscriptions-test", "1")
        .resource(
            Resource::new("billing://summary", "summary").handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>("sums") }),
        )
        .resource_template(ResourceTemplate::new("billing://invoices/{id}", "invoice").handler(invoice))
        .resource_template(ResourceTemplate::new("notes://{text}", "note").handler(note));
    with(builder).build(()).unwrap()
}

fn server() -> FusionServer {
    server_with(|builder| builder)
}

/// `n` invoice URIs, from `inv_{from}`.
fn invoices(from: usize, n: usize) -> Vec<String> {
    (from..from + n).map(|i| format!("billing://invoices/inv_{i}")).collect()
}

/// A 2026-07-28 client, which discovers rather than initializes, of `server` over a pipe.
async fn discovering(server: FusionServer) -> RunningService<RoleClient, ()> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    ().serve_with_lifecycle(client_io, lifecycle).await.unwrap()
}

fn listening_for(uris: Vec<String>) -> SubscriptionFilter {
    SubscriptionFilter::builder().resource_subscriptions(uris).build()
}

/// The JSON-RPC error of a request that failed.
fn rpc_error<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {:.300}", format!("{other:?}")),
    }
}

/// The error a listen request ends with, after its acknowledgment.
async fn ended_with(subscription: &mut Subscription) -> ErrorData {
    let next = tokio::time::timeout(Duration::from_secs(10), subscription.next()).await.expect("the listen ends");
    rpc_error(next)
}

#[allow(deprecated, reason = "resources/subscribe is how clients before 2026-07-28 subscribe")]
async fn subscribe(client: &RunningService<RoleClient, ()>, uri: &str) -> Result<(), ServiceError> {
    client.subscribe(SubscribeRequestParams::new(uri)).await
}

const TOO_MANY: &str = "Invalid params for subscriptions/listen: resourceSubscriptions holds 30000 URIs, and this \
                        server accepts at most 100 per listen request (and 1000 per session). Listen for the \
                        resources you need now, at most 100 of them; read the others when you need them.";

/// An HTTP server of `server`, stopped when dropped.
struct Http {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl Http {
    async fn start(server: FusionServer, config: HttpConfig) -> Http {
        let http = HttpServer::bind(server, config).await.unwrap();
        let addr = http.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(http.serve(async move {
            let _ = stopped.await;
        }));
        Http { addr, _stop: stop }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

fn loopback() -> HttpConfig {
    HttpConfig::new("127.0.0.1:0")
}

#[tokio::test]
async fn a_listen_for_too_many_uris_is_refused_over_http_before_it_is_acknowledged() {
    let http = Http::start(server(), loopback()).await;
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let transport = StreamableHttpClientTransport::from_uri(http.url());
    let client = ().serve_with_lifecycle(transport, lifecycle).await.unwrap();
    let started = Instant::now();
    let error = rpc_error(client.listen(listening_for(invoices(0, 30_000))).await);
    let took = started.elapsed();
    assert_eq!((error.code, error.message.as_ref()), (ErrorCode::INVALID_PARAMS, TOO_MANY));
    assert!(took < Duration::from_secs(2), "refused in {took:?}");
    // Within the bound, every URI is heard of.
    let subscription = client.listen(listening_for(invoices(0, 100))).await.unwrap();
    assert_eq!(subscription.acknowledged().resource_subscriptions.as_ref().map(Vec::len), Some(100));
}

#[tokio::test]
async fn a_listen_for_too_many_uris_is_refused_over_stdio_before_it_is_acknowledged() {
    let server = server();
    let limits = server.subscription_limits();
    let (server_in, mut client_out) = tokio::io::duplex(1 << 16);
    let (server_out, client_in) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let transport = LineTransport::new(server_in, server_out).subscription_limits(limits);
        if let Ok(running) = server.serve(transport).await {
            let _ = running.waiting().await;
        }
    });
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let listen = json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": {
        "_meta": meta, "notifications": {"resourceSubscriptions": invoices(0, 30_000)}}});
    let started = Instant::now();
    client_out.write_all(format!("{listen}\n").as_bytes()).await.unwrap();
    let mut line = String::new();
    let mut lines = BufReader::new(client_in);
    tokio::time::timeout(Duration::from_secs(60), lines.read_line(&mut line)).await.unwrap().unwrap();
    let took = started.elapsed();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": TOO_MANY}}));
    assert!(took < Duration::from_secs(2), "refused in {took:?}");
}

#[tokio::test]
async fn behind_another_transport_a_listen_for_too_many_uris_accepts_none_and_ends_refused() {
    let client = discovering(server()).await;
    let started = Instant::now();
    let mut subscription = client.listen(listening_for(invoices(0, 5_000))).await.unwrap();
    let accepted = subscription.acknowledged().resource_subscriptions.as_ref().map_or(0, Vec::len);
    assert!(*subscription.acknowledged() == SubscriptionFilter::new(), "nothing is accepted, not {accepted} URIs");
    let error = ended_with(&mut subscription).await;
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(error.message.contains("holds 5000 URIs, and this server accepts at most 100 per listen"), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(2), "refused in {:?}", started.elapsed());
}

#[tokio::test]
async fn a_session_holds_at_most_its_share_of_subscriptions() {
    let client = support::connect(server()).await;
    let uris = invoices(0, 1_001);
    let subscribed = futures_util::future::join_all(uris[..1_000].iter().map(|uri| subscribe(&client, uri))).await;
    assert!(subscribed.iter().all(Result::is_ok));
    let error = rpc_error(subscribe(&client, &uris[1_000]).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "This session holds 1000 resource subscriptions and asked for 1 more; a session may hold at most 1000, its \
         subscriptions and open listens together. Unsubscribe (resources/unsubscribe) or end listens you no longer \
         need, or read the resources when you need them fresh."
    );
    assert_eq!(error.data, Some(json!({"held": 1000, "asked": 1, "limit": 1000})));
    // Subscribing again to what is held takes nothing more; unsubscribing makes room.
    subscribe(&client, &uris[999]).await.unwrap();
    #[allow(deprecated, reason = "resources/unsubscribe goes with resources/subscribe")]
    client.unsubscribe(UnsubscribeRequestParams::new(&uris[0])).await.unwrap();
    subscribe(&client, &uris[1_000]).await.unwrap();
}

#[tokio::test]
async fn a_session_s_listens_count_together() {
    let server = server_with(|builder| builder.subscription_limits(SubscriptionLimits::default().per_session(150)));
    let client = discovering(server.clone()).await;
    let _first = client.listen(listening_for(invoices(0, 100))).await.unwrap();
    assert_eq!(server.subscription_count(), 100);
    let mut second = client.listen(listening_for(invoices(100, 60))).await.unwrap();
    let error = ended_with(&mut second).await;
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(error.message.starts_with("This session holds 100 resource subscriptions and asked for 60 more"));
    assert_eq!(server.subscription_count(), 100);
}

#[tokio::test]
async fn the_server_holds_at_most_its_total() {
    let limits = SubscriptionLimits::default().per_session(3).total(5);
    let server = server_with(|builder| builder.subscription_limits(limits));
    let (one, two) = (support::connect(server.clone()).await, support::connect(server.clone()).await);
    for uri in invoices(0, 3) {
        subscribe(&one, &uri).await.unwrap();
    }
    for uri in invoices(3, 2) {
        subscribe(&two, &uri).await.unwrap();
    }
    let error = rpc_error(subscribe(&two, "billing://summary").await);
    assert_eq!(error.code, ErrorCode(-32000));
    assert_eq!(
        error.message,
        "This server holds its maximum of 5 resource subscriptions across all sessions, and this request asked for \
         1 more. Read the resources when you need them fresh, or subscribe again later."
    );
    assert_eq!(server.subscription_count(), 5);
}

#[tokio::test]
async fn a_subscription_is_checked_as_a_read_is() {
    let server = server_with(|builder| builder.subscription_limits(SubscriptionLimits::default().max_uri_bytes(100)));
    let client = support::connect(server.clone()).await;
    let long_id = format!("billing://invoices/inv_{}", "a".repeat(1 << 20));
    for uri in ["billing://invoices/INV-7", long_id.as_str(), "billing://invoice/inv_7"] {
        let read = rpc_error(client.read_resource(ReadResourceRequestParams::new(uri)).await);
        let subscribed = rpc_error(subscribe(&client, uri).await);
        assert_eq!(
            (subscribed.code, &subscribed.message, &subscribed.data),
            (read.code, &read.message, &read.data),
            "{uri:.60}"
        );
        assert!(serde_json::to_string(&subscribed).unwrap().len() < 2_000, "{uri:.60}: {subscribed:?}");
    }
    // A URI a read accepts, but too long to hold.
    let long_note = format!("notes://{}", "n".repeat(200));
    client.read_resource(ReadResourceRequestParams::new(&long_note)).await.unwrap();
    let error = rpc_error(subscribe(&client, &long_note).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        format!(
            "The resource URI '{}...' is 208 bytes long; a subscription holds URIs of at most 100 bytes. Read the \
             resource when you need it fresh.",
            &long_note[..47]
        )
    );
    assert_eq!(server.subscription_count(), 0);
    // A listen accepts only the URIs a subscription would.
    let listener = discovering(server.clone()).await;
    let asked = vec!["billing://invoices/inv_1".to_owned(), "billing://invoices/INV-2".to_owned(), long_note];
    let subscription = listener.listen(listening_for(asked)).await.unwrap();
    assert_eq!(subscription.acknowledged().resource_subscriptions, Some(vec!["billing://invoices/inv_1".to_owned()]));
}

#[tokio::test]
async fn a_caller_that_may_not_read_a_resource_does_not_hear_of_it_either() {
    let guarded = || {
        server_with(|builder| {
            builder.resource(
                Resource::new("billing://payroll", "payroll")
                    .requires_identity()
                    .handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>("salaries") }),
            )
        })
    };
    let client = support::connect(guarded()).await;
    let read = rpc_error(client.read_resource(ReadResourceRequestParams::new("billing://payroll")).await);
    let subscribed = rpc_error(subscribe(&client, "billing://payroll").await);
    assert_eq!((subscribed.code, &subscribed.message), (read.code, &read.message), "{subscribed:?}");
    assert!(subscribed.message.contains("needs an authenticated caller"), "{subscribed:?}");
    subscribe(&client, "billing://summary").await.unwrap();

    let listener = discovering(guarded()).await;
    let asked = vec!["billing://summary".to_owned(), "billing://payroll".to_owned()];
    let mut subscription = listener.listen(listening_for(asked)).await.unwrap();
    let error = ended_with(&mut subscription).await;
    assert!(error.message.contains("needs an authenticated caller"), "{error:?}");
}

#[tokio::test]
async fn rate_limits_count_subscriptions_and_listens() {
    let limited = || server_with(|builder| builder.rate_limit(RateLimit::new(3, Duration::from_secs(60))));
    let client = support::connect(limited()).await;
    for uri in invoices(0, 3) {
        subscribe(&client, &uri).await.unwrap();
    }
    let error = rpc_error(subscribe(&client, "billing://invoices/inv_9").await);
    assert_eq!(error.code, ErrorCode(-32000));
    assert!(error.message.starts_with("Rate limit reached: 3 calls per 60s for this caller"), "{error:?}");
    let data = error.data.unwrap();
    assert_eq!((data["code"].as_str(), data["uri"].as_str()), (Some("RATE_LIMITED"), Some("billing://invoices/inv_9")));
    assert!(data["retry_after"].as_u64().is_some_and(|seconds| seconds >= 1), "{data}");

    let listener = discovering(limited()).await;
    let mut open = Vec::new();
    for from in [0, 10, 20] {
        open.push(listener.listen(listening_for(invoices(from, 10))).await.unwrap());
    }
    let mut fourth = listener.listen(listening_for(invoices(30, 10))).await.unwrap();
    let error = ended_with(&mut fourth).await;
    assert_eq!(error.code, ErrorCode(-32000));
    let data = error.data.unwrap();
    assert_eq!(data["code"], "RATE_LIMITED");
    assert!(data["retry_after"].as_u64().is_some_and(|seconds| seconds >= 1), "{data}");
}

// On the paused clock rmcp's 5 s for the handlers of a closed connection pass as soon as
// nothing else can run, not in real time.
#[tokio::test(start_paused = true)]
async fn a_closed_connection_frees_what_its_session_held() {
    let server = server();
    let client = support::connect(server.clone()).await;
    for uri in invoices(0, 50) {
        subscribe(&client, &uri).await.unwrap();
    }
    let listener = discovering(server.clone()).await;
    let _listening = listener.listen(listening_for(invoices(0, 20))).await.unwrap();
    assert_eq!(server.subscription_count(), 70);
    drop(client);
    support::wait_until(|| server.subscription_count() == 20).await;
    // rmcp waits up to 5 s for the handlers of a closed connection (an open listen among
    // them) before it cancels them.
    drop(listener);
    let freed = async {
        while server.subscription_count() != 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(15), freed).await.expect("the listen is freed");
}

#[tokio::test]
async fn an_http_session_frees_what_it_held_when_deleted_or_expired() {
    let server = server();
    let config = loopback().session_idle_timeout(Duration::from_millis(300));
    let http = Http::start(server.clone(), config).await;
    let deleted = ().serve(StreamableHttpClientTransport::from_uri(http.url())).await.unwrap();
    for uri in invoices(0, 40) {
        subscribe(&deleted, &uri).await.unwrap();
    }
    assert_eq!(server.subscription_count(), 40);
    // Cancelling the client ends its session with a DELETE.
    deleted.cancel().await.unwrap();
    support::wait_until(|| server.subscription_count() == 0).await;

    let idle = ().serve(StreamableHttpClientTransport::from_uri(http.url())).await.unwrap();
    for uri in invoices(0, 10) {
        subscribe(&idle, &uri).await.unwrap();
    }
    assert_eq!(server.subscription_count(), 10);
    // Not a request more: the session expires, and what it held goes with it.
    support::wait_until(|| server.subscription_count() == 0).await;
    drop(idle);
}
