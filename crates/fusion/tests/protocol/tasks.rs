//! Tasks through rmcp's own client, on a 2025-11-25 session that declared the tasks extension at
//! `initialize` and on 2026-07-28, where it declares it in each request's `_meta`: the handle,
//! polling with `tasks/get`, cancelling, an unknown id, and a client without the extension
//! getting the plain result.

use std::sync::Arc;
use std::time::Duration;

use mcp_fusion::task::TaskSupport;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig, GetTaskParams,
    GetTaskResult, Implementation, ProtocolVersion, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RunningService};
use rmcp::{RoleClient, ServiceExt as _};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Semaphore;

#[derive(Deserialize, JsonSchema)]
struct Export {}

/// Each call waits for a permit, and says it started.
struct Gate {
    release: Semaphore,
    started: Semaphore,
}

async fn export(ctx: Ctx<Arc<Gate>>, _input: Export) -> Result<String, ToolError> {
    ctx.state().started.add_permits(1);
    ctx.state().release.acquire().await.expect("the gate stays open").forget();
    Ok("inv_1,inv_2,inv_3".to_owned())
}

fn server(gate: Arc<Gate>) -> FusionServer {
    FusionServer::builder("tasks-session", "1")
        .group(Group::new("billing", "Invoices.").action(
            Action::new("export_invoices", "Export invoices.").read_only().task(TaskSupport::Optional).handler(export),
        ))
        .build(gate)
        .unwrap()
}

/// A client of `server` on `version` (2026-07-28 discovers instead of initializing), declaring
/// the tasks extension if `tasks`.
async fn connect(
    server: FusionServer,
    tasks: bool,
    version: ProtocolVersion,
) -> RunningService<RoleClient, ClientConfig> {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let capabilities = if tasks { ClientCapabilities::builder().enable_tasks().build() } else { Default::default() };
    let config = ClientConfig::new(capabilities, Implementation::new("rmcp-tasks", "1"));
    if version == ProtocolVersion::V_2026_07_28 {
        let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![version] };
        config.serve_with_lifecycle(client_io, lifecycle).await.unwrap()
    } else {
        config.with_protocol_version(version).serve(client_io).await.unwrap()
    }
}

fn export_call() -> CallToolRequestParams {
    CallToolRequestParams::new("billing")
        .with_arguments(json!({"action": "export_invoices"}).as_object().cloned().unwrap())
}

fn gate() -> Arc<Gate> {
    Arc::new(Gate { release: Semaphore::new(0), started: Semaphore::new(0) })
}

