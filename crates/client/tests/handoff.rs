//! Through a real server with a mount: the retry policy waits out a mount that is
//! reconnecting, a mount still connecting answers a warning (not a failure), and an upstream
//! group's action is reached by its name under the namespace.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_fusion::handoff::{Forward, ForwardError, Mount, MountState};
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::{ErrorCode, Severity, ToolError};
use mcp_fusion::{Action, CallInfo, Ctx, FusionServer, Group, Json};
use mcp_fusion_client::contract::Exposition;
use mcp_fusion_client::{FusionClient, FusionClientError, RetryPolicy};
use rmcp::ServiceExt;
use rmcp::model::{CallToolResult, JsonObject};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::Instant;

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct GetInvoice {
    id: String,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
struct Invoice {
    id: String,
    amount_cents: u64,
}

async fn get_invoice(_ctx: Ctx<()>, input: GetInvoice) -> Result<Json<Invoice>, ToolError> {
    if input.id == "inv_missing" {
        return Err(ToolError::not_found(format!("No invoice with id \"{}\".", input.id)));
    }
    Ok(Json(Invoice { id: input.id, amount_cents: 4_200 }))
}

async fn pay(_ctx: Ctx<()>, input: GetInvoice) -> Result<String, ToolError> {
    Ok(format!("paid {}", input.id))
}

/// The upstream: a server of this framework whose group `billing` is one tool with an
/// `action` field.
fn upstream() -> FusionServer {
    FusionServer::builder("crm-upstream", "1")
        .group(
            Group::new("billing", "Invoices.")
                .action(Action::new("get_invoice", "One invoice.").handler(get_invoice))
                .action(Action::new("pay", "Pay an invoice.").handler(pay)),
        )
        .build(())
        .unwrap()
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Empty {}

async fn ping(_ctx: Ctx<()>, _input: Empty) -> Result<String, ToolError> {
    Ok("pong".into())
}

/// The server the client talks to: a local group, and the upstream mounted as `crm`.
fn gateway() -> FusionServer {
    FusionServer::builder("gateway", "1")
        .group(Group::new("local", "Local.").action(Action::new("ping", "Ping.").handler(ping)))
        .build(())
        .unwrap()
}

/// A call that reached the upstream: its tool, its arguments, and when.
type Forwarded = Arc<Mutex<Vec<(String, JsonObject, Instant)>>>;

/// Hands each call to the upstream server in process, keeping a record of it.
struct ToUpstream {
    upstream: FusionServer,
    forwarded: Forwarded,
}

impl Forward for ToUpstream {
    fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        _call: Arc<CallInfo>,
    ) -> Pin<Box<dyn Future<Output = Result<CallToolResult, ForwardError>> + Send>> {
        self.forwarded.lock().unwrap().push((tool.to_owned(), arguments.clone(), Instant::now()));
        let upstream = self.upstream.clone();
        let tool = tool.to_owned();
        Box::pin(async move { Ok(upstream.call(&tool, Some(arguments), RequestInfo::default()).await) })
    }
}

fn crm() -> Mount {
    Mount::new("crm")
}

/// Makes the mount ready, forwarding to `upstream`.
fn set_ready(gateway: &FusionServer, upstream: &FusionServer, forwarded: &Forwarded) {
    let forward = Arc::new(ToUpstream { upstream: upstream.clone(), forwarded: Arc::clone(forwarded) });
    gateway.set_mount(&crm(), MountState::Ready { tools: upstream.tools(), forward }).unwrap();
}

/// A client connected to `gateway` over an in-memory duplex.
async fn connect(gateway: &FusionServer) -> FusionClient {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let served = gateway.clone();
    tokio::spawn(async move {
        if let Ok(running) = served.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    FusionClient::from_service(().serve(client_io).await.unwrap()).await.unwrap()
}

/// A gateway whose mount was ready when the client connected (so the client knows the
/// mounted tools) and is now reconnecting to its upstream.
async fn reconnecting() -> (FusionServer, FusionServer, Forwarded, FusionClient) {
    let (gateway, upstream, forwarded) = (gateway(), upstream(), Forwarded::default());
    set_ready(&gateway, &upstream, &forwarded);
    let client = connect(&gateway).await;
    gateway.set_mount(&crm(), MountState::Connecting).unwrap();
    (gateway, upstream, forwarded, client)
}

fn get(id: &str) -> GetInvoice {
    GetInvoice { id: id.to_owned() }
}

// On the paused clock the mount is ready after 1 s and the retry comes after 2 s, in that
// order however busy the machine is.
#[tokio::test(start_paused = true)]
async fn the_retry_policy_waits_out_a_mount_that_becomes_ready() {
    let (gateway, upstream, forwarded, client) = reconnecting().await;
    // Without a policy the call comes back at once with the warning, and nothing is run.
    let outcome = client.call_raw("crm.billing.get_invoice", json!({"id": "inv_1"})).await.unwrap();
    assert!(outcome.is_standalone_warning(), "{outcome:?}");
    assert_eq!(outcome.warnings[0].error.code, ErrorCode::HandoffConnecting);
    assert_eq!(outcome.warnings[0].error.retry_after, Some(2));

    let client = client.with_retry(RetryPolicy::new(3, Duration::from_secs(10)));
    let started = Instant::now();
    let ready_after = Duration::from_secs(1);
    let reconnect = tokio::spawn({
        let (gateway, upstream, forwarded) = (gateway.clone(), upstream.clone(), Arc::clone(&forwarded));
        async move {
            tokio::time::sleep(ready_after).await;
            set_ready(&gateway, &upstream, &forwarded);
        }
    });
    let reply = client.call_typed::<_, Invoice>("crm.billing.get_invoice", &get("inv_1")).await.unwrap();
    reconnect.await.unwrap();

    assert_eq!(reply.value, Invoice { id: "inv_1".into(), amount_cents: 4_200 }, "the upstream's own answer");
    assert!(reply.warnings.is_empty(), "{:?}", reply.warnings);
    // The first attempt met the mount still connecting; the one after the 2 s it asked for
    // was forwarded, once.
    let forwarded = forwarded.lock().unwrap();
    assert_eq!(forwarded.len(), 1, "{forwarded:?}");
    let (tool, arguments, at) = &forwarded[0];
    assert_eq!(
        (tool.as_str(), Value::Object(arguments.clone())),
        ("billing", json!({"action": "get_invoice", "id": "inv_1"}))
    );
    assert!(
        at.duration_since(started) >= Duration::from_millis(1_900),
        "forwarded after {:?}",
        at.duration_since(started)
    );
}

// On the paused clock, "at once" is measured in the waits the client chose, not the machine's load.
#[tokio::test(start_paused = true)]
async fn a_mount_still_connecting_answers_a_warning_not_a_failure() {
    let (_gateway, _upstream, forwarded, client) = reconnecting().await;

    // A type that can be empty is empty, the warning riding along.
    let reply = client.call_typed::<_, Option<Invoice>>("crm.billing.get_invoice", &get("inv_1")).await.unwrap();
    assert_eq!(reply.value, None);
    assert_eq!(reply.result.is_error, Some(false));
    let warning = &reply.warnings;
    assert_eq!(warning.len(), 1);
    assert_eq!(
        (&warning[0].error.code, &warning[0].error.severity, warning[0].error.retry_after),
        (&ErrorCode::HandoffConnecting, &Severity::Warning, Some(2))
    );
    client.call_typed::<_, ()>("crm.billing.pay", &get("inv_1")).await.unwrap();

    // A type that cannot be empty gets the warning as its own error, not as a tool failure.
    match client.call_typed::<_, Invoice>("crm.billing.get_invoice", &get("inv_1")).await {
        Err(error @ FusionClientError::Warned { .. }) => {
            assert!(error.tool().is_none() && error.code().is_none());
            assert_eq!(error.warnings()[0].error.code, ErrorCode::HandoffConnecting);
            assert!(
                error
                    .to_string()
                    .starts_with("crm.billing.get_invoice answered with a warning and no value: HANDOFF_CONNECTING: "),
                "{error}"
            );
            let FusionClientError::Warned { action, warnings, result } = error else { unreachable!() };
            assert_eq!((action.as_str(), warnings.len(), result.is_error), ("crm.billing.get_invoice", 1, Some(false)));
        }
        other => panic!("expected the warning, got {other:?}"),
    }

    // A policy whose total wait is shorter than the 2 s asked for gives up at once.
    let client = client.with_retry(RetryPolicy::new(5, Duration::from_secs(1)));
    let started = Instant::now();
    let reply = client.call_typed::<_, Option<Invoice>>("crm.billing.get_invoice", &get("inv_1")).await.unwrap();
    assert_eq!((reply.value, &reply.warnings[0].error.code), (None, &ErrorCode::HandoffConnecting));
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert!(forwarded.lock().unwrap().is_empty(), "nothing reached the upstream");
}

#[tokio::test]
async fn an_upstream_groups_action_is_reached_through_the_mount() {
    let (gateway, upstream, forwarded) = (gateway(), upstream(), Forwarded::default());
    set_ready(&gateway, &upstream, &forwarded);
    let client = connect(&gateway).await;
    let names: Vec<String> = client.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["local", "crm.billing"]);
    assert_eq!(client.exposition(), Some(Exposition::Grouped { discriminator: "action".into() }));

    let invoice = client.call_typed::<_, Invoice>("crm.billing.get_invoice", &get("inv_7")).await.unwrap();
    assert_eq!(invoice.value, Invoice { id: "inv_7".into(), amount_cents: 4_200 });
    let paid = client.call("crm.billing.pay", json!({"id": "inv_7"})).await.unwrap();
    assert_eq!(paid.value, Some(json!("paid inv_7")));
    // The upstream's own failure comes back typed, as any server's does.
    let missing = client.call("crm.billing.get_invoice", json!({"id": "inv_missing"})).await.unwrap_err();
    assert_eq!(missing.code(), Some(&ErrorCode::NotFound));
    // The local group routes as before.
    assert_eq!(client.call("local.ping", json!({})).await.unwrap().value, Some(json!("pong")));

    let reached: Vec<(String, Value)> = forwarded
        .lock()
        .unwrap()
        .iter()
        .map(|(tool, arguments, _)| (tool.clone(), Value::Object(arguments.clone())))
        .collect();
    assert_eq!(
        reached,
        [
            ("billing".to_owned(), json!({"action": "get_invoice", "id": "inv_7"})),
            ("billing".to_owned(), json!({"action": "pay", "id": "inv_7"})),
            ("billing".to_owned(), json!({"action": "get_invoice", "id": "inv_missing"})),
        ]
    );
}

// On the paused clock the mount is up after 500 ms and the retry comes after 2 s, in that order.
#[tokio::test(start_paused = true)]
async fn a_client_that_connected_before_the_mount_did_gets_through_with_its_retry_policy() {
    // The mount is declared, so the server names it at `initialize`, and connecting: no tool of
    // it is listed when the client reads tools/list.
    let gateway = FusionServer::builder("gateway", "1")
        .group(Group::new("local", "Local.").action(Action::new("ping", "Ping.").handler(ping)))
        .mount(crm())
        .build(())
        .unwrap();
    let (upstream, forwarded) = (upstream(), Forwarded::default());
    let client = connect(&gateway).await;
    assert_eq!(client.tools().len(), 1, "only the local group is listed");

    // Sent as named, it is answered: the mount is connecting.
    let outcome = client.call_raw("crm.billing.get_invoice", json!({"id": "inv_1"})).await.unwrap();
    assert_eq!(outcome.warnings[0].error.code, ErrorCode::HandoffConnecting);
    // A namespace the server does not mount is still nothing to send.
    assert!(matches!(client.call("erp.find", json!({})).await, Err(FusionClientError::NoSuchAction { .. })));

    let client = client.with_retry(RetryPolicy::new(4, Duration::from_secs(10)));
    let connects = {
        let (gateway, upstream, forwarded) = (gateway.clone(), upstream.clone(), Arc::clone(&forwarded));
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            set_ready(&gateway, &upstream, &forwarded);
        })
    };
    let reply = client.call_typed::<_, Invoice>("crm.billing.get_invoice", &get("inv_3")).await.unwrap();
    connects.await.unwrap();
    assert_eq!(reply.value, Invoice { id: "inv_3".into(), amount_cents: 4_200 });
    // Routed by the tools read again once the mount was up: the upstream's group and action.
    let forwarded = forwarded.lock().unwrap();
    assert_eq!(forwarded.len(), 1);
    assert_eq!(Value::Object(forwarded[0].1.clone()), json!({"action": "get_invoice", "id": "inv_3"}));
}
