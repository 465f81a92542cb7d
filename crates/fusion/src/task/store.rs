//! Where tasks live between the call that starts one and the polls that read it: the store's
//! contract, and the record it keeps.

use futures_util::future::BoxFuture;
use rmcp::model::JsonObject;
use serde::{Deserialize, Serialize};

pub use crate::guard::StoreError;

/// One task as a store keeps it. Times are milliseconds since the Unix epoch, so that replicas
/// sharing a store agree on them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredTask {
    /// The task's id: random, unguessable, and the only handle a client has on it.
    pub id: String,
    /// Who started it (the caller key: a verified identity, else the session, else the
    /// client's address); only they may read or cancel it.
    pub owner: String,
    /// The qualified action it runs (`billing.export_invoices`).
    pub action: String,
    /// Whether the action only reads: running it again after a lost task is safe.
    pub read_only: bool,
    /// When it was created.
    pub created_at_ms: u64,
    /// When its state last changed.
    pub updated_at_ms: u64,
    /// How long after its creation it is kept.
    pub ttl_ms: u64,
    /// How often a client should poll it.
    pub poll_interval_ms: u64,
    /// Until when the replica running it vouches that it runs; a working task whose lease
    /// lapsed was lost with its replica.
    pub lease_until_ms: u64,
    /// Whether a client asked it to stop.
    pub cancel_requested: bool,
    /// Where it stands.
    pub state: TaskState,
    /// The questions its work asked the client and waits on, by key (each an `InputRequest`
    /// as JSON): a working task with any reads as `input_required`.
    #[serde(default)]
    pub asked: JsonObject,
    /// The answers a client gave (`tasks/update`) that its work has not taken yet, by key.
    #[serde(default)]
    pub answers: JsonObject,
}

impl StoredTask {
    /// A working task of `owner` running `action`, created at `now_ms`.
    pub fn working(
        id: impl Into<String>,
        owner: impl Into<String>,
        action: impl Into<String>,
        now_ms: u64,
    ) -> StoredTask {
        StoredTask {
            id: id.into(),
            owner: owner.into(),
            action: action.into(),
            read_only: false,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            ttl_ms: 0,
            poll_interval_ms: 0,
            lease_until_ms: now_ms,
            cancel_requested: false,
            state: TaskState::Working,
            asked: JsonObject::new(),
            answers: JsonObject::new(),
        }
    }

    /// What the server says of where it stands (`billing.export_invoices is running.`).
    pub(crate) fn status_message(&self) -> Option<String> {
        match &self.state {
            TaskState::Working if self.cancel_requested => Some(format!("{} was asked to stop.", self.action)),
            TaskState::Working if !self.asked.is_empty() => {
                let keys: Vec<&str> = self.asked.keys().map(String::as_str).collect();
                Some(format!(
                    "{} waits for its client's answer to {}: send it with tasks/update.",
                    self.action,
                    keys.join(", ")
                ))
            }
            TaskState::Working => Some(format!("{} is running.", self.action)),
            TaskState::Completed { .. } => None,
            TaskState::Failed { error } => error.get("message").and_then(serde_json::Value::as_str).map(str::to_owned),
            TaskState::Cancelled => Some(format!("{} was cancelled by its client before it finished.", self.action)),
        }
    }

    /// Whether it is kept no longer at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        now_ms >= self.created_at_ms.saturating_add(self.ttl_ms)
    }
}

/// Where a task stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskState {
    /// It runs.
    Working,
    /// It ended with a result: the tool result the call would have returned, an envelope
    /// (`isError: true`) included.
    Completed {
        /// The `CallToolResult`, as JSON.
        result: JsonObject,
    },
    /// It ended with a JSON-RPC error: the handler's own (an `rmcp::ErrorData`), or the
    /// framework's when its replica was lost.
    Failed {
        /// The JSON-RPC error object.
        error: JsonObject,
    },
    /// It stopped because its client asked.
    Cancelled,
}

impl TaskState {
    /// Whether the task ended.
    pub fn is_terminal(&self) -> bool {
        !matches!(self, TaskState::Working)
    }
}

/// What [`TaskStore::renew`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Renewal {
    /// The task still works, its lease extended; whether a client asked it to stop.
    Working {
        /// A client asked it to stop.
        cancel_requested: bool,
    },
    /// The task ended (or was declared lost) meanwhile: its work should stop.
    Ended,
    /// No such task (it expired).
    Unknown,
}

/// When [`TaskStore::finish`] ends a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FinishIf {
    /// The task still works: its replica finishing it.
    Working,
    /// The task still works and its lease lapsed before the time given: a reader declaring it
    /// lost with its replica.
    LeaseLapsed,
}

