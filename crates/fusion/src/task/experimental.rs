//! The experimental tasks of MCP 2025-11-25, for the sessions whose client speaks them: the
//! client asks for a task with a `task` parameter on `tools/call`, reads it with `tasks/get`,
//! waits for its result with `tasks/result`, lists its tasks with `tasks/list` and cancels one
//! with `tasks/cancel`; the server says which tools can run as tasks in `tools/list`
//! (`execution.taskSupport`) and that it serves them in its `initialize` result
//! (`capabilities.tasks`).
//!
//! rmcp knows only the tasks extension that replaced this form: it drops the `task` parameter
//! and the `tasks` capability when it decodes them, and routes `tasks/get` and `tasks/cancel` to
//! the extension's handlers. So this crate's transports serve a session of this form under
//! methods of their own ([`served_as`]): they rename its requests before rmcp reads them, mark
//! each with [`ExperimentalTasks`], and rewrite its `initialize` result
//! ([`initialize_result`]); the server answers the renamed requests itself, in this form's
//! shapes.

use rmcp::model::{
    ErrorData, Extensions, InitializeRequestParams, InitializeResult, ProtocolVersion, ServerResult, TASKS_EXTENSION_ID,
};
use serde_json::{Map, Value, json};

use super::store::{StoredTask, TaskState};

/// The method a `tools/call` with a `task` parameter is served under.
pub(crate) const CALL: &str = "fusion/experimental-tasks/tools/call";
/// The method `tools/list` is served under (its tools say whether they run as tasks).
pub(crate) const LIST_TOOLS: &str = "fusion/experimental-tasks/tools/list";
/// The method `tasks/get` is served under.
pub(crate) const GET: &str = "fusion/experimental-tasks/tasks/get";
/// The method `tasks/result` is served under.
pub(crate) const RESULT: &str = "fusion/experimental-tasks/tasks/result";
/// The method `tasks/list` is served under.
pub(crate) const LIST: &str = "fusion/experimental-tasks/tasks/list";
/// The method `tasks/cancel` is served under.
pub(crate) const CANCEL: &str = "fusion/experimental-tasks/tasks/cancel";

/// The methods a session of this form sends, and those they are served under (`tools/call`
/// only when it asks for a task).
const SERVED_AS: [(&str, &str); 6] = [
    ("tools/call", CALL),
    ("tools/list", LIST_TOOLS),
    ("tasks/get", GET),
    ("tasks/result", RESULT),
    ("tasks/list", LIST),
    ("tasks/cancel", CANCEL),
];

/// The `_meta` key that ties a result to the task it came from.
pub(crate) const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";

/// The `_meta` key of a text a host may hand its model at once, while the task runs.
pub(crate) const IMMEDIATE_RESPONSE_META: &str = "io.modelcontextprotocol/model-immediate-response";

/// The notification of a task's new status.
pub(crate) const STATUS_NOTIFICATION: &str = "notifications/tasks/status";

/// Left on a request by the transport when its session speaks this form. A client cannot set
/// it: it is a value of the transport's, not a field of the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExperimentalTasks;

/// Whether the client that sent `initialize` with `params` speaks this form: it asked for MCP
/// 2025-11-25 and did not declare the tasks extension (a client that did, such as rmcp's,
/// gets the extension's methods on that version too).
pub(crate) fn spoken_by(params: &InitializeRequestParams) -> bool {
    params.protocol_version == ProtocolVersion::V_2025_11_25 && !params.capabilities.supports_tasks()
}

/// Whether the transport marked the request of `extensions` (rmcp's, or, over HTTP, those of
/// the request's parts) as one of a session that speaks this form.
pub(crate) fn marked(extensions: &Extensions) -> bool {
    if extensions.get::<ExperimentalTasks>().is_some() {
        return true;
    }
    #[cfg(feature = "http")]
    if let Some(parts) = extensions.get::<http::request::Parts>() {
        return parts.extensions.get::<ExperimentalTasks>().is_some();
    }
    false
}

/// The method a request of a session of this form is served under, if it is one of this
/// form's: `method` is the request's method as JSON text (quoted), `asks_task` whether its
/// params hold a `task`.
pub(crate) fn served_as(method: &[u8], asks_task: impl FnOnce() -> bool) -> Option<&'static str> {
    let (sent, served) = SERVED_AS.iter().find(|(sent, _)| quoted_is(method, sent))?;
    (*sent != "tools/call" || asks_task()).then_some(*served)
}