/// Polls the task until it ended, for at most ten seconds.
async fn ended(client: &RunningService<RoleClient, ClientConfig>, id: &str) -> GetTaskResult {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let task = client.get_task(GetTaskParams::new(id)).await.unwrap();
            if task.task.status().is_terminal() {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the task ends")
}

#[tokio::test]
async fn rmcps_client_gets_a_handle_polls_it_to_the_result_and_cancels_another() {
    handle_poll_and_cancel(ProtocolVersion::V_2025_11_25).await;
}

#[tokio::test]
async fn rmcps_client_on_2026_07_28_gets_a_handle_polls_it_to_the_result_and_cancels_another() {
    handle_poll_and_cancel(ProtocolVersion::V_2026_07_28).await;
}

async fn handle_poll_and_cancel(version: ProtocolVersion) {
    let gate = gate();
    let client = connect(server(Arc::clone(&gate)), true, version.clone()).await;
    assert_eq!(client.peer_info().unwrap().protocol_version, version);
    let CallToolResponse::Task(created) = client.call_tool_once(export_call()).await.unwrap() else {
        panic!("a task was expected");
    };
    assert_eq!(created.task.status, TaskStatus::Working);
    gate.started.acquire().await.unwrap().forget();
    let working = client.get_task(GetTaskParams::new(&created.task.task_id)).await.unwrap();
    assert_eq!(working.task.status(), TaskStatus::Working);

    gate.release.add_permits(1);
    let done = ended(&client, &created.task.task_id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("completed expected: {done:?}") };
    assert_eq!(result["content"][0]["text"], "inv_1,inv_2,inv_3");

    // A second one, cancelled while it waits.
    let CallToolResponse::Task(second) = client.call_tool_once(export_call()).await.unwrap() else {
        panic!("a task was expected");
    };
    gate.started.acquire().await.unwrap().forget();
    client.cancel_task(CancelTaskParams::new(&second.task.task_id)).await.unwrap();
    let cancelled = ended(&client, &second.task.task_id).await;
    assert_eq!(cancelled.task.status(), TaskStatus::Cancelled);

    // Unknown: rmcp's client sees the JSON-RPC error.
    let unknown = client.get_task(GetTaskParams::new("no-such-task")).await.unwrap_err();
    assert!(unknown.to_string().contains("no task 'no-such-task' of yours is known here"), "{unknown}");
}

#[tokio::test]
async fn a_session_without_the_extension_gets_the_plain_result() {
    plain_result(ProtocolVersion::V_2025_11_25).await;
}

#[tokio::test]
async fn a_2026_07_28_client_without_the_extension_gets_the_plain_result() {
    plain_result(ProtocolVersion::V_2026_07_28).await;
}

async fn plain_result(version: ProtocolVersion) {
    let gate = gate();
    gate.release.add_permits(1);
    let client = connect(server(gate), false, version).await;
    let CallToolResponse::Complete(result) = client.call_tool_once(export_call()).await.unwrap() else {
        panic!("a plain result was expected");
    };
    assert_eq!(result.content[0].as_text().unwrap().text, "inv_1,inv_2,inv_3");
}

async fn reject(_ctx: Ctx<Arc<Gate>>, _input: Export) -> Result<String, rmcp::ErrorData> {
    Err(rmcp::ErrorData::invalid_params("the export's source is gone", Some(json!({"source": "ledger"}))))
}

/// The same error through `?` in a handler returning `mcp_fusion::Result`.
async fn reject_boxed(ctx: Ctx<Arc<Gate>>, input: Export) -> mcp_fusion::Result<String> {
    Ok(reject(ctx, input).await?)
}

fn rejecting_server(boxed: bool) -> FusionServer {
    let action = Action::new("export_invoices", "Export invoices.").read_only().task(TaskSupport::Optional);
    let action = if boxed { action.handler(reject_boxed) } else { action.handler(reject) };
    FusionServer::builder("tasks-rejecting", "1")
        .group(Group::new("billing", "Invoices.").action(action))
        .build(gate())
        .unwrap()
}

#[tokio::test]
async fn a_handlers_json_rpc_error_fails_its_task_and_answers_a_plain_call() {
    for boxed in [false, true] {
        json_rpc_error_of(boxed).await;
    }
}

async fn json_rpc_error_of(boxed: bool) {
    // As a task: `failed`, with the handler's error as it was made.
    let client = connect(rejecting_server(boxed), true, ProtocolVersion::V_2026_07_28).await;
    let CallToolResponse::Task(created) = client.call_tool_once(export_call()).await.unwrap() else {
        panic!("a task was expected");
    };
    let done = ended(&client, &created.task.task_id).await;
    let TaskPayload::Failed { error } = &done.task.payload else { panic!("failed expected: {done:?}") };
    assert_eq!(error["code"], -32602);
    assert_eq!(error["message"], "the export's source is gone");
    assert_eq!(error["data"], json!({"source": "ledger"}));

    // As a plain call: the request's JSON-RPC error.
    let client = connect(rejecting_server(boxed), false, ProtocolVersion::V_2025_11_25).await;
    let error = client.call_tool_once(export_call()).await.unwrap_err();
    let rmcp::service::ServiceError::McpError(error) = error else { panic!("a JSON-RPC error was expected: {error}") };
    assert_eq!((error.code.0, error.message.as_ref()), (-32602, "the export's source is gone"));
}

#[derive(Deserialize, JsonSchema)]
struct Approval {
    /// Whether to export.
    approve: bool,
}

/// Asks its user twice at once, then once more: each question waits in the task's store.
async fn ask_then_export(ctx: Ctx<Arc<Gate>>, _input: Export) -> Result<String, ToolError> {
    let (first, second) = tokio::join!(
        ctx.elicit::<Approval>("Export 2025?").key("y2025"),
        ctx.elicit::<Approval>("Export 2026?").key("y2026")
    );
    let approved = |answer: mcp_fusion::Elicited<Approval>| {
        matches!(answer, mcp_fusion::Elicited::Accepted(Approval { approve: true }))
    };
    let (first, second) = (approved(first?), approved(second?));
    let last = approved(ctx.elicit::<Approval>("And send it?").key("send").await?);
    Ok(format!("2025={first} 2026={second} sent={last}"))
}

fn asking_server() -> FusionServer {
    FusionServer::builder("tasks-asking", "1")
        .group(
            Group::new("billing", "Invoices.").action(
                Action::new("export_invoices", "Export invoices.")
                    .read_only()
                    .task(TaskSupport::Optional)
                    .handler(ask_then_export),
            ),
        )
        .build(gate())
        .unwrap()
}

/// A 2026-07-28 client of [`asking_server`] that declares tasks and elicitation.
async fn asking_client() -> RunningService<RoleClient, ClientConfig> {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = asking_server().serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let capabilities = ClientCapabilities::builder().enable_tasks().enable_elicitation().build();
    let config = ClientConfig::new(capabilities, Implementation::new("rmcp-tasks", "1"));
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    config.serve_with_lifecycle(client_io, lifecycle).await.unwrap()
}

/// Polls the task until it waits on exactly the questions `keys`, for at most ten seconds.
async fn asking(client: &RunningService<RoleClient, ClientConfig>, id: &str, keys: &[&str]) -> GetTaskResult {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let task = client.get_task(GetTaskParams::new(id)).await.unwrap();
            if let TaskPayload::InputRequired { input_requests } = &task.task.payload
                && input_requests.keys().map(String::as_str).eq(keys.iter().copied())
            {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the task does not wait on {keys:?}"))
}

fn answers(given: &[(&str, bool)]) -> rmcp::model::InputResponses {
    given
        .iter()
        .map(|(key, approve)| ((*key).to_owned(), json!({"action": "accept", "content": {"approve": approve}})))
        .collect()
}

#[tokio::test]
async fn a_task_that_asks_waits_input_required_and_resumes_with_each_answer_given() {
    let client = asking_client().await;

    let CallToolResponse::Task(created) = client.call_tool_once(export_call()).await.unwrap() else {
        panic!("a task was expected");
    };
    let id = created.task.task_id.clone();
    // Two questions at once: both pending, and the status says what it waits for.
    let both = asking(&client, &id, &["y2025", "y2026"]).await;
    assert_eq!(both.task.status(), TaskStatus::InputRequired);
    assert!(both.task.task.status_message.as_deref().unwrap().contains("waits for its client's answer"), "{both:?}");

    // One answer, and one to no question (ignored): only the other stays pending.
    client.update_task(UpdateTaskParams::new(&id, answers(&[("y2025", true), ("nope", true)]))).await.unwrap();
    asking(&client, &id, &["y2026"]).await;
    // The second: the work goes on to its next question, then ends with all three answers.
    client.update_task(UpdateTaskParams::new(&id, answers(&[("y2026", false)]))).await.unwrap();
    asking(&client, &id, &["send"]).await;
    client.update_task(UpdateTaskParams::new(&id, answers(&[("send", true)]))).await.unwrap();
    let done = ended(&client, &id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("completed expected: {done:?}") };
    assert_eq!(result["content"][0]["text"], "2025=true 2026=false sent=true");
}

#[tokio::test]
async fn a_task_cancelled_while_it_waits_for_an_answer_ends_cancelled() {
    let client = asking_client().await;
    let CallToolResponse::Task(created) = client.call_tool_once(export_call()).await.unwrap() else {
        panic!("a task was expected");
    };
    asking(&client, &created.task.task_id, &["y2025", "y2026"]).await;
    client.cancel_task(CancelTaskParams::new(&created.task.task_id)).await.unwrap();
    let cancelled = ended(&client, &created.task.task_id).await;
    assert_eq!(cancelled.task.status(), TaskStatus::Cancelled);
}

/// Asks whether to export in the call, then exports as a task.
async fn confirm_then_export(ctx: Ctx<Arc<Gate>>, _input: Export) -> Result<String, ToolError> {
    let approved = matches!(
        ctx.elicit::<Approval>("Export every invoice?").key("approve").await?,
        mcp_fusion::Elicited::Accepted(Approval { approve: true })
    );
    if !approved {
        return Ok("not exported".to_owned());
    }
    ctx.become_task().await?;
    Ok("inv_1,inv_2".to_owned())
}

#[tokio::test]
async fn an_action_that_asks_first_gets_its_answer_in_the_call_and_becomes_a_task_after() {
    let server = FusionServer::builder("tasks-composed", "1")
        .group(
            Group::new("billing", "Invoices.").action(
                Action::new("export_invoices", "Export invoices.")
                    .read_only()
                    .task(TaskSupport::Required)
                    .questions_before_task()
                    .handler(confirm_then_export),
            ),
        )
        .build(gate())
        .unwrap();
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let capabilities = ClientCapabilities::builder().enable_tasks().enable_elicitation().build();
    let config = ClientConfig::new(capabilities, Implementation::new("rmcp-tasks", "1"));
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = config.serve_with_lifecycle(client_io, lifecycle).await.unwrap();

    // Round one: the question, and no task yet.
    let CallToolResponse::InputRequired(asked) = client.call_tool_once(export_call()).await.unwrap() else {
        panic!("the question was expected first");
    };
    assert!(asked.input_requests.as_ref().unwrap().contains_key("approve"), "{asked:?}");
    // Round two, with the answer: the task's handle, then its result.
    let answered = export_call()
        .with_input_responses(answers(&[("approve", true)]))
        .with_request_state(asked.request_state.clone().unwrap());
    let CallToolResponse::Task(created) = client.call_tool_once(answered).await.unwrap() else {
        panic!("a task was expected once answered");
    };
    let done = ended(&client, &created.task.task_id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("completed expected: {done:?}") };
    assert_eq!(result["content"][0]["text"], "inv_1,inv_2");
    // Declined: the handler never becomes a task, and answers as a plain call.
    let declined = export_call()
        .with_input_responses(answers(&[("approve", false)]))
        .with_request_state(asked.request_state.unwrap());
    let CallToolResponse::Complete(plain) = client.call_tool_once(declined).await.unwrap() else {
        panic!("a plain answer was expected");
    };
    assert_eq!(plain.content[0].as_text().unwrap().text, "not exported");
}