/// Where tasks live. Every operation is atomic: a task finished by its replica and declared
/// lost by a reader at once ends one way only.
///
/// A store shared by replicas (Redis) lets a task started through one be read, cancelled and
/// its result fetched through another. A store drops a task once its time to live passed.
pub trait TaskStore: Send + Sync + 'static {
    /// Keeps a new task. When this returns, [`get`](TaskStore::get) finds it from every
    /// replica sharing the store: a client is told of a task only once it can read it.
    fn create(&self, task: StoredTask) -> BoxFuture<'static, Result<(), StoreError>>;

    /// The task `id`, if it is kept and has not expired.
    fn get(&self, id: &str) -> BoxFuture<'static, Result<Option<StoredTask>, StoreError>>;

    /// Extends the lease of the working task `id` to `until_ms`.
    fn renew(&self, id: &str, until_ms: u64) -> BoxFuture<'static, Result<Renewal, StoreError>>;

    /// Ends the task `id` with `state` at `now_ms`, if `condition` holds; whether it did.
    fn finish(
        &self,
        id: &str,
        state: TaskState,
        now_ms: u64,
        condition: FinishIf,
    ) -> BoxFuture<'static, Result<bool, StoreError>>;

    /// Asks the working task `id` to stop (its replica sees it when it renews the lease);
    /// whether it was working.
    fn request_cancel(&self, id: &str) -> BoxFuture<'static, Result<bool, StoreError>>;

    /// Adds `questions` (key to `InputRequest` as JSON) to those the working task `id` waits
    /// on; whether it was working.
    ///
    /// The default keeps none (an error): a task of a store without questions cannot ask its
    /// client anything, and its handler is told so.
    fn ask(&self, id: &str, questions: JsonObject, now_ms: u64) -> BoxFuture<'static, Result<bool, StoreError>> {
        let _ = (id, questions, now_ms);
        Box::pin(std::future::ready(Err(StoreError("this task store keeps no questions".to_owned()))))
    }

    /// Takes a client's `responses` (`tasks/update`) to the questions the working task `id`
    /// waits on: each answered question leaves `asked` and its answer joins `answers`; a
    /// response to no such question is ignored. Whether any was taken.
    fn answer(&self, id: &str, responses: JsonObject, now_ms: u64) -> BoxFuture<'static, Result<bool, StoreError>> {
        let _ = (id, responses, now_ms);
        Box::pin(std::future::ready(Ok(false)))
    }

    /// The answers of the task `id` that its work has not taken yet, taken now (each once).
    fn take_answers(&self, id: &str) -> BoxFuture<'static, Result<JsonObject, StoreError>> {
        let _ = id;
        Box::pin(std::future::ready(Ok(JsonObject::new())))
    }

    /// The tasks of `owner` that are kept, oldest first (by creation, then id), from just
    /// after `after`; at most `limit` of them.
    fn list(
        &self,
        owner: &str,
        after: Option<TaskCursor>,
        limit: usize,
    ) -> BoxFuture<'static, Result<TaskPage, StoreError>>;
}

/// Where a page of [`TaskStore::list`] ended: the creation time and id of its last task. The
/// order does not depend on any task still being kept, so a page after a task that expired
/// meanwhile is still the right one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TaskCursor {
    /// When the last task of the page was created.
    pub created_at_ms: u64,
    /// Its id.
    pub id: String,
}

impl TaskCursor {
    /// The place of `task` in a listing.
    pub fn of(task: &StoredTask) -> TaskCursor {
        TaskCursor { created_at_ms: task.created_at_ms, id: task.id.clone() }
    }

    /// The cursor as a client sees it (`1733300000000.4f2c…`): opaque to it, sent back as is.
    pub fn encode(&self) -> String {
        format!("{}.{}", self.created_at_ms, self.id)
    }

    /// A cursor [`encode`](TaskCursor::encode) wrote; `None` for anything else.
    pub fn decode(text: &str) -> Option<TaskCursor> {
        let (created, id) = text.split_once('.')?;
        let valid_id = !id.is_empty() && id.len() <= 64 && id.bytes().all(|byte| byte.is_ascii_alphanumeric());
        let created_at_ms = created.parse().ok().filter(|_| created.bytes().all(|byte| byte.is_ascii_digit()))?;
        valid_id.then(|| TaskCursor { created_at_ms, id: id.to_owned() })
    }
}

/// One page of [`TaskStore::list`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct TaskPage {
    /// The tasks, oldest first.
    pub tasks: Vec<StoredTask>,
    /// Where the next page starts, when there may be more.
    pub next: Option<TaskCursor>,
}

impl TaskPage {
    /// A page of `tasks`, followed by the page after `next` (when there may be more).
    pub fn new(tasks: Vec<StoredTask>, next: Option<TaskCursor>) -> TaskPage {
        TaskPage { tasks, next }
    }
}

/// A time as milliseconds since the Unix epoch, as stores keep it.
pub(crate) fn now_ms() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}