/// Whether `method` is one that requests of this form are served under.
pub(crate) fn is_served(method: &str) -> bool {
    SERVED_AS.iter().any(|(_, served)| *served == method)
}

/// Whether the JSON string `quoted` (quotes included, as sent) is `name`. An escaped form of a
/// name is not served under it: no client writes `tasks\/get`.
fn quoted_is(quoted: &[u8], name: &str) -> bool {
    quoted.len() == name.len() + 2
        && quoted.first() == Some(&b'"')
        && quoted.last() == Some(&b'"')
        && &quoted[1..quoted.len() - 1] == name.as_bytes()
}

/// The `initialize` result for a client of this form: a server that runs tasks says so in
/// `capabilities.tasks` (listing, cancelling, and task-augmented `tools/call`) instead of in
/// the extensions, which this client did not declare.
pub(crate) fn initialize_result(result: &InitializeResult) -> ServerResult {
    let mut value = serde_json::to_value(result).unwrap_or_default();
    let capabilities = value.get_mut("capabilities").and_then(Value::as_object_mut);
    if let Some(capabilities) = capabilities {
        let extensions = capabilities.get_mut("extensions").and_then(Value::as_object_mut);
        let runs_tasks = extensions.is_some_and(|extensions| extensions.shift_remove(TASKS_EXTENSION_ID).is_some());
        if capabilities.get("extensions").and_then(Value::as_object).is_some_and(Map::is_empty) {
            capabilities.shift_remove("extensions");
        }
        if runs_tasks {
            let tasks = json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } });
            capabilities.insert("tasks".to_owned(), tasks);
        }
    }
    ServerResult::CustomResult(rmcp::model::CustomResult(value))
}

/// The status this form gives a task: a tool result with `isError` is a `failed` task here
/// (the extension calls it `completed`).
pub(crate) fn status(task: &StoredTask) -> &'static str {
    match &task.state {
        TaskState::Working => "working",
        TaskState::Completed { result } if is_error(result) => "failed",
        TaskState::Completed { .. } => "completed",
        TaskState::Failed { .. } => "failed",
        TaskState::Cancelled => "cancelled",
    }
}

/// Whether a kept tool result is an error (an envelope).
fn is_error(result: &Map<String, Value>) -> bool {
    result.get("isError").and_then(Value::as_bool) == Some(true)
}

/// The task as this form shows it, in `tasks/get`, `tasks/list`, `tasks/cancel`, the handle of
/// the call that created it and the notification of its end. A failed task says the envelope
/// of its failure in its `statusMessage`, so that a client that only polls reads it too.
pub(crate) fn task(task: &StoredTask) -> Value {
    let status_message = match &task.state {
        TaskState::Completed { result } if is_error(result) => first_text(result),
        _ => task.status_message(),
    };
    let mut shown = json!({
        "taskId": task.id,
        "status": status(task),
        "createdAt": super::iso(task.created_at_ms),
        "lastUpdatedAt": super::iso(task.updated_at_ms),
        "ttl": task.ttl_ms,
        "pollInterval": task.poll_interval_ms,
    });
    if let Some(message) = status_message {
        shown["statusMessage"] = Value::String(message);
    }
    shown
}

/// The first text of a tool result: where an envelope is.
fn first_text(result: &Map<String, Value>) -> Option<String> {
    let content = result.get("content")?.as_array()?;
    content.iter().find_map(|block| block.get("text")?.as_str().map(str::to_owned))
}

/// What `tasks/result` answers for an ended task: the tool result, tied to its task, or the
/// JSON-RPC error it ended with. `cancelled` is the envelope of a cancelled call for a task
/// that was cancelled (it has no result of its own). `None` while it works.
pub(crate) fn result(task: &StoredTask, cancelled: impl FnOnce() -> Value) -> Option<Result<Value, ErrorData>> {
    let mut result = match &task.state {
        TaskState::Working => return None,
        TaskState::Completed { result } => Value::Object(result.clone()),
        TaskState::Failed { error } => return Some(Err(error_data(error))),
        TaskState::Cancelled => cancelled(),
    };
    if let Some(result) = result.as_object_mut() {
        // The result of 2025-11-25 has no resultType.
        result.shift_remove("resultType");
        let meta = result.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(RELATED_TASK_META.to_owned(), json!({ "taskId": task.id }));
        }
    }
    Some(Ok(result))
}

