//! The task-file server on mcp-fusion: a port of `examples/tasks-rmcp`, the same seven tools
//! under the same names and hints, each an action that stands alone. What changed for the
//! model: a wrong argument, an unknown id or a bad date comes back as an envelope that names
//! the field and the next call, and each success leads with one line it can read.

pub mod store;

use std::sync::Arc;

use mcp_fusion::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use store::{Changes, Priority, Store, StoreError, Task, TaskList};

/// What every handler reaches: the task file.
pub type Ctx = mcp_fusion::Ctx<Arc<Store>>;

#[derive(Deserialize, JsonSchema)]
struct CreateTask {
    /// What is to be done.
    #[schemars(length(min = 1))]
    title: String,
    /// Free notes.
    notes: Option<String>,
    /// How urgent it is (default normal).
    priority: Option<Priority>,
    /// When it is due, `YYYY-MM-DD`.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    due: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct ListTasks {
    /// Include the tasks already done.
    #[serde(default)]
    include_done: bool,
    /// Only the tasks of this priority.
    priority: Option<Priority>,
}

#[derive(Deserialize, JsonSchema)]
struct TaskId {
    /// The task's id.
    #[schemars(range(min = 1))]
    id: u64,
}

#[derive(Deserialize, JsonSchema)]
struct UpdateTask {
    /// The task's id.
    #[schemars(range(min = 1))]
    id: u64,
    /// A new title.
    #[schemars(length(min = 1))]
    title: Option<String>,
    /// New notes.
    notes: Option<String>,
    /// A new priority.
    priority: Option<Priority>,
    /// A new due date, `YYYY-MM-DD`.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    due: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct SearchTasks {
    /// Words to find in titles and notes.
    #[schemars(length(min = 1))]
    query: String,
    /// At most this many tasks (default 20).
    #[schemars(range(min = 1, max = 100))]
    limit: Option<usize>,
}

/// The store's refusal as the model reads it: what was wrong, and the call that fixes it.
fn failed(ctx: &Ctx, error: StoreError) -> ToolError {
    match error {
        StoreError::NotFound(id) => {
            let list = ctx.action_name(list_tasks);
            let search = ctx.action_name(search_tasks);
            ToolError::not_found(format!("No task has id {id}."))
                .suggest(format!("Call {list} (or {search} with words of its title) for the ids, then call again."))
                .actions([list, search])
        }
        StoreError::BadDue(due) => ToolError::validation(format!("The due date {due:?} is not a calendar date."))
            .suggest("Send due as YYYY-MM-DD with a month 01-12 and a day 01-31, like 2026-12-31."),
        StoreError::EmptyTitle => {
            ToolError::validation("The title is empty.").suggest("Send a title with words in it.")
        }
        other => ToolError::internal(other.to_string()),
    }
}

fn summary(verb: &str, task: Task) -> Structured<Task> {
    Structured::new(format!("{verb} task {}: {}", task.id, task.title), task)
}

fn listed(list: TaskList) -> Structured<TaskList> {
    let ids: Vec<String> = list.tasks.iter().map(|task| task.id.to_string()).collect();
    let text = match ids.len() {
        0 => "No tasks.".to_owned(),
        n => format!("{n} task{}: {}.", if n == 1 { "" } else { "s" }, ids.join(", ")),
    };
    Structured::new(text, list)
}

/// Create a task.
#[action(additive, open_world = false)]
async fn create_task(ctx: Ctx, input: CreateTask) -> Result<Structured<Task>, ToolError> {
    let created = ctx.state().create(&input.title, input.notes, input.priority, input.due);
    created.map(|task| summary("Created", task)).map_err(|error| failed(&ctx, error))
}

/// List the open tasks, or every task.
#[action(read_only, open_world = false)]
async fn list_tasks(ctx: Ctx, input: ListTasks) -> Result<Structured<TaskList>, ToolError> {
    ctx.state().list(input.include_done, input.priority).map(listed).map_err(|error| failed(&ctx, error))
}

/// Read one task by id.
#[action(read_only, open_world = false)]
async fn get_task(ctx: Ctx, input: TaskId) -> Result<Structured<Task>, ToolError> {
    ctx.state().get(input.id).map(|task| summary("Read", task)).map_err(|error| failed(&ctx, error))
}

/// Change a task's title, notes, priority or due date.
#[action(additive, idempotent, open_world = false)]
async fn update_task(ctx: Ctx, input: UpdateTask) -> Result<Structured<Task>, ToolError> {
    let changes = Changes { title: input.title, notes: input.notes, priority: input.priority, due: input.due };
    ctx.state().update(input.id, changes).map(|task| summary("Updated", task)).map_err(|error| failed(&ctx, error))
}

/// Mark a task done.
#[action(additive, idempotent, open_world = false)]
async fn complete_task(ctx: Ctx, input: TaskId) -> Result<Structured<Task>, ToolError> {
    ctx.state().complete(input.id).map(|task| summary("Completed", task)).map_err(|error| failed(&ctx, error))
}

/// Delete a task for good.
#[action(destructive, idempotent, open_world = false)]
async fn delete_task(ctx: Ctx, input: TaskId) -> Result<Structured<Task>, ToolError> {
    ctx.state().delete(input.id).map(|task| summary("Deleted", task)).map_err(|error| failed(&ctx, error))
}

/// Find tasks whose title or notes hold the words.
#[action(read_only, open_world = false)]
async fn search_tasks(ctx: Ctx, input: SearchTasks) -> Result<Structured<TaskList>, ToolError> {
    ctx.state().search(&input.query, input.limit.unwrap_or(20)).map(listed).map_err(|error| failed(&ctx, error))
}

/// The server: each tool an action of its own name, as the rmcp original lists them.
pub fn server(store: Store) -> Result<FusionServer, BuildError> {
    FusionServer::builder("tasks", env!("CARGO_PKG_VERSION"))
        .action(create_task())
        .action(list_tasks())
        .action(get_task())
        .action(update_task())
        .action(complete_task())
        .action(delete_task())
        .action(search_tasks())
        .build(Arc::new(store))
}
