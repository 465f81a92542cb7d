//! The experimental tasks of MCP 2025-11-25, answered in that form's shapes: the requests a
//! transport renamed for a session that speaks it (see `task::experimental`) reach
//! `on_custom_request`, which hands them here.

use mcp_fusion_wire::{ErrorCode, Sent, ToolError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode as RpcCode, PaginatedRequestParams,
    ServerResult,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Deserialize as _;
use serde_json::{Map, Value, json};

use super::FusionServer;
use super::gates::Gate;
use super::service::call_params_problem;
use super::tasks::{Called, TaskAsked};
use crate::context::RequestInfo;
use crate::output::envelope_result;
use crate::task::experimental::{self, IMMEDIATE_RESPONSE_META};
use crate::task::{StoredTask, TaskCursor};

/// The most tasks one `tasks/list` answer holds.
const TASKS_PER_PAGE: usize = 50;

impl FusionServer {
    /// Answers `request`, one of the methods a session of the experimental form is served
    /// under. Anyone else sending such a method (it is no method of MCP's) is told it is not
    /// found, as for any unknown method.
    pub(super) async fn experimental_tasks(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if !experimental::marked(&context.extensions) {
            let method = Sent::text(&request.method);
            return Err(ErrorData::new(RpcCode::METHOD_NOT_FOUND, format!("Method not found: {method}"), None));
        }
        let params = request.params.unwrap_or(Value::Null);
        match request.method.as_str() {
            experimental::CALL => self.call_as_task(params, context).await,
            experimental::LIST_TOOLS => self.list_tools_with_tasks(params, context).await,
            method => {
                let info = RequestInfo::from_context(context);
                let (server, asking) = (self.clone(), info.clone());
                let answer = match method {
                    experimental::GET => {
                        let work = async move {
                            let task = server.current_task(&task_id("tasks/get", &params)?, &asking).await?;
                            Ok(experimental::task(&task))
                        };
                        self.through_gate(Gate::GetTask, info, work).await?
                    }
                    experimental::RESULT => {
                        // The gate admits the request and finds the caller's task; the wait for
                        // its end is the task's, held outside the gate as a listen is, so that
                        // no timeout or concurrency limit of a request cuts it.
                        let id = task_id("tasks/result", &params);
                        let found = id.clone();
                        let work = async move { server.current_task(&found?, &asking).await.map(|_| ()) };
                        self.through_gate(Gate::TaskResult, info.clone(), work).await?;
                        self.task_result(&id?, &info).await?
                    }
                    experimental::LIST => {
                        let work = async move { server.list_tasks(&params, &asking).await };
                        self.through_gate(Gate::ListTasks, info, work).await?
                    }
                    _ => {
                        let work = async move {
                            let task = server.cancel_now(&task_id("tasks/cancel", &params)?, &asking).await?;
                            Ok(experimental::task(&task))
                        };
                        self.through_gate(Gate::CancelTask, info, work).await?
                    }
                };
                Ok(CustomResult(answer))
            }
        }
    }

    /// `tools/call` with a `task`: a task when the call reaches its handler, the plain answer
    /// when validation or a guard refused it (a refused task costs nothing).
    async fn call_as_task(
        &self,
        mut params: Value,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let task = params.as_object_mut().and_then(|params| params.shift_remove("task"));
        let ttl_ms = match &task {
            Some(Value::Object(task)) => match task.get("ttl") {
                None | Some(Value::Null) => None,
                Some(ttl) => Some(ttl.as_u64().ok_or_else(|| bad_task(Some(ttl)))?),
            },
            _ => return Err(bad_task(None)),
        };
        let call = CallToolRequestParams::deserialize(&params)
            .map_err(|_| ErrorData::invalid_params(call_params_problem(Some(&params)), None))?;
        let mut info = RequestInfo::from_context(context);
        info.extensions.insert(TaskAsked { ttl_ms });
        match self.call_or_launch(&call.name, call.arguments, info).await? {
            Called::Task(task) => Ok(CustomResult(created(&task))),
            Called::Answered(CallToolResponse::Complete(result)) => legacy(ServerResult::CallToolResult(result)),
            Called::Answered(_) => {
                // A call of 2025-11-25 asks over its session, so nothing but a result comes back.
                let error = ToolError::internal(format!("{} answered with neither a result nor a task.", call.name))
                    .suggest("Nothing to do but report it.");
                legacy(ServerResult::CallToolResult(envelope_result(error.to_call_result(), &[], false)))
            }
        }
    }

    /// `tools/list`, each tool saying whether it runs as a task (`execution.taskSupport`).
    async fn list_tools_with_tasks(
        &self,
        params: Value,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let params = match params {
            Value::Null => None,
            params => Some(serde_json::from_value::<PaginatedRequestParams>(params).map_err(|_| {
                ErrorData::invalid_params(
                    "Invalid params for tools/list: expected an object with an optional \"cursor\" string",
                    None,
                )
            })?),
        };
        let listed = ServerHandler::list_tools(self, params, context).await?;
        let CustomResult(mut value) = legacy(ServerResult::ListToolsResult(listed))?;
        let catalog = self.inner.catalog.load();
        let tools = value.get_mut("tools").and_then(Value::as_array_mut).into_iter().flatten();
        for tool in tools.filter_map(Value::as_object_mut) {
            let support = tool.get("name").and_then(Value::as_str).and_then(|name| catalog.task_support(name));
            if let Some(support) = support {
                let support = match support {
                    crate::task::TaskSupport::Required => "required",
                    _ => "optional",
                };
                tool.insert("execution".to_owned(), json!({ "taskSupport": support }));
            }
        }
        Ok(CustomResult(value))
    }

    /// `tasks/result`: waits until the task ended, then answers what its call would have: the
    /// tool result, or the JSON-RPC error.
    async fn task_result(&self, id: &str, request: &RequestInfo) -> Result<Value, ErrorData> {
        let cancelled = request.cancellation.clone();
        let Some(task) = self.ended_task(id, request, &cancelled).await? else {
            return Err(ErrorData::new(
                RpcCode::INTERNAL_ERROR,
                "Request cancelled: this tasks/result stopped waiting; the task runs on. Poll it with tasks/get.",
                None,
            ));
        };
        experimental::result(&task, || cancelled_result(&task)).unwrap_or(Ok(Value::Null))
    }

    /// `tasks/list`: the caller's own tasks, oldest first, a page at a time.
    async fn list_tasks(&self, params: &Value, request: &RequestInfo) -> Result<Value, ErrorData> {
        let after = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(cursor)) => Some(TaskCursor::decode(cursor).ok_or_else(|| {
                ErrorData::invalid_params(
                    format!(
                        "Invalid params: the cursor {} is not one this server gave. Nothing was listed: send tasks/list without a cursor for the first page, then each nextCursor as it comes.",
                        Sent::text(cursor)
                    ),
                    None,
                )
            })?),
            Some(other) => {
                return Err(ErrorData::invalid_params(
                    format!("Invalid params for tasks/list: \"cursor\" must be a string, but it is {}", mcp_fusion_wire::value_kind(other)),
                    None,
                ));
            }
        };
        let (tasks, next) = self.tasks_of(request, after, TASKS_PER_PAGE).await?;
        let mut answer = Map::new();
        let shown = tasks.iter().map(experimental::task).collect();
        answer.insert("tasks".to_owned(), Value::Array(shown));
        if let Some(next) = next {
            answer.insert("nextCursor".to_owned(), Value::String(next.encode()));
        }
        Ok(Value::Object(answer))
    }
}

