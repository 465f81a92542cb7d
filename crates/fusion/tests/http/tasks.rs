//! Tasks over HTTP as raw JSON-RPC on MCP 2026-07-28: a client that declares the tasks
//! extension gets a handle at once and polls it; one that does not gets the plain result.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcp_fusion::auth::{Identity, StaticTokens};
use mcp_fusion::guard::Concurrency;
use mcp_fusion::http::HttpConfig;
use mcp_fusion::task::TaskSupport;
use mcp_fusion::wire::{ToolError, parse};
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::Semaphore;

use super::mcp_2026::{meta, send, serve_with};

/// What the handlers wait on: a permit per call the test lets finish.
pub(super) struct Gate {
    pub(super) release: Semaphore,
    pub(super) started: Semaphore,
}

#[derive(Deserialize, JsonSchema)]
struct Export {
    /// Only invoices of this status.
    #[schemars(regex(pattern = r"^(open|paid|void)$"))]
    status: Option<String>,
}

async fn export(ctx: Ctx<Arc<Gate>>, input: Export) -> Result<String, ToolError> {
    ctx.state().started.add_permits(1);
    tokio::select! {
        permit = ctx.state().release.acquire() => permit.expect("the gate stays open").forget(),
        () = ctx.call().cancellation().cancelled() => return Err(ToolError::internal("stopped by its token")),
    }
    match input.status.as_deref() {
        Some("void") => Err(ToolError::not_found("No void invoices to export.").suggest("Export open or paid ones.")),
        status => Ok(format!("exported inv_1,inv_2 ({})", status.unwrap_or("all"))),
    }
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code, reason = "declared so that the key is taken as an argument")]
struct Keyed {
    idempotency_key: Option<String>,
}

async fn export_keyed(ctx: Ctx<Arc<Gate>>, _input: Keyed) -> Result<String, ToolError> {
    export(ctx, Export { status: None }).await
}

pub(super) fn server(gate: Arc<Gate>) -> FusionServer {
    FusionServer::builder("tasks-2026", "1")
        .group(
            Group::new("billing", "Invoices.")
                // One running call at a time, none waiting: a running task holds the place.
                .concurrency(Concurrency::new(1, 0))
                .action(
                    Action::new("export_invoices", "Export invoices as CSV.")
                        .read_only()
                        .task(TaskSupport::Optional)
                        .handler(export),
                )
                .action(
                    Action::new("export_keyed", "Export invoices once per key.")
                        .read_only()
                        .idempotent_by_key()
                        .task(TaskSupport::Optional)
                        .handler(export_keyed),
                )
                .action(
                    Action::new("export_all", "Export everything; only as a task.")
                        .read_only()
                        .task(TaskSupport::Required)
                        .handler(export),
                ),
        )
        .build(gate)
        .unwrap()
}

pub(super) fn gate() -> Arc<Gate> {
    Arc::new(Gate { release: Semaphore::new(0), started: Semaphore::new(0) })
}

pub(super) async fn serve(gate: Arc<Gate>) -> SocketAddr {
    let tokens = StaticTokens::new().token("ana-token", Identity::new("ana")).token("bo-token", Identity::new("bo"));
    let config = HttpConfig::new("127.0.0.1:0").authenticator(tokens);
    serve_with(server(gate), config).await
}

/// The `_meta` of a client that declares the tasks extension.
fn tasks_meta() -> Value {
    meta(json!({
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }))
}

