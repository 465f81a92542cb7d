//! MCP logging bridged from `tracing`, through a real rmcp client: a client that sets a level
//! hears its own calls' events at that level and above; another client hears nothing; on
//! 2026-07-28 each request names its own level in `_meta`, and one without it hears nothing.

#![allow(deprecated, reason = "MCP logging is deprecated by SEP-2577, and offered on every version")]

use crate::support;

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use rmcp::model::{
    CallToolRequestParams, ErrorCode, LoggingLevel, LoggingMessageNotificationParam, ProtocolVersion,
    RequestMetaObject, SetLevelRequestParams,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService, ServiceError};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::wait_until;
use tracing_subscriber::layer::SubscriberExt as _;

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// The target its events are logged under, which the client hears as their logger (a module
/// path by default: `protocol::logging` here, in the binary that holds this module).
const TARGET: &str = "logging";

async fn chatty(_ctx: Ctx<()>, _input: Nothing) -> Result<&'static str, ToolError> {
    tracing::debug!(target: TARGET, "looking closely");
    tracing::info!(target: TARGET, invoices = 3, "counted the invoices");
    tracing::warn!(target: TARGET, "one is overdue");
    Ok("done")
}

fn server() -> FusionServer {
    FusionServer::builder("logging-test", "1")
        .group(Group::new("t", "T.").action(Action::new("chatty", "Logs three events.").handler(chatty)))
        .build(())
        .unwrap()
}

/// The layer alone, as a dispatcher.
fn layer_alone() -> tracing::Dispatch {
    tracing::Dispatch::new(tracing_subscriber::registry().with(mcp_fusion::logging::layer()))
}

/// The layer alone as this thread's default subscriber, until the guard drops. Not the
/// global one: the other tests of this binary share its process. On a current-thread runtime
/// the server's tasks run on this thread too, so they log through it.
fn subscriber() -> tracing::dispatcher::DefaultGuard {
    tracing::dispatcher::set_default(&layer_alone())
}

/// A runtime of `workers` threads, each with `dispatch` as its default subscriber: a call's
/// events are logged on whichever worker runs it.
fn runtime_logging_to(workers: usize, dispatch: &tracing::Dispatch) -> tokio::runtime::Runtime {
    thread_local! {
        static DEFAULT: RefCell<Option<tracing::dispatcher::DefaultGuard>> = const { RefCell::new(None) };
    }
    let dispatch = dispatch.clone();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .on_thread_start(move || DEFAULT.set(Some(tracing::dispatcher::set_default(&dispatch))))
        .on_thread_stop(|| DEFAULT.set(None))
        .build()
        .unwrap()
}

#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<LoggingMessageNotificationParam>>>);