/// The answer to a call that became a task: the task, and a sentence a host may hand its model
/// while the task runs.
fn created(task: &StoredTask) -> Value {
    let immediate =
        format!("{} started as task {} and runs on; its result follows when it finishes.", task.action, task.id);
    json!({
        "task": experimental::task(task),
        "_meta": { IMMEDIATE_RESPONSE_META: immediate },
    })
}

/// What a cancelled task's `tasks/result` answers: the envelope of a call its client cancelled.
fn cancelled_result(task: &StoredTask) -> Value {
    let error = ToolError::new(
        ErrorCode::cancelled(),
        format!("{} did not finish: its task was cancelled by its client.", task.action),
    )
    .suggest(format!("Call {} again if its result is still needed.", task.action));
    serde_json::to_value(envelope_result(error.to_call_result(), &[], false)).unwrap_or_default()
}

/// A result in the shape of 2025-11-25: without `resultType`, and with object output only.
fn legacy(mut result: ServerResult) -> Result<CustomResult, ErrorData> {
    result.strip_result_type_for_legacy_peer();
    result.strip_non_object_output_for_legacy_peer();
    serde_json::to_value(&result).map(CustomResult).map_err(|error| {
        ErrorData::internal_error(format!("Internal error: the result did not serialize: {error}"), None)
    })
}

/// The `taskId` of a task request's params.
fn task_id(method: &str, params: &Value) -> Result<String, ErrorData> {
    match params.get("taskId") {
        Some(Value::String(id)) => Ok(id.clone()),
        Some(other) => Err(ErrorData::invalid_params(
            format!(
                "Invalid params for {method}: \"taskId\" must be a string, but it is {}",
                mcp_fusion_wire::value_kind(other)
            ),
            None,
        )),
        None => Err(ErrorData::invalid_params(
            format!("Invalid params for {method}: \"taskId\" is missing; send the id tools/call returned"),
            None,
        )),
    }
}

/// `-32602` for a `task` parameter that is not one.
fn bad_task(ttl: Option<&Value>) -> ErrorData {
    let found = match ttl {
        Some(ttl) => format!("its \"ttl\" is {}", mcp_fusion_wire::value_kind(ttl)),
        None => "it is not an object".to_owned(),
    };
    ErrorData::invalid_params(
        format!(
            "Invalid params for tools/call: \"task\" must be an object, optionally with \"ttl\" (milliseconds, a whole number), but {found}. Send \"task\": {{}} to run the call as a task."
        ),
        None,
    )
}
