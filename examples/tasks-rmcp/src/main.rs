//! `tasks-rmcp [--file PATH]`: the task-file server written on rmcp alone, the way its own
//! examples write one — the original that `examples/tasks` ports to mcp-fusion. It serves the
//! same seven tools, names and hints, over stdio, and is what the port's weight is measured
//! against (`crates/bench/weight/run.sh`).

#[path = "../../tasks/src/store.rs"]
mod store;

use std::sync::Arc;

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use store::{Changes, Priority, Store, StoreError, Task, TaskList};

#[derive(Deserialize, JsonSchema)]
struct CreateTask {
    /// What is to be done.
    title: String,
    /// Free notes.
    notes: Option<String>,
    /// How urgent it is (default normal).
    priority: Option<Priority>,
    /// When it is due, `YYYY-MM-DD`.
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
    id: u64,
}

#[derive(Deserialize, JsonSchema)]
struct UpdateTask {
    /// The task's id.
    id: u64,
    /// A new title.
    title: Option<String>,
    /// New notes.
    notes: Option<String>,
    /// A new priority.
    priority: Option<Priority>,
    /// A new due date, `YYYY-MM-DD`.
    due: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct SearchTasks {
    /// Words to find in titles and notes.
    query: String,
    /// At most this many tasks (default 20).
    limit: Option<usize>,
}

#[derive(Clone)]
struct Tasks {
    store: Arc<Store>,
}

fn failed(error: StoreError) -> ErrorData {
    match error {
        StoreError::NotFound(_) | StoreError::BadDue(_) | StoreError::EmptyTitle => {
            ErrorData::invalid_params(error.to_string(), None)
        }
        StoreError::Io { .. } | StoreError::Corrupt { .. } => ErrorData::internal_error(error.to_string(), None),
    }
}

#[tool_router]
impl Tasks {
    fn new(store: Store) -> Tasks {
        Tasks { store: Arc::new(store) }
    }

    #[tool(
        description = "Create a task.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn create_task(&self, Parameters(input): Parameters<CreateTask>) -> Result<Json<Task>, ErrorData> {
        self.store.create(&input.title, input.notes, input.priority, input.due).map(Json).map_err(failed)
    }

    #[tool(
        description = "List the open tasks, or every task.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_tasks(&self, Parameters(input): Parameters<ListTasks>) -> Result<Json<TaskList>, ErrorData> {
        self.store.list(input.include_done, input.priority).map(Json).map_err(failed)
    }

    #[tool(
        description = "Read one task by id.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_task(&self, Parameters(input): Parameters<TaskId>) -> Result<Json<Task>, ErrorData> {
        self.store.get(input.id).map(Json).map_err(failed)
    }

    #[tool(
        description = "Change a task's title, notes, priority or due date.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn update_task(&self, Parameters(input): Parameters<UpdateTask>) -> Result<Json<Task>, ErrorData> {
        let changes = Changes { title: input.title, notes: input.notes, priority: input.priority, due: input.due };
        self.store.update(input.id, changes).map(Json).map_err(failed)
    }

    #[tool(
        description = "Mark a task done.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn complete_task(&self, Parameters(input): Parameters<TaskId>) -> Result<Json<Task>, ErrorData> {
        self.store.complete(input.id).map(Json).map_err(failed)
    }

    #[tool(
        description = "Delete a task for good.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_task(&self, Parameters(input): Parameters<TaskId>) -> Result<Json<Task>, ErrorData> {
        self.store.delete(input.id).map(Json).map_err(failed)
    }

    #[tool(
        description = "Find tasks whose title or notes hold the words.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn search_tasks(&self, Parameters(input): Parameters<SearchTasks>) -> Result<Json<TaskList>, ErrorData> {
        self.store.search(&input.query, input.limit.unwrap_or(20)).map(Json).map_err(failed)
    }
}

#[tool_handler]
impl ServerHandler for Tasks {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let file = match (args.next().as_deref(), args.next()) {
        (None, _) => "tasks.json".to_owned(),
        (Some("--file"), Some(file)) => file,
        _ => return Err("usage: tasks-rmcp [--file PATH]".into()),
    };
    let server = Tasks::new(Store::open(file)).serve(rmcp::transport::stdio()).await?;
    server.waiting().await?;
    Ok(())
}