fn params(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

/// The JSON-RPC answer of `method` sent as `token`: HTTP 200 for a result, or the status
/// the transport gives its error (400 for a missing capability).
async fn answer(addr: SocketAddr, token: &str, method: &str, params: Map<String, Value>) -> Value {
    let (status, messages) = send(addr, Some(token), method, params).await;
    let answer = messages.last().cloned().unwrap();
    let expected = match answer["error"]["code"].as_i64() {
        Some(-32021) => 400,
        _ => 200,
    };
    assert_eq!(status, expected, "{messages:?}");
    answer
}

async fn call(addr: SocketAddr, token: &str, arguments: Value, meta: Value) -> Value {
    let params = params(json!({"name": "billing", "arguments": arguments, "_meta": meta}));
    answer(addr, token, "tools/call", params).await
}

async fn get(addr: SocketAddr, token: &str, id: &str) -> Value {
    answer(addr, token, "tasks/get", params(json!({"taskId": id, "_meta": tasks_meta()}))).await
}

/// Polls the task until it leaves `working`, for at most ten seconds.
async fn settled(addr: SocketAddr, token: &str, id: &str) -> Value {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let task = get(addr, token, id).await;
            if task["result"]["status"] != "working" {
                return task["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the task settles")
}

#[tokio::test]
async fn a_task_is_handed_out_at_once_then_read_working_and_completed() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let created = call(addr, "ana-token", json!({"action": "export_invoices", "status": "open"}), tasks_meta()).await;
    let task = &created["result"];
    assert_eq!(task["resultType"], "task", "{created}");
    assert_eq!(task["status"], "working");
    assert_eq!((task["ttlMs"].as_u64(), task["pollIntervalMs"].as_u64()), (Some(3_600_000), Some(1_000)));
    let id = task["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32, "a random id: {id}");
    // The handle came while the handler waits on the gate.
    gate.started.acquire().await.unwrap().forget();
    let working = get(addr, "ana-token", &id).await;
    assert_eq!(working["result"]["status"], "working", "{working}");
    assert_eq!(working["result"]["resultType"], "complete");
    assert_eq!(working["result"]["statusMessage"], "billing.export_invoices is running.");

    gate.release.add_permits(1);
    let done = settled(addr, "ana-token", &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "exported inv_1,inv_2 (open)");
    assert_eq!(done["result"]["isError"], false);
}

#[tokio::test]
async fn a_failed_call_is_a_completed_task_with_the_calls_envelope() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let created = call(addr, "ana-token", json!({"action": "export_invoices", "status": "void"}), tasks_meta()).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    gate.release.add_permits(1);
    let done = settled(addr, "ana-token", &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true);
    let envelope = parse(done["result"]["content"][0]["text"].as_str().unwrap());
    assert_eq!(envelope.error.code.as_str(), "NOT_FOUND");
    assert_eq!(envelope.error.recovery.as_deref(), Some("Export open or paid ones."));
}

#[tokio::test]
async fn a_refused_call_creates_no_task_and_is_answered_as_the_plain_call() {
    let gate = gate();
    let addr = serve(gate).await;
    let refused = call(addr, "ana-token", json!({"action": "export_invoices", "status": "lost"}), tasks_meta()).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_eq!(refused["result"].get("resultType").and_then(Value::as_str).unwrap_or("complete"), "complete");
    let envelope = parse(refused["result"]["content"][0]["text"].as_str().unwrap());
    assert_eq!(envelope.error.code.as_str(), "VALIDATION_ERROR");
}

#[tokio::test]
async fn a_client_without_the_extension_gets_the_plain_result_or_a_missing_capability() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    gate.release.add_permits(1);
    let plain = call(addr, "ana-token", json!({"action": "export_invoices"}), meta(json!({}))).await;
    assert_eq!(plain["result"]["content"][0]["text"], "exported inv_1,inv_2 (all)", "{plain}");
    assert!(plain["result"].get("taskId").is_none());

    let refused = call(addr, "ana-token", json!({"action": "export_all"}), meta(json!({}))).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("billing.export_all runs only as a task"), "{message}");

    // Nor may it read tasks at all.
    let get = answer(addr, "ana-token", "tasks/get", params(json!({"taskId": "x", "_meta": meta(json!({}))}))).await;
    assert_eq!(get["error"]["code"], -32021, "{get}");
}

#[tokio::test]
async fn a_cancelled_task_stops_its_work_and_reads_cancelled() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let created = call(addr, "ana-token", json!({"action": "export_invoices"}), tasks_meta()).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    gate.started.acquire().await.unwrap().forget();
    let ack = answer(addr, "ana-token", "tasks/cancel", params(json!({"taskId": id, "_meta": tasks_meta()}))).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = settled(addr, "ana-token", &id).await;
    assert_eq!(done["status"], "cancelled", "{done}");
    assert_eq!(done["statusMessage"], "billing.export_invoices was cancelled by its client before it finished.");
    // The gate was never opened: the work stopped by its token, not by finishing.
    assert_eq!(gate.release.available_permits(), 0);
}

#[tokio::test]
async fn an_unknown_or_someone_elses_task_id_reads_unknown_with_what_to_do() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let created = call(addr, "ana-token", json!({"action": "export_invoices"}), tasks_meta()).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();

    let unknown = get(addr, "ana-token", "0123<script>").await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(
        unknown["error"]["message"],
        "Invalid params: no task '0123<script>' of yours is known here. A task is kept 1 h after it starts and only its creator can read it. Nothing was done: call the action that started it again (with the same idempotency key, if it took one, so a write is not made twice) and poll the id that call returns."
    );
    // Bo holds Ana's id: it reads exactly as an unknown one, and Bo cannot cancel it.
    let foreign = get(addr, "bo-token", &id).await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
    assert!(foreign["error"]["message"].as_str().unwrap().contains("of yours is known here"));
    let cancel = answer(addr, "bo-token", "tasks/cancel", params(json!({"taskId": id, "_meta": tasks_meta()}))).await;
    assert_eq!(cancel["error"]["code"], -32602, "{cancel}");
    let update = answer(
        addr,
        "bo-token",
        "tasks/update",
        params(json!({"taskId": id, "inputResponses": {}, "_meta": tasks_meta()})),
    )
    .await;
    assert_eq!(update["error"]["code"], -32602, "{update}");
    // Ana's task still works, and finishes for her.
    gate.release.add_permits(1);
    assert_eq!(settled(addr, "ana-token", &id).await["status"], "completed");
}