impl ClientHandler for Heard {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

async fn connect(server: FusionServer, heard: Heard) -> RunningService<RoleClient, Heard> {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    heard.serve(client_io).await.unwrap()
}

async fn call_chatty(client: &RunningService<RoleClient, Heard>) {
    let arguments = json!({"action": "chatty"}).as_object().cloned().unwrap();
    let result = client.call_tool(CallToolRequestParams::new("t").with_arguments(arguments)).await.unwrap();
    assert_eq!(result.is_error, Some(false));
}

#[tokio::test]
async fn a_client_hears_its_calls_events_at_its_level_and_others_hear_nothing() {
    let _logging = subscriber();
    let server = server();
    let (listening, silent) = (Heard::default(), Heard::default());
    let client = connect(server.clone(), listening.clone()).await;
    let other = connect(server, silent.clone()).await;
    assert!(client.peer_info().unwrap().capabilities.logging.is_some());
    client.set_level(SetLevelRequestParams::new(LoggingLevel::Info)).await.unwrap();
    call_chatty(&client).await;
    call_chatty(&other).await;
    // Outside any call: nobody's.
    tracing::warn!("between calls");
    // The notifications were sent before the result, but each is handled on a task of its own.
    wait_until(|| listening.0.lock().unwrap().len() >= 2).await;
    client.list_all_tools().await.unwrap();
    let heard = listening.0.lock().unwrap().clone();
    let heard: Vec<_> = heard.iter().map(|m| (m.level, m.logger.clone(), m.data.clone())).collect();
    assert_eq!(
        heard,
        [
            (LoggingLevel::Info, Some("logging".to_owned()), json!({"message": "counted the invoices", "invoices": 3})),
            (LoggingLevel::Warning, Some("logging".to_owned()), json!({"message": "one is overdue"})),
        ]
    );
    assert!(silent.0.lock().unwrap().is_empty(), "a client that set no level hears nothing");
    // Raising the level filters more.
    client.set_level(SetLevelRequestParams::new(LoggingLevel::Error)).await.unwrap();
    call_chatty(&client).await;
    client.list_all_tools().await.unwrap();
    assert_eq!(listening.0.lock().unwrap().len(), 2);
}

async fn connect_2026(server: FusionServer, heard: Heard) -> RunningService<RoleClient, Heard> {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    heard.serve_with_lifecycle(client_io, lifecycle).await.unwrap()
}

/// `tools/call` of `t.chatty` with `level` in the request's `_meta` as sent (`None`: no key).
fn chatty_at(level: Option<serde_json::Value>) -> CallToolRequestParams {
    let arguments = json!({"action": "chatty"}).as_object().cloned().unwrap();
    let mut params = CallToolRequestParams::new("t").with_arguments(arguments);
    if let Some(level) = level {
        let mut meta = RequestMetaObject::new();
        meta.insert("io.modelcontextprotocol/logLevel".to_owned(), level);
        params.meta = Some(meta);
    }
    params
}

#[tokio::test]
async fn on_2026_07_28_a_request_hears_its_events_at_its_own_level_and_without_one_nothing() {
    let _logging = subscriber();
    let heard = Heard::default();
    let client = connect_2026(server(), heard.clone()).await;
    // Logging stays declared: a request may ask for it.
    assert!(client.peer_info().unwrap().capabilities.logging.is_some());
    let result = client.call_tool(chatty_at(None)).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    let result = client.call_tool(chatty_at(Some(json!("warning")))).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    wait_until(|| !heard.0.lock().unwrap().is_empty()).await;
    let result = client.call_tool(chatty_at(Some(json!("info")))).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    wait_until(|| heard.0.lock().unwrap().len() >= 3).await;
    // A message of the first call would have come before the second call's answer.
    client.list_all_tools().await.unwrap();
    let heard = heard.0.lock().unwrap().clone();
    let heard: Vec<_> = heard.iter().map(|m| (m.level, m.data.clone())).collect();
    assert_eq!(
        heard,
        [
            (LoggingLevel::Warning, json!({"message": "one is overdue"})),
            (LoggingLevel::Info, json!({"message": "counted the invoices", "invoices": 3})),
            (LoggingLevel::Warning, json!({"message": "one is overdue"})),
        ]
    );
}

#[tokio::test]
async fn on_2026_07_28_a_level_that_is_not_one_is_refused_and_set_level_is_gone() {
    let _logging = subscriber();
    let heard = Heard::default();
    let client = connect_2026(server(), heard.clone()).await;
    match client.call_tool(chatty_at(Some(json!("loud")))).await {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert_eq!(
                error.message,
                "Invalid params: _meta[\"io.modelcontextprotocol/logLevel\"] is 'loud', not a logging level; \
                 send one of debug, info, notice, warning, error, critical, alert, emergency"
            );
        }
        other => panic!("expected invalid params, got {other:?}"),
    }
    match client.set_level(SetLevelRequestParams::new(LoggingLevel::Info)).await {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
            assert_eq!(
                error.message,
                "Method not found: logging/setLevel was removed in MCP 2026-07-28; set \
                 io.modelcontextprotocol/logLevel in the _meta of the request whose messages you want"
            );
        }
        other => panic!("expected method not found, got {other:?}"),
    }
    assert!(heard.0.lock().unwrap().is_empty());
}

async fn counting(_ctx: Ctx<()>, _input: Nothing) -> Result<&'static str, ToolError> {
    for n in 0..40 {
        tracing::info!(n, "step");
        // Yield between events, so that whatever delivers them can interleave.
        tokio::task::yield_now().await;
    }
    Ok("counted")
}