/// A kept JSON-RPC error object as the error it was.
fn error_data(error: &Map<String, Value>) -> ErrorData {
    serde_json::from_value(Value::Object(error.clone())).unwrap_or_else(|_| {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("the task failed").to_owned();
        ErrorData::internal_error(message, None)
    })
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientCapabilities, Implementation, ServerCapabilities};

    use super::*;

    fn initialize(version: ProtocolVersion, capabilities: ClientCapabilities) -> InitializeRequestParams {
        InitializeRequestParams::new(capabilities, Implementation::new("client", "1")).with_protocol_version(version)
    }

    #[test]
    fn a_client_of_2025_11_25_without_the_extension_speaks_this_form() {
        let plain = ClientCapabilities::default();
        let extension = ClientCapabilities::builder().enable_tasks().build();
        assert!(spoken_by(&initialize(ProtocolVersion::V_2025_11_25, plain.clone())));
        assert!(!spoken_by(&initialize(ProtocolVersion::V_2025_11_25, extension)));
        assert!(!spoken_by(&initialize(ProtocolVersion::V_2025_06_18, plain)));
    }

    #[test]
    fn only_this_forms_methods_are_served_under_other_names() {
        assert_eq!(served_as(br#""tasks/get""#, || false), Some(GET));
        assert_eq!(served_as(br#""tools/call""#, || true), Some(CALL));
        assert_eq!(served_as(br#""tools/call""#, || false), None, "a plain call stays a plain call");
        assert_eq!(served_as(br#""tasks/update""#, || true), None);
        assert_eq!(served_as(br#""tasks\/get""#, || true), None);
        assert_eq!(served_as(b"tasks/get", || true), None);
        assert_eq!(served_as(br#""""#, || true), None);
    }

    #[test]
    fn the_initialize_result_says_tasks_in_capabilities_instead_of_extensions() {
        let mut capabilities = ServerCapabilities::builder().enable_tools().build();
        capabilities.extensions = Some([(TASKS_EXTENSION_ID.to_owned(), Map::new())].into());
        let result = InitializeResult::new(capabilities);
        let ServerResult::CustomResult(shown) = initialize_result(&result) else { panic!("not rewritten") };
        let capabilities = &shown.0["capabilities"];
        assert_eq!(capabilities["tasks"]["requests"]["tools"]["call"], json!({}));
        assert_eq!(capabilities["tasks"]["list"], json!({}));
        assert!(capabilities.get("extensions").is_none(), "{capabilities}");
        assert!(capabilities.get("tools").is_some());
        // A server that runs no task says nothing of tasks.
        let plain = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        let ServerResult::CustomResult(shown) = initialize_result(&plain) else { panic!("not rewritten") };
        assert!(shown.0["capabilities"].get("tasks").is_none());
    }

    #[test]
    fn a_tool_error_is_a_failed_task_whose_message_is_the_envelope() {
        let mut kept = StoredTask::working("t1", "ana", "billing.export_invoices", 0);
        kept.ttl_ms = 60_000;
        kept.poll_interval_ms = 1_000;
        let shown = task(&kept);
        assert_eq!(shown["status"], "working");
        assert_eq!(shown["statusMessage"], "billing.export_invoices is running.");
        assert_eq!((shown["ttl"].as_u64(), shown["pollInterval"].as_u64()), (Some(60_000), Some(1_000)));
        assert_eq!(shown["createdAt"], "1970-01-01T00:00:00.000Z");
        assert!(result(&kept, || json!({})).is_none(), "no result while it works");
        let envelope =
            json!({ "content": [{ "type": "text", "text": "<tool_error code=\"NOT_FOUND\"/>" }], "isError": true });
        kept.state = TaskState::Completed { result: envelope.as_object().cloned().unwrap() };
        let shown = task(&kept);
        assert_eq!(shown["status"], "failed");
        assert_eq!(shown["statusMessage"], "<tool_error code=\"NOT_FOUND\"/>");
        let answered = result(&kept, || json!({})).unwrap().unwrap();
        assert_eq!(answered["isError"], true);
        assert_eq!(answered["_meta"][RELATED_TASK_META]["taskId"], "t1");
        kept.state =
            TaskState::Failed { error: json!({ "code": -32603, "message": "lost" }).as_object().cloned().unwrap() };
        let error = result(&kept, || json!({})).unwrap().unwrap_err();
        assert_eq!((error.code.0, error.message.as_ref()), (-32603, "lost"));
        kept.state = TaskState::Cancelled;
        let answered = result(&kept, || json!({ "content": [], "isError": true })).unwrap().unwrap();
        assert_eq!(answered["isError"], true);
        assert_eq!(task(&kept)["status"], "cancelled");
    }
}