#[tokio::test]
async fn the_server_advertises_the_extension() {
    let addr = serve(gate()).await;
    let discovered = answer(addr, "ana-token", "server/discover", Map::new()).await;
    assert_eq!(
        discovered["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({}),
        "{discovered}"
    );
}

#[tokio::test]
async fn the_same_idempotency_key_answers_with_the_same_task() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let keyed = json!({"action": "export_keyed", "idempotency_key": "export-2026-12"});
    let first = call(addr, "ana-token", keyed.clone(), tasks_meta()).await;
    let id = first["result"]["taskId"].as_str().unwrap().to_owned();
    gate.started.acquire().await.unwrap().forget();
    // Sent again while it runs: the same task, and nothing runs twice (the group runs one call
    // at a time and sheds the rest, so a second run would be refused SERVER_BUSY).
    let again = call(addr, "ana-token", keyed.clone(), tasks_meta()).await;
    assert_eq!(again["result"]["resultType"], "task", "{again}");
    assert_eq!(again["result"]["taskId"], id.as_str());
    // A client that cannot read tasks is told which task holds the result.
    let plain = call(addr, "ana-token", keyed.clone(), meta(json!({}))).await;
    let envelope = parse(plain["result"]["content"][0]["text"].as_str().unwrap());
    assert_eq!(envelope.error.code.as_str(), "CONFLICT", "{plain}");
    assert!(envelope.error.message.contains(&format!("became the task '{id}'")), "{}", envelope.error.message);
    // Bo's call with Ana's key is refused: the key is bound to Ana, and Bo learns nothing of her task.
    let bos = call(addr, "bo-token", keyed, tasks_meta()).await;
    assert!(bos["result"].get("taskId").is_none(), "{bos}");
    let envelope = parse(bos["result"]["content"][0]["text"].as_str().unwrap());
    assert_eq!(envelope.error.code.as_str(), "CONFLICT");
    assert!(!envelope.error.message.contains(&id), "{}", envelope.error.message);
    gate.release.add_permits(1);
    assert_eq!(settled(addr, "ana-token", &id).await["status"], "completed");
}

#[tokio::test]
async fn a_running_task_counts_against_the_concurrency_limit() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let first = call(addr, "ana-token", json!({"action": "export_invoices"}), tasks_meta()).await;
    let id = first["result"]["taskId"].as_str().unwrap().to_owned();
    gate.started.acquire().await.unwrap().forget();
    let shed = call(addr, "ana-token", json!({"action": "export_invoices"}), tasks_meta()).await;
    assert!(shed["result"].get("taskId").is_none(), "a shed call is no task: {shed}");
    let envelope = parse(shed["result"]["content"][0]["text"].as_str().unwrap());
    assert_eq!(envelope.error.code.as_str(), "SERVER_BUSY");
    gate.release.add_permits(1);
    assert_eq!(settled(addr, "ana-token", &id).await["status"], "completed");
    // Its place is free again once it finished.
    gate.release.add_permits(1);
    let next = call(addr, "ana-token", json!({"action": "export_invoices"}), tasks_meta()).await;
    let next = next["result"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(settled(addr, "ana-token", &next).await["status"], "completed");
}

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Whether to go on.
    confirm: bool,
}

/// Asks the user before it exports.
async fn asking(ctx: Ctx<Arc<Gate>>, _input: Export) -> Result<String, ToolError> {
    let answer = ctx.elicit::<Confirm>("Export every invoice?").await?;
    Ok(format!("asked: {}", matches!(answer, mcp_fusion::Elicited::Accepted(Confirm { confirm: true }))))
}

/// Waits until stopped.
async fn endless(ctx: Ctx<Arc<Gate>>, _input: Export) -> Result<String, ToolError> {
    ctx.state().started.add_permits(1);
    ctx.call().cancellation().cancelled().await;
    ctx.state().release.add_permits(1);
    Err(ToolError::internal("stopped"))
}