/// The lines a server on the line transport writes after a `tools/call` of `action` by a
/// client listening at `debug`, up to its answer.
async fn lines_until_answer(server: FusionServer, action: &str) -> Vec<serde_json::Value> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (server_in, mut client_out) = tokio::io::duplex(1 << 16);
    let (server_out, client_in) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let transport = mcp_fusion::transport::stdio::LineTransport::new(server_in, server_out);
        if let Ok(running) = server.serve(transport).await {
            let _ = running.waiting().await;
        }
    });
    let mut lines = tokio::io::BufReader::new(client_in).lines();
    let frames = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "debug"}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "t", "arguments": {"action": action}}}),
    ];
    let mut written = Vec::new();
    for frame in frames {
        let id = frame.get("id").cloned();
        client_out.write_all(format!("{frame}\n").as_bytes()).await.unwrap();
        // Each request's answer before the next frame, as a client that waits would do.
        while let Some(id) = &id {
            let line = lines.next_line().await.unwrap().expect("the server answers");
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            let answered = message.get("id") == Some(id);
            written.push(message);
            if answered {
                break;
            }
        }
    }
    written
}

#[test]
fn a_calls_messages_arrive_in_order_and_before_its_result() {
    let dispatch = layer_alone();
    let runtime = runtime_logging_to(4, &dispatch);
    let _logging = tracing::dispatcher::set_default(&dispatch);
    runtime.block_on(async {
        let server = FusionServer::builder("logging-test", "1")
            .group(Group::new("t", "T.").action(Action::new("counting", "Logs forty events.").handler(counting)))
            .build(())
            .unwrap();
        for _ in 0..5 {
            let written = lines_until_answer(server.clone(), "counting").await;
            let answer = written.iter().position(|m| m["id"] == 2).expect("the call is answered");
            let heard: Vec<_> = written[..answer]
                .iter()
                .filter(|m| m["method"] == "notifications/message")
                .map(|m| m["params"]["data"]["n"].as_u64().unwrap())
                .collect();
            assert_eq!(heard, (0..40).collect::<Vec<_>>(), "every message, in order, before the result");
        }
    });
}

async fn failing(_ctx: Ctx<()>, _input: Nothing) -> Result<&'static str, std::io::Error> {
    tracing::debug!(rows = 7, "query: SELECT * FROM secret_table");
    tracing::info!(target: mcp_fusion::logging::CLIENT_TARGET, invoices = 3, "counted the invoices");
    tracing::warn!("the store said: SECRET-DETAIL");
    Err(std::io::Error::other("connection to db-7.internal refused: SECRET-DETAIL"))
}

#[tokio::test]
async fn with_masking_a_client_hears_only_what_is_addressed_to_it() {
    let _logging = subscriber();
    let server = |mask| {
        FusionServer::builder("logging-test", "1")
            .mask_internal_errors(mask)
            .group(Group::new("t", "T.").action(Action::new("failing", "Fails.").handler(failing)))
            .build(())
            .unwrap()
    };
    let heard = |written: &[serde_json::Value]| -> Vec<serde_json::Value> {
        let answer = written.iter().position(|m| m["id"] == 2).expect("the call is answered");
        written[..answer]
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .map(|m| m["params"].clone())
            .collect()
    };
    let written = lines_until_answer(server(true), "failing").await;
    let answer = written.last().unwrap().to_string();
    assert!(!answer.contains("SECRET"), "{answer}");
    let incident = answer.split_once("(incident ").map(|(_, after)| after[..12].to_owned()).expect("an incident");
    assert_eq!(
        heard(&written),
        [
            json!({"level": "info", "logger": "mcp_fusion::client",
                "data": {"message": "counted the invoices", "invoices": 3}}),
            json!({"level": "error", "logger": "mcp_fusion::incident",
                "data": {"message": "call failed", "action": "t.failing", "incident": incident}}),
        ]
    );
    // Unmasked, the client hears every event of its call, as before.
    let written = lines_until_answer(server(false), "failing").await;
    let heard = heard(&written);
    assert_eq!(heard.len(), 4, "{heard:?}");
    assert_eq!(heard[3]["data"]["error"], "connection to db-7.internal refused: SECRET-DETAIL");
}
