//! The fixtures of the suite's tasks scenarios (the tasks extension,
//! `io.modelcontextprotocol/tasks`, SEP-2663): tools that stand alone under the names the
//! scenarios call, each a task or a plain call as the scenario needs it.

use std::time::Duration;

use mcp_fusion::task::TaskSupport;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, Elicited, ServerBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::NoArgs;

/// The longest `slow_compute` works: the suite asks for at most a minute (and cancels that one).
pub const MAX_SECONDS: u64 = 120;

/// The message of `failing_job`'s tool error.
pub const FAILING_JOB_MESSAGE: &str = "failing_job always fails: this is the error the task's result carries.";

/// The message of `protocol_error_job`'s JSON-RPC error.
pub const PROTOCOL_ERROR_MESSAGE: &str = "protocol_error_job always ends with this JSON-RPC error.";

/// Whom `greet` greets.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Greet {
    /// The name to greet.
    pub name: String,
}

/// `greet`: a plain call, never a task (`Hello, {name}!`).
async fn greet(_ctx: Ctx<()>, input: Greet) -> Result<String, ToolError> {
    Ok(format!("Hello, {}!", input.name))
}

/// How long `slow_compute` works, and what it calls the work.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SlowCompute {
    /// Seconds to work before answering (0 answers at once).
    #[schemars(range(max = 120))]
    pub seconds: u64,
    /// A label the answer repeats.
    #[serde(default)]
    pub label: Option<String>,
}

/// `slow_compute`: works `seconds`, then answers; stopped by `tasks/cancel` (the call's token).
async fn slow_compute(ctx: Ctx<()>, input: SlowCompute) -> Result<String, ToolError> {
    let seconds = input.seconds.min(MAX_SECONDS);
    let label = input.label.unwrap_or_else(|| "work".to_owned());
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(seconds)) => Ok(format!("{label}: computed in {seconds} s")),
        () = ctx.call().cancellation().cancelled() => Err(ToolError::internal(format!("{label}: stopped"))),
    }
}

/// `failing_job`: a task whose handler fails after a second, with a tool error (a task that
/// ends `completed` with `isError: true`, not `failed`).
async fn failing_job(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(1)) => {}
        () = ctx.call().cancellation().cancelled() => {}
    }
    Err(ToolError::new("JOB_FAILED", FAILING_JOB_MESSAGE).suggest("Nothing to change: this job always fails."))
}

/// `protocol_error_job`: a task whose handler ends with a JSON-RPC error, not a tool error (a
/// task that ends `failed`, the error inlined).
async fn protocol_error_job(_ctx: Ctx<()>, _input: NoArgs) -> Result<String, rmcp::ErrorData> {
    Err(rmcp::ErrorData::internal_error(PROTOCOL_ERROR_MESSAGE, None))
}

/// The file `confirm_delete` deletes.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteFile {
    /// The file to delete.
    pub filename: String,
}

/// A user's word on a deletion.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Confirm {
    /// Whether to go ahead.
    pub confirm: bool,
}

/// One entry of `multi_input`'s two questions.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Entry {
    /// A name for the entry.
    pub name: String,
    /// Whether to keep it.
    pub confirm: bool,
}

/// `confirm_delete`: a task that asks its user once (`input_required` until `tasks/update`
/// answers), then ends.
async fn confirm_delete(ctx: Ctx<()>, input: DeleteFile) -> Result<String, ToolError> {
    let question = format!("Delete {}?", input.filename);
    match ctx.elicit::<Confirm>(question).key("confirm_delete").await? {
        Elicited::Accepted(answer) if answer.confirm => Ok(format!("Deleted {}.", input.filename)),
        Elicited::Accepted(_) => Ok(format!("Kept {}.", input.filename)),
        other => Err(other.refusal(ctx.action())),
    }
}

/// `multi_input`: a task that asks two questions at once, each answered on its own.
async fn multi_input(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let (first, second) = tokio::join!(
        ctx.elicit::<Entry>("First entry").key("first"),
        ctx.elicit::<Entry>("Second entry").key("second")
    );
    let names = [first?, second?].map(|answer| match answer {
        Elicited::Accepted(entry) => entry.name,
        _ => "(none)".to_owned(),
    });
    Ok(format!("Entries: {}", names.join(", ")))
}

/// Whom `test_tool_with_task` works for.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UserName {
    /// Your name.
    pub name: String,
}

/// `test_tool_with_task`: asks the user's name in the call (an input-required round), then
/// becomes a task whose result greets them.
async fn tool_with_task(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let name = match ctx.elicit::<UserName>("What is your name?").key("user_name").await? {
        Elicited::Accepted(user) => user.name,
        other => return Err(other.refusal(ctx.action())),
    };
    ctx.become_task().await?;
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(200)) => Ok(format!("Hello, {name}! Your task is done.")),
        () = ctx.call().cancellation().cancelled() => Err(ToolError::internal(format!("{name}'s task was stopped."))),
    }
}

/// The tasks scenarios' tools, added to `builder` as tools of their own names.
pub fn tools(builder: ServerBuilder<()>) -> ServerBuilder<()> {
    builder
        .action(
            Action::new("greet", "Says hello to a name; never a task (conformance scenarios tasks-*).")
                .read_only()
                .handler(greet),
        )
        .action(
            Action::new(
                "slow_compute",
                "Works the given seconds, then answers; a task for a client that declared the tasks extension.",
            )
            .read_only()
            .task(TaskSupport::Optional)
            .handler(slow_compute),
        )
        .action(
            Action::new("failing_job", "Always fails after a second, with a tool error; runs only as a task.")
                .read_only()
                .task(TaskSupport::Required)
                .handler(failing_job),
        )
        .action(
            Action::new("test_tool_with_task", "Asks your name, then works on it as a task.")
                .read_only()
                .task(TaskSupport::Required)
                .questions_before_task()
                .handler(tool_with_task),
        )
        .action(
            Action::new(
                "confirm_delete",
                "Deletes a file once its user confirms; asks as a task, answered by tasks/update.",
            )
            .destructive()
            .task(TaskSupport::Optional)
            .handler(confirm_delete),
        )
        .action(
            Action::new("multi_input", "Asks two questions at once; as a task, each answered on its own.")
                .read_only()
                .task(TaskSupport::Optional)
                .handler(multi_input),
        )
        .action(
            Action::new(
                "protocol_error_job",
                "Always ends with a JSON-RPC error; a task for a client that declared tasks.",
            )
            .read_only()
            .task(TaskSupport::Optional)
            .handler(protocol_error_job),
        )
}