#[tokio::test]
async fn a_task_asks_its_client_through_its_status_and_takes_the_answer_from_tasks_update() {
    let server = FusionServer::builder("tasks-asking", "1")
        .group(
            Group::new("billing", "Invoices.")
                .action(Action::new("asking", "Asks first.").task(TaskSupport::Optional).handler(asking)),
        )
        .build(gate())
        .unwrap();
    let tokens = StaticTokens::new().token("ana-token", Identity::new("ana"));
    let addr = serve_with(server, HttpConfig::new("127.0.0.1:0").authenticator(tokens)).await;

    // A client that cannot show a form: the call's own envelope, in the completed task.
    let created = call(addr, "ana-token", json!({"action": "asking"}), tasks_meta()).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let done = settled(addr, "ana-token", &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let envelope = parse(done["result"]["content"][0]["text"].as_str().unwrap());
    assert_eq!(envelope.error.code.as_str(), "ELICITATION_UNSUPPORTED", "{done}");

    // One that can: the question waits in the task, shown by tasks/get, until tasks/update.
    let can_ask = meta(json!({"io.modelcontextprotocol/clientCapabilities": {
        "elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}
    }}));
    let created = call(addr, "ana-token", json!({"action": "asking"}), can_ask).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let waiting = settled(addr, "ana-token", &id).await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    assert_eq!(waiting["inputRequests"]["elicitation-1"]["method"], "elicitation/create", "{waiting}");
    let update = params(json!({
        "taskId": id,
        "inputResponses": {"elicitation-1": {"action": "accept", "content": {"confirm": true}}},
        "_meta": tasks_meta(),
    }));
    let acked = answer(addr, "ana-token", "tasks/update", update).await;
    assert_eq!(acked["result"]["resultType"], "complete", "{acked}");
    let done = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let task = settled(addr, "ana-token", &id).await;
            if task["status"] != "input_required" {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the task ends once answered");
    assert_eq!(done["result"]["content"][0]["text"], "asked: true", "{done}");
}

#[tokio::test]
async fn a_task_past_its_time_to_live_is_stopped_and_forgotten() {
    let gate = gate();
    let server = FusionServer::builder("tasks-ttl", "1")
        .tasks(mcp_fusion::task::Tasks::new().ttl(Duration::from_millis(300)))
        .group(
            Group::new("billing", "Invoices.")
                .action(Action::new("endless", "Never ends.").task(TaskSupport::Optional).handler(endless)),
        )
        .build(Arc::clone(&gate))
        .unwrap();
    let tokens = StaticTokens::new().token("ana-token", Identity::new("ana"));
    let addr = serve_with(server, HttpConfig::new("127.0.0.1:0").authenticator(tokens)).await;

    let created = call(addr, "ana-token", json!({"action": "endless"}), tasks_meta()).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(created["result"]["ttlMs"], 300);
    gate.started.acquire().await.unwrap().forget();
    // Stopped through its token when its time ran out...
    tokio::time::timeout(Duration::from_secs(10), gate.release.acquire()).await.unwrap().unwrap().forget();
    // ...and then read as unknown, with what to do.
    let gone = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let read = get(addr, "ana-token", &id).await;
            if read.get("error").is_some() {
                return read;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    assert!(gone["error"]["message"].as_str().unwrap().contains("A task is kept 300 ms after it starts"), "{gone}");
}

/// rmcp's own client on 2026-07-28 over HTTP as `token`, declaring the tasks extension.
async fn rmcp_client(
    addr: SocketAddr,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, rmcp::model::ClientConfig> {
    use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp")).auth_header(token),
    );
    let config =
        ClientConfig::new(ClientCapabilities::builder().enable_tasks().build(), Implementation::new("rmcp", "1"));
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    config.serve_with_lifecycle(transport, lifecycle).await.unwrap()
}

#[tokio::test]
async fn rmcps_client_over_http_reads_its_own_task_and_is_refused_anothers() {
    use rmcp::model::{CallToolRequestParams, CallToolResponse, GetTaskParams, TaskPayload, TaskStatus};
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let ana = rmcp_client(addr, "ana-token").await;
    let bo = rmcp_client(addr, "bo-token").await;
    let call = CallToolRequestParams::new("billing").with_arguments(params(json!({"action": "export_invoices"})));
    let CallToolResponse::Task(created) = ana.call_tool_once(call).await.unwrap() else {
        panic!("a task was expected")
    };
    let id = created.task.task_id;
    gate.started.acquire().await.unwrap().forget();
    assert_eq!(ana.get_task(GetTaskParams::new(&id)).await.unwrap().task.status(), TaskStatus::Working);
    let refused = bo.get_task(GetTaskParams::new(&id)).await.unwrap_err();
    assert!(refused.to_string().contains("of yours is known here"), "{refused}");

    gate.release.add_permits(1);
    let done = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let task = ana.get_task(GetTaskParams::new(&id)).await.unwrap();
            if task.task.status().is_terminal() {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the task ends");
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("completed expected: {done:?}") };
    assert_eq!(result["content"][0]["text"], "exported inv_1,inv_2 (all)");
}
